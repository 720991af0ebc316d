-- CL.THROTTLE as the Lua script shops run today: GCRA with redis-cell's
-- arguments and reply. KEYS[1] the limiter; ARGV: max_burst, count,
-- period (s), quantity. The TAT is kept in microseconds: Lua numbers are
-- doubles, and nanoseconds since the epoch do not fit in 53 bits.
local burst, count, period = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local quantity = tonumber(ARGV[4] or '1')
local emission = period * 1000000 / count
local tolerance = emission * (burst + 1)
local increment = emission * quantity
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + increment
local allow_at = new_tat - tolerance
local limited, ttl, retry = 0, 0, -1
if allow_at > now then
  limited, ttl = 1, tat - now
  if increment <= tolerance then retry = math.ceil((allow_at - now) / 1000000) end
else
  ttl = new_tat - now
  if increment > 0 then
    redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PXAT', math.ceil(new_tat / 1000))
  end
end
local remaining = 0
if tolerance - ttl > 0 then remaining = math.floor((tolerance - ttl) / emission) end
return {limited, burst + 1, remaining, retry, math.ceil(ttl / 1000000)}
