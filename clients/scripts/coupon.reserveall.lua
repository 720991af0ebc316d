-- COUPON.RESERVEALL numkeys key [key ...] user [HOLD seconds] [ID request-id]
--   [QTY n [n ...]] [LEDGER stream]
-- KEYS: the campaigns, then the ledger's stream if LEDGER is given; ARGV:
-- numkeys, the user, the options. One hold for the user in every
-- campaign (of QTY's units for each, in key order), all or none, at one
-- clock reading.
local command = 'coupon.reserveall'
if 1 + #KEYS + #ARGV < 4 then return wrong_arity(command) end
local now = now_ms()
local n, e = numkeys_arg()
if e then return e end
-- The campaigns are the keys but the ledger's (LEDGER takes no ARGV; a
-- last LEDGER may have no value, and so no key; QTY takes numkeys values).
local given, at, last = #KEYS, 3, nil
while at <= #ARGV do
  local option = string.upper(ARGV[at])
  last = option == 'LEDGER'
  if last then
    given, at = given - 1, at + 1
  else
    at = at + (option == 'QTY' and 1 + n or 2)
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
-- The options from ARGV[3] on, as RESERVE's, but QTY takes n values (the
-- module's words are ARGV's with the ledger's stream, KEYS[n + 1], after
-- LEDGER): fewer, or an integer after the n-th, is an error naming qty.
local got, named, i, k = {}, {}, 3, n + 1
while i <= #ARGV do
  local word = ARGV[i]
  local name = string.upper(word)
  if name ~= 'HOLD' and name ~= 'ID' and name ~= 'QTY' and name ~= 'LEDGER' then
    return err("ERR unknown option '" .. shown(word) .. "'")
  end
  if named[name] then return err('ERR option ' .. name .. ' is given more than once') end
  named[name] = true
  local per_key = 'ERR qty needs ' .. n .. ' values, one per key'
  if name == 'LEDGER' then
    got.LEDGER, i, k = KEYS[k], i + 1, k + 1
    if got.LEDGER == nil then return err('ERR option LEDGER needs a value') end
  elseif name == 'QTY' and n > 1 then
    if #ARGV - i + #KEYS - k + 1 < n then return err(per_key) end
    got.QTY = {}
    for j = 1, n do
      got.QTY[j], e = positive_arg(ARGV[i + j] or '', 'qty')
      if e then return e end
    end
    i = i + 1 + n
    if ARGV[i] and parse_int(ARGV[i]) then return err(per_key) end
  else
    local value = ARGV[i + 1]
    if value == nil then return err('ERR option ' .. name .. ' needs a value') end
    got[name], e = reserve_value(name, value, now, command)
    if e then return e end
    if name == 'QTY' then got.QTY = {got.QTY} end
    i = i + 2
  end
end
local hold_until, id, stream = got.HOLD, got.ID, got.LEDGER
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
  reply, plans[i], e = campaign_reserve(c, user, id, hold_until, now, got.QTY and got.QTY[i] or '1')
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
