-- COUPON.RENEW as a Lua script on the plain values of
-- campaign_reserve.lua. KEYS: meta, claims, holds. ARGV: claim, hold
-- seconds. A live hold ends `hold` from now; 0 once confirmed; -3 else.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expires = redis.call('ZSCORE', KEYS[3], ARGV[1])
if expires and tonumber(expires) >= now then
  local ends = now + tonumber(ARGV[2]) * 1000
  redis.call('ZADD', KEYS[3], ends, ARGV[1])
  return ends
end
if not expires and redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
return -3
