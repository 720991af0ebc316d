-- MON.SLIDECHECK key increment window threshold [threshold ...] [BUCKETS n] [ALERT stream [MAXLEN n]]
-- The module keeps a window in its own type (guard-win); the scripts keep
-- it in a hash (docs/clients.md, "Managed services"):
--   window     its length in seconds        buckets   how many it is cut into
--   b:<bucket> the sum of the adds made in bucket floor(ms / (window * 1000 / buckets))
--   r:<t>      the ms threshold t was last reported at
-- and the key expires `window` after its last add, as the module's does.
--
-- The common call first, above the prelude (a call that returns here
-- makes of its functions only quick_mon_args), in Lua numbers: no
-- options, the window of at most 9 digits, the increment and thresholds
-- of at most 15, the thresholds increasing, at the key nothing or a
-- window of this shape whose sums, reports and thresholds reported have
-- at most 15 digits, and the window's sum below 4 * 10^15 (every partial
-- sum exact); anything else goes the exact way below, which has written
-- nothing.
local n = #ARGV
if #KEYS == 1 and quick_mon_args(1, n, 9) then
  local fast = true
  local window_ms, buckets = ARGV[2] * 1000, 60
  while window_ms % buckets ~= 0 do buckets = buckets - 1 end
  -- TYPE never fails, where HGETALL on another type would count an error.
  local kind = redis.call('TYPE', KEYS[1])['ok']
  local held, reports, reported = {}, {}, 0
  if kind == 'hash' then
    local flat, window, cut = redis.call('HGETALL', KEYS[1]), nil, nil
    local function canonical(text) return #text <= 15 and text:find('^[1-9]%d*$') ~= nil end
    for i = 1, #flat, 2 do
      local field, value = flat[i], flat[i + 1]
      local tag, rest = field:sub(1, 2), field:sub(3)
      if tag == 'b:' and canonical(value) and #rest <= 15 and rest:find('^%d+$') then
        held[#held + 1] = {number = tonumber(rest), field = field, sum = tonumber(value)}
      elseif tag == 'r:' and canonical(rest) and canonical(value) then
        reports[rest], reported = tonumber(value), reported + 1
      elseif field == 'window' then window = value
      elseif field == 'buckets' then cut = value
      else fast = false
      end
    end
    fast = fast and window == ARGV[2] and cut == tostring(buckets)
  elseif kind ~= 'none' then
    fast = false
  end
  local now, bucket, oldest_live, prev, current
  if fast then
    local time = redis.call('TIME')
    now = time[1] * 1000 + math.floor(time[2] / 1000)
    local span = window_ms / buckets
    bucket = math.floor(now / span)
    local r = now - bucket * span
    if r < 0 then bucket = bucket - 1 elseif r >= span then bucket = bucket + 1 end
    -- An add counts while its bucket is less than `buckets` behind now's.
    oldest_live = bucket - buckets + 1
    prev = 0
    for k = 1, #held do
      local b = held[k]
      if b.number >= oldest_live then prev = prev + b.sum end
    end
    current = prev + ARGV[1]
    fast = current < 4e15
  end
  if fast then
    -- The highest threshold crossed that was not reported within a window.
    local level = 0
    for i = 3, n do
      local t, at = tonumber(ARGV[i]), reports[ARGV[i]]
      if prev < t and t <= current and not (at and now - at < window_ms) then level = i - 2 end
    end
    -- The add goes into now's bucket, with the buckets after it folded
    -- in; the buckets that aged out go.
    local sum, gone = tonumber(ARGV[1]), {}
    for k = 1, #held do
      local b = held[k]
      if b.number >= bucket then sum = sum + b.sum end
      if b.number > bucket or b.number < oldest_live then gone[#gone + 1] = b.field end
    end
    if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
    local set = {'HSET', KEYS[1], string.format('b:%d', bucket), string.format('%d', sum)}
    if kind == 'none' then
      set[5], set[6], set[7], set[8] = 'window', ARGV[2], 'buckets', tostring(buckets)
    end
    if level > 0 then
      local threshold = ARGV[level + 2]
      if not reports[threshold] then reported = reported + 1 end
      reports[threshold] = now
      -- At most 32 reports: the oldest goes (the smaller threshold on a tie).
      local oldest
      for t, at in pairs(reports) do
        if oldest == nil or at < reports[oldest] or (at == reports[oldest] and tonumber(t) < tonumber(oldest)) then
          oldest = t
        end
      end
      if reported <= 32 or oldest ~= threshold then
        set[#set + 1] = 'r:' .. threshold
        set[#set + 1] = string.format('%d', now)
      end
      if reported > 32 and oldest ~= threshold then redis.call('HDEL', KEYS[1], 'r:' .. oldest) end
    end
    redis.call(unpack(set))
    redis.call('PEXPIREAT', KEYS[1], string.format('%d', now + window_ms))
    return {current, level}
  end
end
-- @prelude
local now, increment, expires_at, e = mon_head('mon.slidecheck')
if e then return e end
local window, window_ms = ARGV[2], int_mul(ARGV[2], '1000')
-- The default cut: the largest n <= 60 that divides the window in ms.
local buckets = 60
while mag_mod_small(window_ms, buckets) ~= 0 do buckets = buckets - 1 end
buckets = tostring(buckets)
local thresholds, alert
thresholds, alert, _, e = mon_tail(3, {'BUCKETS'}, function(_, value)
  local n, bad = positive_arg(value, 'buckets')
  if bad then return bad end
  if int_cmp(n, '3600') > 0 then return err('ERR buckets must be at most 3600') end
  if mag_mod_small(window_ms, tonumber(n)) ~= 0 then
    return err('ERR buckets must cut the window into whole milliseconds')
  end
  buckets = n
end)
if e then return e end
e = alert_check(alert)
if e then return e end

-- The window as stored: its buckets (number -> {field, sum}) and reports
-- (threshold -> ms).
local held, reports = {}, {}
local kind = type_of(KEYS[1])
if kind == 'hash' then
  local shape = {}
  local flat = redis.call('HGETALL', KEYS[1])
  for i = 1, #flat, 2 do
    local field, value = flat[i], flat[i + 1]
    local tag, rest = field:sub(1, 2), field:sub(3)
    if tag == 'b:' then
      held[#held + 1] = {number = tonumber(rest), field = field, sum = value}
    elseif tag == 'r:' then
      reports[rest] = value
    else
      shape[field] = value
    end
  end
  -- A hash of another layout is another type.
  if shape.window == nil or shape.buckets == nil then return err(WRONGTYPE) end
  if shape.window ~= window then
    return err("ERR window does not match the key's (" .. shape.window .. ' s): DEL the key to change its shape')
  end
  if shape.buckets ~= buckets then
    return err("ERR buckets does not match the key's (" .. shape.buckets .. '): DEL the key to change its shape')
  end
elseif kind ~= 'none' then
  return err(WRONGTYPE)
end

-- An add at `now` counts while its bucket is less than `buckets` behind
-- now's; buckets after now's (the clock stepped back) count too.
local bucket = int_floordiv(now, int_floordiv(window_ms, buckets))
local newest, oldest_live = tonumber(bucket), tonumber(bucket) - tonumber(buckets) + 1
local prev = '0'
for _, b in ipairs(held) do
  if b.number >= oldest_live then prev = int_add(prev, b.sum) end
end
local current = int_add(prev, increment)
if not int_fits(current) then return err(OVERFLOW) end
-- The highest threshold crossed that was not reported within a window.
local level = 0
for i, t in ipairs(thresholds) do
  local at = reports[t]
  local lately = at ~= nil and int_cmp(int_sub(now, at), window_ms) < 0
  if int_cmp(prev, t) < 0 and int_cmp(t, current) <= 0 and not lately then level = i end
end
if level > 0 then
  e = alert_append(alert, {'key', KEYS[1], 'level', level, 'threshold', thresholds[level], 'current', current})
  if e then return e end
end

-- The add goes into now's bucket, with the buckets after it folded in;
-- the buckets that aged out go.
local sum, gone = increment, {}
for _, b in ipairs(held) do
  if b.number >= newest then
    sum = int_add(sum, b.sum)
  end
  if b.number > newest or b.number < oldest_live then gone[#gone + 1] = b.field end
end
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
local set = {'HSET', KEYS[1], 'b:' .. bucket, sum}
if kind == 'none' then
  for _, f in ipairs({'window', window, 'buckets', buckets}) do set[#set + 1] = f end
end
if level > 0 then
  local threshold = thresholds[level]
  set[#set + 1] = 'r:' .. threshold
  set[#set + 1] = now
  -- At most 32 reports: the oldest goes (the smaller threshold on a tie).
  reports[threshold] = now
  local count, oldest = 0, nil
  for t, at in pairs(reports) do
    count = count + 1
    if oldest == nil then
      oldest = t
    else
      local c = int_cmp(at, reports[oldest])
      if c < 0 or (c == 0 and int_cmp(t, oldest) < 0) then oldest = t end
    end
  end
  if count > 32 then
    if oldest == threshold then
      set[#set] = nil
      set[#set] = nil
    else
      redis.call('HDEL', KEYS[1], 'r:' .. oldest)
    end
  end
end
redis.call(unpack(set))
redis.call('PEXPIREAT', KEYS[1], expires_at)
return {reply_int(current), level}
