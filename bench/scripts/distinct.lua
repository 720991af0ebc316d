-- MON.DISTINCT as a Lua script: the same sorted-set steps. KEYS[1] the
-- set; ARGV: member, window (s), threshold...
local window = tonumber(ARGV[2]) * 1000
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local prev = redis.call('ZCARD', KEYS[1])
local added = redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('PEXPIREAT', KEYS[1], now + window)
local count = prev + added
local level = 0
for i = 3, #ARGV do
  local t = tonumber(ARGV[i])
  if prev < t and t <= count then level = i - 2 end
end
return {count, level}
