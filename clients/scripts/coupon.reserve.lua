-- COUPON.RESERVE key user [HOLD seconds] [ID request-id] [LEDGER stream]
local command = 'coupon.reserve'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
local now = now_ms()
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local hold_until, id, stream
local e = walk_options(2, {'HOLD', 'ID', 'LEDGER'}, {LEDGER = true}, 2, function(name, value)
  local bad
  if name == 'HOLD' then
    hold_until, bad = seconds_from(value, 'hold', now, command)
  elseif name == 'ID' then
    if value == '' then return err('ERR id must not be empty') end
    id = value
  else
    stream = value
  end
  return bad
end)
if e then return e end
local c
c, e = campaign_for_write(stream)
if e then return e end
-- The request id first: its live claim is repeated (another user's is an
-- error); a released or expired one is free again.
local stale = id and campaign_id_owner(c, id)
if stale and claim_live(stale, now) then
  if stale.user ~= user then return err('ERR id is held by a live claim of another user') end
  return {reply_int(stale.number), stale.held and reply_int(stale.expires) or -1}
end
local full = campaign_room(c, user, now)
if full then return {full, 0} end
local number
number, e = campaign_next_claim(c)
if e then return e end
hold_until = hold_until or span_end_ms(now, c.hold) or INT_MAX
local plan = campaign_reclaims(c, now, stale)
plan[#plan + 1] = {op = 'put', claim = {number = number, held = true, expires = hold_until, user = user, id = id}}
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return {reply_int(number), reply_int(hold_until)}
