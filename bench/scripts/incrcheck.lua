-- MON.INCRCHECK as the Lua script shops run today.
-- KEYS[1] counter; ARGV: increment, window (s), threshold...
local current = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
local prev = current - tonumber(ARGV[1])
local level = 0
for i = 3, #ARGV do
  local t = tonumber(ARGV[i])
  if prev < t and t <= current then level = i - 2 end
end
return {current, level}
