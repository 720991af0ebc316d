-- CL.THROTTLE ... BLOCK as a Lua script: throttle.lua with a penalty box.
-- KEYS[1] the limiter; ARGV: max_burst, count, period (s), quantity, block
-- (s). A refused call (one whose quantity could ever be allowed) pushes
-- the TAT to now + block + max_burst emission intervals, unless it is
-- already later: the next request is allowed block seconds from now, the
-- burst refilling from there. TATs in microseconds, as in throttle.lua.
local burst, count, period = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local quantity, block = tonumber(ARGV[4]), tonumber(ARGV[5])
local emission = period * 1000000 / count
local tolerance = emission * (burst + 1)
local increment = emission * quantity
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local limited, ttl, retry = 0, 0, -1
if tat + increment - tolerance > now then
  limited = 1
  if increment <= tolerance then
    local blocked = now + block * 1000000 + burst * emission
    if tat < blocked then
      tat = blocked
      redis.call('SET', KEYS[1], string.format('%d', tat), 'PXAT', math.ceil(tat / 1000))
    end
    retry = math.ceil((tat + increment - tolerance - now) / 1000000)
  end
  ttl = tat - now
else
  tat = tat + increment
  ttl = tat - now
  if increment > 0 then
    redis.call('SET', KEYS[1], string.format('%d', tat), 'PXAT', math.ceil(tat / 1000))
  end
end
local remaining = 0
if tolerance - ttl > 0 then remaining = math.floor((tolerance - ttl) / emission) end
return {limited, burst + 1, remaining, retry, math.ceil(ttl / 1000000)}
