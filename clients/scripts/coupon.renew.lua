-- COUPON.RENEW key claim [HOLD s] [LEDGER stream]: a live hold ends HOLD
-- from now (the campaign's hold by default).
local hold = {name = 'HOLD'}
local now, c, claim, e = campaign_claim_head('coupon.renew', hold)
if e then return e end
if claim == nil then return -3 end
if not claim.held then return 0 end
local until_ms = hold.value or span_end_ms(now, c.hold) or INT_MAX
local plan = campaign_reclaims(c, now, nil)
plan[#plan + 1] = {op = 'renew', claim = claim, expires = until_ms}
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return reply_int(until_ms)
