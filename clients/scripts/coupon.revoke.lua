-- COUPON.REVOKE key user [LEDGER stream], on a plain set of winners
local command = 'coupon.revoke'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local issued, e = coupon_set_size(2)
if e then return e end
if issued == 0 then return 0 end
-- SREM deletes a set it empties.
return redis.call('SREM', KEYS[1], user)
