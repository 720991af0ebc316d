-- COUPON.CONFIRM as a Lua script on the plain values of
-- campaign_reserve.lua. KEYS: meta, claims, holds. ARGV: claim.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expires = redis.call('ZSCORE', KEYS[3], ARGV[1])
if expires and tonumber(expires) >= now then
  redis.call('ZREM', KEYS[3], ARGV[1])
  redis.call('HINCRBY', KEYS[1], 'confirmed', 1)
  return 1
end
if not expires and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
return -3
