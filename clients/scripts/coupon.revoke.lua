-- COUPON.REVOKE key user [LEDGER stream]: on a plain set of winners, or
-- on a campaign (every live claim of the user released).
local command = 'coupon.revoke'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local issued, c, e = coupon_key(2)
if e then return e end
if c then
  local now = now_ms()
  local live = user_live_claims(c, user, now)
  if #live == 0 then return 0 end
  local plan = campaign_reclaims(c, now, nil)
  for _, claim in ipairs(live) do plan[#plan + 1] = {op = 'release', claim = claim} end
  e = campaign_carry_out(c, plan, now, 'revoked')
  if e then return e end
  return #live
end
if issued == 0 then return 0 end
-- SREM deletes a set it empties.
return redis.call('SREM', KEYS[1], user)
