-- CL.REFUND key max_burst count period quantity
local command = 'cl.refund'
if #ARGV ~= 4 then return wrong_arity(command) end
local now = now_ns()
local limit, e = limit_args(ARGV[1], ARGV[2], ARGV[3])
if e then return e end
local quantity
quantity, e = positive_arg(ARGV[4], 'quantity')
if e then return e end
local rate
rate, e = gcra_rate(limit, quantity)
if e then return e end
local tat
tat, e = read_integer(KEYS[1])
if e then return e end
local d, write = gcra_refund(tat, now, rate)
if write == 'del' then
  redis.call('DEL', KEYS[1])
elseif write then
  redis.call('SET', KEYS[1], write.tat, 'PXAT', write.expires_at_ms)
end
return gcra_reply(d)
