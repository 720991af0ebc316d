-- MON.INCRCHECK ... ALERT as a Lua script: the counter, then on a crossing
-- its alert entry. KEYS[1] counter, KEYS[2] stream; ARGV: increment,
-- window (s), threshold...
local current = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('EXPIRE', KEYS[1], ARGV[2])
end
local prev = current - tonumber(ARGV[1])
local level, threshold = 0, 0
for i = 3, #ARGV do
  local t = tonumber(ARGV[i])
  if prev < t and t <= current then level, threshold = i - 2, t end
end
if level > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', 10000, '*', 'key', KEYS[1],
    'level', level, 'threshold', threshold, 'current', current)
end
return {current, level}
