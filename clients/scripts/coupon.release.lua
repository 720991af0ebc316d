-- COUPON.RELEASE key claim [LEDGER stream]: held or confirmed, the place
-- is free at once.
local now, c, claim, e = campaign_claim_head('coupon.release')
if e then return e end
if claim == nil then return 0 end
local plan = campaign_reclaims(c, now, nil)
plan[#plan + 1] = {op = 'release', claim = claim}
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return 1
