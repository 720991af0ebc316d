-- COUPON.ISSUE as a Lua script. KEYS[1] winners set; ARGV: user, limit.
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return -1 end
local issued = redis.call('SCARD', KEYS[1])
if issued >= tonumber(ARGV[2]) then return -2 end
redis.call('SADD', KEYS[1], ARGV[1])
return issued + 1
