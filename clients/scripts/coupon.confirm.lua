-- COUPON.CONFIRM key claim [LEDGER stream]
local now, c, claim, e = campaign_claim_head('coupon.confirm')
if e then return e end
if claim == nil then return -3 end
if not claim.held then return 0 end
local plan = campaign_reclaims(c, now, nil)
-- A hold that no longer fits `limit` or PERUSER (holds that had expired
-- live again: a clock behind, a loaded value) is released instead.
local fits = int_cmp(c.confirmed, c.limit) < 0
  and int_cmp(tostring(user_confirmed(c, claim.user)), c.peruser) < 0
plan[#plan + 1] = {op = fits and 'confirm' or 'release', claim = claim}
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return fits and 1 or -2
