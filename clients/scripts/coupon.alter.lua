-- COUPON.ALTER key [LIMIT n] [PERUSER n] [HOLD seconds] [LEDGER stream]:
-- new settings now; nothing live is touched, but LIMIT and PERUSER never
-- go below what is confirmed.
local command = 'coupon.alter'
if 1 + #KEYS + #ARGV < 4 then return wrong_arity(command) end
local now = now_ms()
local changes, stream, peruser_first = {}, nil, false
local e = walk_options(1, {'LIMIT', 'PERUSER', 'HOLD', 'LEDGER'}, {LEDGER = true}, 2, function(name, value)
  local bad
  if name == 'LEDGER' then
    stream = value
  elseif name == 'HOLD' then
    _, bad = seconds_from(value, 'hold', now, command)
    changes.hold = value
  else
    changes[string.lower(name)], bad = positive_arg(value, string.lower(name))
    peruser_first = peruser_first or (name == 'PERUSER' and changes.limit == nil)
  end
  return bad
end)
if e then return e end
if next(changes) == nil then return err('ERR COUPON.ALTER needs LIMIT, PERUSER or HOLD') end
local c
c, e = campaign_for_write(stream)
if e then return e end
local new = {limit = changes.limit or c.limit, peruser = changes.peruser or c.peruser, hold = changes.hold or c.hold}
-- A sale made is not undone: with both refused, the first in argument
-- order is named.
local limit_refused = int_cmp(new.limit, campaign_confirmed_units(c)) < 0
local peruser_refused = int_cmp(new.peruser, most_confirmed_of_a_user(c)) < 0
if limit_refused and not (peruser_refused and peruser_first) then
  return err('ERR limit must not be below the confirmed claims')
end
if peruser_refused then return err("ERR peruser must not be below a user's confirmed claims") end
if new.limit == c.limit and new.peruser == c.peruser and new.hold == c.hold then
  return redis.status_reply('OK')
end
e = campaign_carry_out(c, {{op = 'alter', settings = new}}, now, 'released')
if e then return e end
return redis.status_reply('OK')
