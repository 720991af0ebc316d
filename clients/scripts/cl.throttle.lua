-- CL.THROTTLE key max_burst count period [quantity] [BLOCK seconds]
local time = redis.call('TIME')
-- The common call first, above the prelude (a call that returns here
-- makes none of its functions), in Lua numbers: arguments of at most 15 digits
-- (the period of at most 6: at most 10^15 ns), the emission interval,
-- tolerance and increment below 10^15 ns, and the stored arrival time
-- less than 10^6 s ahead of now. Times are taken relative to now (ns),
-- which keeps every value below 2^53, exact; anything else (errors and
-- BLOCK included) goes the exact way below.
local fast = #KEYS == 1 and #ARGV >= 3 and #ARGV <= 4 and #ARGV[3] <= 6 and ARGV[2] ~= '0' and ARGV[3] ~= '0'
if fast then
  for i = 1, #ARGV do
    local a = ARGV[i]
    if #a > 15 or not (a == '0' or a:find('^[1-9]%d*$')) then fast = false break end
  end
end
-- floor(a / b) for 0 <= a < 2^53 and 0 < b.
local function div(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then return q - 1 elseif r >= b then return q + 1 end
  return q
end
local size, emission, tolerance, increment
if fast then
  size = ARGV[1] + 1
  emission = div(ARGV[3] * 1000000000, tonumber(ARGV[2]))
  tolerance, increment = emission * size, emission * tonumber(ARGV[4] or 1)
  -- A product at or past 10^15 is so as a double too.
  fast = emission > 0 and tolerance < 1e15 and increment < 1e15
end
-- The stored arrival time less now, in ns (0 for none, or one past).
local tat = 0
if fast then
  -- MGET reads another type as nothing, where GET would fail with an
  -- error the server counts beside the script's own.
  local stored = redis.call('MGET', KEYS[1])[1]
  if not stored then
    fast = redis.call('EXISTS', KEYS[1]) == 0
  elseif #stored > 19 or not stored:find('^[1-9]%d*$') then
    fast = false
  else
    local ahead = (#stored > 9 and tonumber(stored:sub(1, -10)) or 0) - time[1]
    if ahead > 1000000 then
      fast = false
    elseif ahead >= -1000000 then
      tat = ahead * 1000000000 + stored:sub(-9) - time[2] * 1000
      if tat < 0 then tat = 0 end
    end
  end
end
if fast then
  local new_tat, limited, retry, ttl = tat + increment, 0, -1, tat
  local allow_at = new_tat - tolerance
  if allow_at > 0 then
    limited = 1
    if increment <= tolerance then retry = -div(-allow_at, 1000000000) end
  else
    ttl = new_tat
    if increment > 0 then
      -- now + new_tat, in seconds and ns.
      local ns = time[2] * 1000 + new_tat
      local s = div(ns, 1000000000)
      ns = ns - s * 1000000000
      s = s + time[1]
      redis.call('SET', KEYS[1], string.format('%d%09d', s, ns), 'PXAT',
        string.format('%d', s * 1000 - div(-ns, 1000000)))
    end
  end
  local remaining = 0
  if tolerance > ttl then remaining = div(tolerance - ttl, emission) end
  return {limited, size, remaining, retry, -div(-ttl, 1000000000)}
end
-- @prelude
local command = 'cl.throttle'
if #ARGV < 3 then return wrong_arity(command) end
local now = time[1] .. string.format('%06d', tonumber(time[2])) .. '000'
local limit, e = limit_args(ARGV[1], ARGV[2], ARGV[3])
if e then return e end
-- The positional quantity, unless the options start at once.
local quantity, from = '1', 4
if ARGV[4] and string.upper(ARGV[4]) ~= 'BLOCK' then
  quantity, e = non_negative_arg(ARGV[4], 'quantity')
  if e then return e end
  from = 5
end
local rate
rate, e = gcra_rate(limit, quantity)
if e then return e end
local block
e = walk_options(from, {'BLOCK'}, {}, 2, function(_, value)
  local b, bad = block_arg(value, now)
  if bad then return bad end
  block = b
end)
if e then return e end
local tat_text
tat_text, e = read_integer(KEYS[1])
if e then return e end
local d
d, e = gcra_decide(tat_text, now, rate)
if e then return e end
if block and gcra_blockable(d) then
  d, e = gcra_blocked(tat_text, now, rate, block)
  if e then return e end
end
if d.tat then redis.call('SET', KEYS[1], d.tat, 'PXAT', d.expires_at_ms) end
return gcra_reply(d)
