-- COUPON.RESERVEALL numkeys key [key ...] user [HOLD seconds] [ID request-id] [LEDGER stream]
-- KEYS: the campaigns, then the ledger's stream if LEDGER is given; ARGV:
-- numkeys, the user, the options. One hold for the user in every
-- campaign, all or none, at one clock reading.
local command = 'coupon.reserveall'
if 1 + #KEYS + #ARGV < 4 then return wrong_arity(command) end
local now = now_ms()
local n, e = numkeys_arg()
if e then return e end
-- The campaigns are the keys but the ledger's (LEDGER takes no ARGV; a
-- last LEDGER may have no value, and so no key).
local given, at, last = #KEYS, 3, nil
while at <= #ARGV do
  last = string.upper(ARGV[at]) == 'LEDGER'
  if last then
    given, at = given - 1, at + 1
  else
    at = at + 2
  end
end
if last and given < n then given = given + 1 end
if given < n or ARGV[2] == nil then
  return err('ERR numkeys is ' .. n .. ', but fewer than ' .. n .. ' keys and a user follow')
end
local seen = {}
for i = 1, n do
  if seen[KEYS[i]] then return err('ERR key is given more than once') end
  seen[KEYS[i]] = true
end
local user = ARGV[2]
if user == '' then return err('ERR user must not be empty') end
local hold_until, id, stream
hold_until, id, stream, e = reserve_options(3, n + 1, now, command)
if e then return e end
e = stream and require_stream(stream)
if e then return e end
local campaigns = {}
for i = 1, n do
  campaigns[i], e = campaign_open(KEYS[i])
  if e then return e end
end
-- One ledger at most, named by the call exactly when one is kept.
local keeper
for _, c in ipairs(campaigns) do
  if c.ledger then
    if keeper and keeper.ledger ~= c.ledger then return err('ERR ledger: the campaigns keep different ledgers') end
    keeper = keeper or c
  end
end
e = ledger_named(keeper or campaigns[1], stream)
if e then return e end
-- The default hold: the campaigns' shortest.
if hold_until == nil then
  local shortest = campaigns[1].hold
  for _, c in ipairs(campaigns) do
    if int_cmp(c.hold, shortest) < 0 then shortest = c.hold end
  end
  hold_until = span_end_ms(now, shortest) or INT_MAX
end
local replies, plans = {}, {}
for i, c in ipairs(campaigns) do
  local reply
  reply, plans[i], e = campaign_reserve(c, user, id, hold_until, now)
  if e then return e end
  -- The first campaign that refuses refuses the cart.
  if reply[1] == -1 or reply[1] == -2 then return {reply[1], i} end
  replies[#replies + 1] = reply[1]
  replies[#replies + 1] = reply[2]
end
-- Every campaign's ledger entries (in key order, each campaign's
-- reclaims first), then every campaign's changes.
local entries = {}
for i, c in ipairs(campaigns) do ledger_entries(c, plans[i], now, 'released', entries) end
e = ledger_append(entries)
if e then return e end
for i, c in ipairs(campaigns) do campaign_apply(c, plans[i]) end
return replies
