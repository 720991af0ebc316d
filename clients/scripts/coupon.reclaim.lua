-- COUPON.RECLAIM key [COUNT n] [LEDGER stream]: up to n (default 100, at
-- most 10000) expired holds reclaimed now, the oldest first; how many.
if 1 + #KEYS + #ARGV < 2 then return wrong_arity('coupon.reclaim') end
local now = now_ms()
local count, stream = 100, nil
local e = walk_options(1, {'COUNT', 'LEDGER'}, {LEDGER = true}, 2, function(name, value)
  if name == 'LEDGER' then
    stream = value
    return nil
  end
  local n, bad = positive_arg(value, 'count')
  if bad then return bad end
  if int_cmp(n, '10000') > 0 then return err('ERR count must be at most 10000') end
  count = tonumber(n)
end)
if e then return e end
local c
c, e = campaign_for_write(stream)
if e then return e end
local plan = campaign_reclaims(c, now, nil, count)
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return #plan
