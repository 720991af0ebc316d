-- CL.REFUND key max_burst count period quantity
local time = redis.call('TIME')
-- The common call first, above the prelude: quick_rate's bounds (see the
-- prelude). The arrival time moves back by the quantity's emission, the
-- key goes when that reaches now, and the reply is a peek (increment 0).
if #KEYS == 1 and #ARGV == 4 and ARGV[4] ~= '0' then
  local rate = quick_rate(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
  local tat = rate and quick_tat(KEYS[1], time)
  if tat then
    if tat > 0 then
      tat = tat - rate.increment
      if tat <= 0 then
        tat = 0
        redis.call('DEL', KEYS[1])
      else
        quick_store(KEYS[1], time, tat)
      end
    end
    rate.increment = 0
    return (quick_decide(rate, tat))
  end
end
-- @prelude
local command = 'cl.refund'
if #ARGV ~= 4 then return wrong_arity(command) end
local now = now_ns(time)
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
