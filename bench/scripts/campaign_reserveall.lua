-- COUPON.RESERVEALL as a Lua script: one hold for a user in every one of
-- several campaigns kept as campaign_reserve.lua keeps one, all or none,
-- at one clock reading. KEYS: each campaign's meta, claims, holds, users,
-- campaign after campaign. ARGV: user, hold seconds. Reply as the
-- module's: {claim1, expires, claim2, expires, ...}, or {-1, i} / {-2, i}
-- for the first campaign (1-based) that refuses, nothing written then.
-- Like campaign_reserve.lua, a user's count includes expired holds not
-- yet reclaimed.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local user, campaigns = ARGV[1], #KEYS / 4
-- Judge every campaign before writing anything.
for i = 1, campaigns do
  local base = (i - 1) * 4
  local settings = redis.call('HMGET', KEYS[base + 1], 'limit', 'peruser', 'confirmed')
  if tonumber(redis.call('HGET', KEYS[base + 4], user) or '0') >= tonumber(settings[2]) then
    return {-1, i}
  end
  local live = tonumber(settings[3] or '0') + redis.call('ZCOUNT', KEYS[base + 3], now, '+inf')
  if live >= tonumber(settings[1]) then return {-2, i} end
end
local expires = now + tonumber(ARGV[2]) * 1000
local reply = {}
for i = 1, campaigns do
  local meta, claims, holds, users = KEYS[(i - 1) * 4 + 1], KEYS[(i - 1) * 4 + 2],
    KEYS[(i - 1) * 4 + 3], KEYS[(i - 1) * 4 + 4]
  local expired = redis.call('ZRANGEBYSCORE', holds, '-inf', '(' .. now, 'LIMIT', 0, 16)
  for _, claim in ipairs(expired) do
    local owner = redis.call('HGET', claims, claim)
    redis.call('HDEL', claims, claim)
    redis.call('ZREM', holds, claim)
    if owner then redis.call('HINCRBY', users, owner, -1) end
  end
  local claim = redis.call('HINCRBY', meta, 'next', 1)
  redis.call('HSET', claims, claim, user)
  redis.call('ZADD', holds, expires, claim)
  redis.call('HINCRBY', users, user, 1)
  reply[#reply + 1] = claim
  reply[#reply + 1] = expires
end
return reply
