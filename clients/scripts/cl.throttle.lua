-- CL.THROTTLE key max_burst count period [quantity]
local command = 'cl.throttle'
if #ARGV ~= 3 and #ARGV ~= 4 then return wrong_arity(command) end
local now = now_ns()
local limit, e = limit_args(ARGV[1], ARGV[2], ARGV[3])
if e then return e end
local quantity = '1'
if ARGV[4] then
  quantity, e = non_negative_arg(ARGV[4], 'quantity')
  if e then return e end
end
local rate
rate, e = gcra_rate(limit, quantity)
if e then return e end
local tat
tat, e = read_integer(KEYS[1])
if e then return e end
local d
d, e = gcra_decide(tat, now, rate)
if e then return e end
if d.tat then redis.call('SET', KEYS[1], d.tat, 'PXAT', d.expires_at_ms) end
return gcra_reply(d)
