-- COUPON.ISSUE on a campaign as a Lua script on the plain values of
-- campaign_reserve.lua: reserve and confirm in one step. KEYS: meta,
-- claims, holds, users. ARGV: user.
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local settings = redis.call('HMGET', KEYS[1], 'limit', 'peruser', 'confirmed')
if tonumber(redis.call('HGET', KEYS[4], ARGV[1]) or '0') >= tonumber(settings[2]) then return -1 end
local live = tonumber(settings[3] or '0') + redis.call('ZCOUNT', KEYS[3], now, '+inf')
if live >= tonumber(settings[1]) then return -2 end
local claim = redis.call('HINCRBY', KEYS[1], 'next', 1)
redis.call('HSET', KEYS[2], claim, ARGV[1])
redis.call('HINCRBY', KEYS[4], ARGV[1], 1)
redis.call('HINCRBY', KEYS[1], 'confirmed', 1)
return claim
