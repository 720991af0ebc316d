-- CL.THROTTLEALL numkeys key max_burst count period [key max_burst count period ...] [QUANTITY n] [BLOCK seconds]
-- ARGV: numkeys, then each limiter's max_burst count period, then options.
local time = redis.call('TIME')
-- The common call first, above the prelude: no options, every limiter
-- within quick_rate's bounds (see the prelude) and every request allowed.
-- Anything else (errors, options, a limited request) goes the exact way
-- below, which has written nothing.
local count = #KEYS
if count >= 1 and count <= 16 and ARGV[1] == tostring(count) and #ARGV == 1 + 3 * count then
  local reply, stores = {0, -1}, {}
  for i = 1, count do
    for j = 1, i - 1 do
      if KEYS[j] == KEYS[i] then reply = nil end
    end
    local at = 2 + 3 * (i - 1)
    local rate = reply and quick_rate(ARGV[at], ARGV[at + 1], ARGV[at + 2], '1')
    local tat = rate and quick_tat(KEYS[i], time)
    if not tat then reply = nil break end
    -- A request of 1 stores unless it is limited.
    local cell, stored = quick_decide(rate, tat)
    if not stored then reply = nil break end
    reply[i + 2], stores[i] = cell, stored
  end
  if reply then
    for i = 1, count do quick_store(KEYS[i], time, stores[i]) end
    return reply
  end
end
-- @prelude
local command = 'cl.throttleall'
if 1 + #KEYS + #ARGV < 6 then return wrong_arity(command) end
local now = now_ns(time)
local n, e = numkeys_arg()
if e then return e end
if #KEYS < n or #ARGV - 1 < 3 * n then
  return err('ERR numkeys is ' .. n .. ', but fewer than ' .. n .. ' limiters (key max_burst count period) follow')
end
local limits = {}
for i = 1, n do
  for j = 1, i - 1 do
    if KEYS[j] == KEYS[i] then return err('ERR key is given more than once') end
  end
  local at = 2 + 3 * (i - 1)
  limits[i], e = limit_args(ARGV[at], ARGV[at + 1], ARGV[at + 2])
  if e then return e end
  -- Overflows of the group's own arguments, before QUANTITY's.
  _, e = gcra_rate(limits[i], '0')
  if e then return e end
end
local quantity, block = '1', nil
e = walk_options(2 + 3 * n, {'QUANTITY', 'BLOCK'}, {}, n + 1, function(name, value)
  if name == 'BLOCK' then
    local b, bad = block_arg(value, now)
    if bad then return bad end
    block = b
    return nil
  end
  local q, bad = non_negative_arg(value, 'quantity')
  if bad then return bad end
  -- Its overflows where it stands, before a later BLOCK's.
  for i = 1, n do
    _, bad = gcra_rate(limits[i], q)
    if bad then return bad end
  end
  quantity = q
end)
if e then return e end
local rates, tats = {}, {}
for i = 1, n do
  rates[i], e = gcra_rate(limits[i], quantity)
  if e then return e end
end
for i = 1, n do
  tats[i], e = read_integer(KEYS[i])
  if e then return e end
end
local cells, limited = {}, false
for i = 1, n do
  cells[i], e = gcra_decide(tats[i], now, rates[i])
  if e then return e end
  limited = limited or cells[i].limited
end
local retry = '-1'
if limited then
  local never = false
  for i = 1, n do
    if cells[i].limited and not gcra_blockable(cells[i]) then never = true end
  end
  for i = 1, n do
    if not cells[i].limited then
      local peek = {limit = rates[i].limit, emission = rates[i].emission, tolerance = rates[i].tolerance, increment = '0'}
      cells[i], e = gcra_decide(tats[i], now, peek)
      if e then return e end
    elseif block and not never then
      cells[i], e = gcra_blocked(tats[i], now, rates[i], block)
      if e then return e end
    end
  end
  if not never then
    for i = 1, n do
      if cells[i].limited and (retry == '-1' or int_cmp(cells[i].retry, retry) > 0) then retry = cells[i].retry end
    end
  end
end
-- What to store: every consumed cell when allowed, the blocked ones when not.
for i = 1, n do
  if cells[i].tat then redis.call('SET', KEYS[i], cells[i].tat, 'PXAT', cells[i].expires_at_ms) end
end
local reply = {limited and 1 or 0, reply_int(retry)}
for i = 1, n do reply[#reply + 1] = gcra_reply(cells[i]) end
return reply
