-- CL.REFUND as a Lua script: gives places back to a throttle.lua limiter
-- (its TAT in microseconds). KEYS[1] the limiter; ARGV: max_burst, count,
-- period (s), quantity. The arrival time moves back quantity emission
-- intervals, never before now; a refund that leaves the limiter full
-- deletes the key; a missing key or a past time writes nothing. Reply:
-- throttle.lua's with quantity 0 after the refund.
local burst, count, period = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local quantity = tonumber(ARGV[4])
local emission = period * 1000000 / count
local tolerance = emission * (burst + 1)
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat > now then
  tat = tat - emission * quantity
  if tat <= now then
    redis.call('DEL', KEYS[1])
    tat = now
  else
    redis.call('SET', KEYS[1], string.format('%d', tat), 'PXAT', math.ceil(tat / 1000))
  end
else
  tat = now
end
local ttl = tat - now
local remaining = 0
if tolerance - ttl > 0 then remaining = math.floor((tolerance - ttl) / emission) end
return {0, burst + 1, remaining, -1, math.ceil(ttl / 1000000)}
