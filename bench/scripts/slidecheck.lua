-- MON.SLIDECHECK as a Lua script would do it on plain values: a hash of
-- buckets (field: bucket number, value: its sum) and of reports (field
-- "r<threshold>", value: when). KEYS[1] the window; ARGV: increment,
-- window (s), buckets, threshold...
local increment, window, n = tonumber(ARGV[1]), tonumber(ARGV[2]) * 1000, tonumber(ARGV[3])
local w = window / n
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local bucket = math.floor(now / w)
local fields = redis.call('HGETALL', KEYS[1])
local prev, aged = 0, {}
for i = 1, #fields, 2 do
  local field, value = fields[i], tonumber(fields[i + 1])
  if string.sub(field, 1, 1) == 'r' then
    -- a report: kept
  elseif tonumber(field) <= bucket - n then
    aged[#aged + 1] = field
  else
    prev = prev + value
  end
end
if #aged > 0 then redis.call('HDEL', KEYS[1], unpack(aged)) end
local current = prev + increment
local level = 0
for i = #ARGV, 4, -1 do
  local t = tonumber(ARGV[i])
  if prev < t and t <= current then
    local at = tonumber(redis.call('HGET', KEYS[1], 'r' .. t) or '-1')
    if at < 0 or now - at >= window then level = i - 3 break end
  end
end
redis.call('HINCRBY', KEYS[1], bucket, increment)
if level > 0 then redis.call('HSET', KEYS[1], 'r' .. ARGV[level + 3], now) end
redis.call('PEXPIREAT', KEYS[1], now + window)
return {current, level}
