-- MON.DISTINCT key member window threshold [threshold ...] [ALERT stream [MAXLEN n]]
-- The key is the module's plain sorted set: each member scored by the ms
-- it was last seen.
--
-- The common call first, above the prelude (a call that returns here
-- makes of its functions only quick_mon_args): no options, a member,
-- the window of at most 9 digits, the thresholds of at most 15 and
-- increasing, and at the key nothing or a sorted set whose first score
-- is not 0 (a campaign's is); anything else goes the exact way below.
-- TYPE never fails, where ZCOUNT on another type would count an error.
local n = #ARGV
if #KEYS == 1 and ARGV[1] ~= '' and quick_mon_args(2, n, 9) then
  local kind = redis.call('TYPE', KEYS[1])['ok']
  if kind == 'none' or (kind == 'zset' and redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] ~= '0') then
    local time = redis.call('TIME')
    local now = time[1] * 1000 + math.floor(time[2] / 1000)
    local cutoff = now - ARGV[2] * 1000
    local aged = redis.call('ZCOUNT', KEYS[1], '-inf', string.format('%d', cutoff))
    local prev = redis.call('ZCARD', KEYS[1]) - aged
    local seen = redis.call('ZSCORE', KEYS[1], ARGV[1])
    local count = prev + ((not seen or tonumber(seen) <= cutoff) and 1 or 0)
    local level = 0
    for i = 3, n do
      local t = tonumber(ARGV[i])
      if prev < t and t <= count then level = i - 2 end
    end
    if aged > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', cutoff)) end
    redis.call('ZADD', KEYS[1], string.format('%d', now), ARGV[1])
    redis.call('PEXPIREAT', KEYS[1], string.format('%d', now + ARGV[2] * 1000))
    return {count, level}
  end
end
-- @prelude
local command = 'mon.distinct'
if 1 + #KEYS + #ARGV < 5 then return wrong_arity(command) end
local now = now_ms()
local member = ARGV[1]
if member == '' then return err('ERR member must not be empty') end
local expires_at, e = seconds_from(ARGV[2], 'window', now, command)
if e then return e end
-- Members last seen at or before the cutoff have aged out.
local cutoff = int_sub(now, int_mul(ARGV[2], '1000'))
local thresholds, alert
thresholds, alert, _, e = mon_tail(3, {})
if e then return e end
e = alert_check(alert)
if e then return e end
local kind = type_of(KEYS[1])
if kind ~= 'none' and kind ~= 'zset' then return err(WRONGTYPE) end
-- A campaign (the scripts keep one in a sorted set) is another type.
if kind == 'zset' and campaign_open(KEYS[1]) then return err(WRONGTYPE) end
local aged = redis.call('ZCOUNT', KEYS[1], '-inf', cutoff)
local prev = redis.call('ZCARD', KEYS[1]) - aged
-- Only a member new to the count (never seen, or aged out) adds to it;
-- the scores compare as the module's doubles do.
local seen = redis.call('ZSCORE', KEYS[1], member)
local arrives = not seen or tonumber(seen) <= tonumber(cutoff)
local count = prev + (arrives and 1 or 0)
local level = crossing_level(tostring(prev), tostring(count), thresholds)
if level > 0 then
  e = alert_append(alert, {'key', KEYS[1], 'level', level, 'threshold', thresholds[level], 'current', count,
    'member', member})
  if e then return e end
end
if aged > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff) end
redis.call('ZADD', KEYS[1], now, member)
redis.call('PEXPIREAT', KEYS[1], expires_at)
return {count, level}
