-- CL.QUOTA as a Lua script written by hand: a fixed-window quota on a
-- plain integer key, the module's keys, values and reply. KEYS[1] the
-- count; ARGV: limit, window (seconds, or 'day'), quantity, and with 'day'
-- the zone's offset from UTC in seconds. A fixed offset is this script's
-- calendar: right for Asia/Seoul (+32400 all year), wrong across a DST
-- change, whose rules the module has (CL.QUOTA ... day TZ zone) and a
-- hand-written script does not.
local limit, window = tonumber(ARGV[1]), ARGV[2]
local quantity = tonumber(ARGV[3] or '1')
local used = redis.call('GET', KEYS[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
-- The running window's end; none for a missing key (or one without a TTL).
local ttl = -2
if used then ttl = redis.call('PTTL', KEYS[1]) end
used = tonumber(used or '0')
local ends
if ttl >= 0 then
  ends = now + ttl
elseif window == 'day' then
  local offset = tonumber(ARGV[4]) * 1000
  ends = (math.floor((now + offset) / 86400000) + 1) * 86400000 - offset
else
  ends = now + tonumber(window) * 1000
end
local reset = math.ceil((ends - now) / 1000)
if used + quantity > limit then
  local retry = -1
  if quantity <= limit then retry = reset end
  return {1, limit, math.max(limit - used, 0), retry, reset}
end
if quantity > 0 then
  redis.call('INCRBY', KEYS[1], quantity)
  -- The first add starts the window: an absolute end, as the module's.
  if ttl < 0 then redis.call('PEXPIREAT', KEYS[1], ends) end
end
return {0, limit, limit - used - quantity, -1, reset}
