-- CL.THROTTLE key max_burst count period [quantity] [BLOCK seconds]
local time = redis.call('TIME')
-- The common call first, above the prelude: quick_rate's bounds (see the
-- prelude; only what the fast path uses is made before it returns).
-- Anything else (errors and BLOCK included) goes the exact way below.
if #KEYS == 1 and #ARGV >= 3 and #ARGV <= 4 then
  local rate = quick_rate(ARGV[1], ARGV[2], ARGV[3], ARGV[4] or '1')
  local tat = rate and quick_tat(KEYS[1], time)
  if tat then
    local reply, stored = quick_decide(rate, tat)
    if stored then quick_store(KEYS[1], time, stored) end
    return reply
  end
end
-- @prelude
local command = 'cl.throttle'
if #ARGV < 3 then return wrong_arity(command) end
local now = now_ns(time)
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
