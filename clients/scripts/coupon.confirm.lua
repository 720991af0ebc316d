-- COUPON.CONFIRM key claim [QTY m] [LEDGER stream]: m of the claim's
-- units confirmed (all by default), the others free at once.
local qty = {name = 'QTY'}
local now, c, claim, e = campaign_claim_head('coupon.confirm', qty)
if e then return e end
if claim == nil then return -3 end
if not claim.held then return 0 end
local units = qty.value or claim.units
if int_cmp(units, claim.units) > 0 then return err("ERR qty is above the claim's units") end
local plan = campaign_reclaims(c, now, nil)
-- A hold that no longer fits `limit` or PERUSER (holds that had expired
-- live again: a clock behind, a loaded value) is released instead.
local fits = int_cmp(int_add(campaign_confirmed_units(c), units), c.limit) <= 0
  and int_cmp(int_add(user_confirmed_units(c, claim.user), units), c.peruser) <= 0
plan[#plan + 1] = {op = fits and 'confirm' or 'release', claim = claim, units = units}
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return fits and 1 or -2
