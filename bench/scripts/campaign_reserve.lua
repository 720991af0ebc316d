-- COUPON.RESERVE as a Lua script on plain values. KEYS: meta (hash:
-- limit, peruser, next, confirmed), claims (hash: claim -> user), holds
-- (sorted set: claim by expiry ms), users (hash: user -> claims).
-- ARGV: user, hold seconds. Like the module, it reclaims at most 16
-- expired holds per call; unlike it, a user's count includes expired
-- holds not yet reclaimed.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. now, 'LIMIT', 0, 16)
for _, claim in ipairs(expired) do
  local owner = redis.call('HGET', KEYS[2], claim)
  redis.call('HDEL', KEYS[2], claim)
  redis.call('ZREM', KEYS[3], claim)
  if owner then redis.call('HINCRBY', KEYS[4], owner, -1) end
end
local settings = redis.call('HMGET', KEYS[1], 'limit', 'peruser', 'confirmed')
if tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0') >= tonumber(settings[2]) then
  return {-1, 0}
end
local live = tonumber(settings[3] or '0') + redis.call('ZCOUNT', KEYS[3], now, '+inf')
if live >= tonumber(settings[1]) then return {-2, 0} end
local claim = redis.call('HINCRBY', KEYS[1], 'next', 1)
local expires = now + tonumber(ARGV[2]) * 1000
redis.call('HSET', KEYS[2], claim, ARGV[1])
redis.call('ZADD', KEYS[3], expires, claim)
redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
return {claim, expires}
