-- MON.DECRCLAMP key amount [ALERT stream [MAXLEN n]]
-- The common call first, above the prelude (a call that returns here
-- makes none of its functions): no options, the amount and the counter of
-- at most 15 characters, in Lua numbers (another type goes the general
-- way below, which answers for it).
local amount_text = ARGV[1]
if #KEYS == 1 and #ARGV == 1 and #amount_text <= 15 and amount_text:find('^[1-9]%d*$') then
  -- MGET reads another type as nothing (GET would fail, an error the
  -- server counts beside the script's own).
  local current = redis.call('MGET', KEYS[1])[1]
  if not current and redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
  if current and #current <= 15 and (current == '0' or current:find('^%-?[1-9]%d*$')) then
    current = tonumber(current)
    if current <= 0 then return 0 end
    local value = current - amount_text
    if value < 0 then value = 0 end
    redis.call('SET', KEYS[1], string.format('%d', value), 'KEEPTTL')
    return value
  end
end
-- @prelude
local command = 'mon.decrclamp'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
-- A token after amount that is no option name is an argument too many.
local next_token = ARGV[2] and string.upper(ARGV[2])
if next_token and next_token ~= 'ALERT' and next_token ~= 'MAXLEN' then return wrong_arity(command) end
local amount, e = positive_arg(ARGV[1], 'amount')
if e then return e end
local alert
alert, _, e = alert_options(2, {'ALERT', 'MAXLEN'})
if e then return e end
local current
current, e = read_counter(alert)
if e then return e end
if current == nil or int_cmp(current, '0') <= 0 then return 0 end
local value, lost = '0', '0'
if int_cmp(amount, current) > 0 then
  lost = int_sub(amount, current)
  e = alert_append(alert, {'key', KEYS[1], 'clamped', lost, 'current', '0'})
  if e then return e end
else
  value = int_sub(current, amount)
end
redis.call('SET', KEYS[1], value, 'KEEPTTL')
return reply_int(value)
