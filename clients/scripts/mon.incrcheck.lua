-- MON.INCRCHECK key increment window threshold [threshold ...] [ALERT stream [MAXLEN n]]
local now, increment, expires_at, e = mon_head('mon.incrcheck')
if e then return e end
local thresholds, alert
thresholds, alert, _, e = mon_tail(3, {})
if e then return e end
local current
current, e = read_counter(alert)
if e then return e end
local prev = current or '0'
local value = int_add(prev, increment)
if not int_fits(value) then return err(OVERFLOW) end
local level = crossing_level(prev, value, thresholds)
local starts_window = current == nil or redis.call('PTTL', KEYS[1]) < 0
if level > 0 then
  e = alert_append(alert, {'key', KEYS[1], 'level', level, 'threshold', thresholds[level], 'current', value})
  if e then return e end
end
if starts_window then
  redis.call('SET', KEYS[1], value, 'PXAT', expires_at)
else
  redis.call('SET', KEYS[1], value, 'KEEPTTL')
end
return {reply_int(value), level}
