-- MON.INCRCHECK key increment window threshold [threshold ...] [TZ zone] [ALERT stream [MAXLEN n]]
-- The common call first, above the prelude (a call that returns here
-- makes of its functions only quick_mon_args): no options but `ALERT`
-- and `MAXLEN n` so spelt, the increment and thresholds of at most 15
-- digits, the window of at most 12 (every sum below 2^53, exact in Lua
-- numbers), the thresholds increasing, and at the key nothing or an
-- integer INCRBY cannot refuse; with ALERT, a stream or nothing at its
-- key and no threshold crossed (an alert is written the exact way).
-- INCRBY keeps the TTL; the clock is read only for a new window.
local n = #ARGV
-- The last threshold's index.
local last, alert = n, #KEYS == 2 and KEYS[2] ~= KEYS[1]
if alert and ARGV[n] == 'ALERT' then
  last = n - 1
elseif alert and ARGV[n - 2] == 'ALERT' and ARGV[n - 1] == 'MAXLEN' and #ARGV[n] <= 15 and ARGV[n]:find('^[1-9]%d*$') then
  last = n - 3
else
  alert = false
end
if (#KEYS == 1 or alert) and quick_mon_args(1, last, 12) then
  -- MGET reads another type as nothing, where GET or INCRBY would fail
  -- with an error the server counts beside the script's own. A canonical
  -- integer of at most 18 characters plus the increment stays below 2^63.
  local stored, fast = redis.call('MGET', KEYS[1])[1], nil
  if stored then
    fast = #stored <= 18 and (stored == '0' or stored:find('^%-?[1-9]%d*$') ~= nil)
  else
    fast = redis.call('EXISTS', KEYS[1]) == 0
  end
  if fast and alert then
    local kind = redis.call('TYPE', KEYS[2])['ok']
    fast = (kind == 'none' or kind == 'stream') and #(stored or '') <= 15
    local prev = tonumber(stored or 0)
    for i = 3, last do
      local t = tonumber(ARGV[i])
      if prev < t and t <= prev + ARGV[1] then fast = false end
    end
  end
  if fast then
    local value = redis.call('INCRBY', KEYS[1], ARGV[1])
    local level, reply = 0, value
    if value >= 9007199254740992 or value <= -9007199254740992 then
      -- Past 2^53 the double is not the counter: the exact one goes back
      -- (a string past 2^53 itself), beyond every threshold.
      reply = redis.call('GET', KEYS[1])
      if reply:find('^%-?9007199254740992$') then reply = tonumber(reply) end
    else
      local prev = value - ARGV[1]
      for i = 3, last do
        local t = tonumber(ARGV[i])
        if prev < t and t <= value then level = i - 2 end
      end
    end
    if redis.call('PTTL', KEYS[1]) < 0 then
      local time = redis.call('TIME')
      local expires_at = time[1] * 1000 + math.floor(time[2] / 1000) + ARGV[2] * 1000
      redis.call('PEXPIREAT', KEYS[1], string.format('%d', expires_at))
    end
    return {reply, level}
  end
end
-- @prelude
local now, increment, expires_at, e = mon_head('mon.incrcheck', true)
if e then return e end
-- A calendar window: its unit, until TZ (or UTC) says where it ends.
local unit = type(expires_at) == 'table' and expires_at.unit or nil
local rules = UTC
local thresholds, alert
thresholds, alert, _, e = mon_tail(3, {'TZ'}, function(_, value)
  local zone, bad = tz_arg(value, unit, tonumber(now))
  rules = zone
  return bad
end)
if e then return e end
if unit then expires_at = string.format('%d', period_end_ms(unit, rules, tonumber(now))) end
local current
current, e = read_counter(alert)
if e then return e end
local prev = current or '0'
local value = int_add(prev, increment)
if not int_fits(value) then return err(OVERFLOW) end
local level = crossing_level(prev, value, thresholds)
local starts_window = current == nil or redis.call('PTTL', KEYS[1]) < 0
if level > 0 then
  e = alert_append(alert, {'key', KEYS[1], 'level', level, 'threshold', thresholds[level], 'current', value})
  if e then return e end
end
if starts_window then
  redis.call('SET', KEYS[1], value, 'PXAT', expires_at)
else
  redis.call('SET', KEYS[1], value, 'KEEPTTL')
end
return {reply_int(value), level}
