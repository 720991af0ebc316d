-- COUPON.ISSUE key user limit [LEDGER stream], on a plain set of winners
local command = 'coupon.issue'
if 1 + #KEYS + #ARGV < 4 then return wrong_arity(command) end
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local limit, e = positive_arg(ARGV[2], 'limit')
if e then return e end
local issued
issued, e = coupon_set_size(3)
if e then return e end
-- Holding one is checked first: a winner retrying after the sell-out
-- gets -1; only a new winner is written.
if int_cmp(tostring(issued), limit) < 0 then
  if redis.call('SADD', KEYS[1], user) == 0 then return -1 end
  return issued + 1
end
if redis.call('SISMEMBER', KEYS[1], user) == 1 then return -1 end
return -2
