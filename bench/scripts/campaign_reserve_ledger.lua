-- COUPON.RESERVE ... LEDGER as a Lua script: the decision of
-- campaign_reserve.lua on the same plain values, and one ledger entry per
-- change with XADD, as the module writes them (reclaims first; fields key,
-- op, claim, user, expires_at_ms, id, available). A refused call writes
-- nothing, reclaims included, as the module's. KEYS: meta, claims, holds,
-- users, ledger. ARGV: user, hold seconds, the campaign's name (the
-- entries' `key`). No request ids: `id` is empty.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local settings = redis.call('HMGET', KEYS[1], 'limit', 'peruser', 'confirmed')
local limit, confirmed = tonumber(settings[1]), tonumber(settings[3] or '0')
local held = redis.call('ZCOUNT', KEYS[3], now, '+inf')
local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. now, 'WITHSCORES', 'LIMIT', 0, 16)
local owners, mine = {}, 0
for i = 1, #expired, 2 do
  local owner = redis.call('HGET', KEYS[2], expired[i])
  owners[#owners + 1] = owner
  if owner == ARGV[1] then mine = mine + 1 end
end
if tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0') - mine >= tonumber(settings[2]) then
  return {-1, 0}
end
if confirmed + held >= limit then return {-2, 0} end
local available = math.max(0, limit - confirmed - held)
for i = 1, #expired, 2 do
  local claim, owner = expired[i], owners[(i + 1) / 2]
  redis.call('HDEL', KEYS[2], claim)
  redis.call('ZREM', KEYS[3], claim)
  if owner then redis.call('HINCRBY', KEYS[4], owner, -1) end
  redis.call('XADD', KEYS[5], '*', 'key', ARGV[3], 'op', 'expired', 'claim', claim,
    'user', owner or '', 'expires_at_ms', expired[i + 1], 'id', '', 'available', available)
end
local claim = redis.call('HINCRBY', KEYS[1], 'next', 1)
local expires = now + tonumber(ARGV[2]) * 1000
redis.call('HSET', KEYS[2], claim, ARGV[1])
redis.call('ZADD', KEYS[3], expires, claim)
redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
redis.call('XADD', KEYS[5], '*', 'key', ARGV[3], 'op', 'reserved', 'claim', claim,
  'user', ARGV[1], 'expires_at_ms', expires, 'id', '', 'available', available - 1)
return {claim, expires}
