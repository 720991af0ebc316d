-- COUPON.ISSUE key user limit [LEDGER stream]: on a plain set of winners,
-- or on a campaign (reserve and confirm in one step).
-- The common call first, above the prelude (a call that returns here
-- makes none of its functions): no LEDGER, a limit of at most 15 digits
-- (a Lua number), a set or nothing at the key (any other type, a
-- campaign's included, goes the general way below, which answers for it).
local limit_text = ARGV[2]
if #KEYS == 1 and #ARGV == 2 and ARGV[1] ~= '' and #limit_text <= 15 and limit_text:find('^[1-9]%d*$') then
  local kind = redis.call('TYPE', KEYS[1])['ok']
  if kind == 'set' or kind == 'none' then
    local issued = redis.call('SCARD', KEYS[1])
    if issued < tonumber(limit_text) then
      if redis.call('SADD', KEYS[1], ARGV[1]) == 0 then return -1 end
      return issued + 1
    end
    if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return -1 end
    return -2
  end
end
-- @prelude
local command = 'coupon.issue'
if 1 + #KEYS + #ARGV < 4 then return wrong_arity(command) end
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local limit, e = positive_arg(ARGV[2], 'limit')
if e then return e end
local issued, c
issued, c, e = coupon_key(3)
if e then return e end
if c then
  if limit ~= c.limit then return err("ERR limit does not match the campaign's limit") end
  local now = now_ms()
  local full = campaign_room(c, user, now, '1')
  if full then return full end
  local number
  number, e = campaign_next_claim(c)
  if e then return e end
  local plan = campaign_reclaims(c, now, nil)
  plan[#plan + 1] = {op = 'put', claim = {number = number, held = false, units = '1', user = user}}
  e = campaign_carry_out(c, plan, now, 'released')
  if e then return e end
  return reply_int(number)
end
-- Holding one is checked first: a winner retrying after the sell-out
-- gets -1; only a new winner is written.
if int_cmp(tostring(issued), limit) < 0 then
  if redis.call('SADD', KEYS[1], user) == 0 then return -1 end
  return issued + 1
end
if redis.call('SISMEMBER', KEYS[1], user) == 1 then return -1 end
return -2
