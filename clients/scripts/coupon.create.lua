-- COUPON.CREATE key limit [PERUSER n] [HOLD seconds] [LEDGER stream [MAXLEN n]]
-- A campaign is one sorted set (prelude.lua, "Campaigns"): its first
-- member holds the settings.
local command = 'coupon.create'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
local now = now_ms()
local c = {key = KEYS[1], peruser = '1', hold = '600', made = '0', released = '0', expired = '0', confirmed = '0'}
local e
c.limit, e = positive_arg(ARGV[1], 'limit')
if e then return e end
e = walk_options(2, {'PERUSER', 'HOLD', 'LEDGER', 'MAXLEN'}, {LEDGER = true}, 2, function(name, value)
  local bad
  if name == 'PERUSER' then
    c.peruser, bad = positive_arg(value, 'peruser')
  elseif name == 'HOLD' then
    _, bad = seconds_from(value, 'hold', now, command)
    c.hold = value
  elseif name == 'LEDGER' then
    if value == KEYS[1] then return err("ERR ledger stream must not be the campaign's key") end
    c.ledger = value
  else
    c.maxlen, bad = positive_arg(value, 'maxlen')
  end
  return bad
end)
if e then return e end
if c.maxlen and not c.ledger then return err('ERR option MAXLEN is only valid with LEDGER') end
e = c.ledger and require_stream(c.ledger)
if e then return e end
if type_of(KEYS[1]) ~= 'none' then return err('BUSYKEY Target key name already exists.') end
campaign_save(c)
return redis.status_reply('OK')
