-- COUPON.CLAIMS key [FROM claim] [COUNT n]: live claims in claim order,
-- each [claim, user, state, expires_at_ms, request-id, units]. Expired holds not
-- reclaimed yet are stepped over on the way, as the module does.
if 1 + #KEYS + #ARGV < 2 then return wrong_arity('coupon.claims') end
local now = now_ms()
local from, count = '1', '100'
local e = walk_options(1, {'FROM', 'COUNT'}, {}, 2, function(name, value)
  local n, bad = positive_arg(value, string.lower(name))
  if name == 'FROM' then from = n else count = n end
  return bad
end)
if e then return e end
local c
c, e = campaign_open(KEYS[1])
if e then return e end
-- A bound on the rows, which ZRANGEBYLEX's LIMIT reads as an integer.
local wanted = int_cmp(count, '1000000000000000') > 0 and 1e15 or tonumber(count)
local rows, low, high = {}, lex_range('c', pad(from))
while #rows < wanted do
  local ask = wanted - #rows
  local batch = redis.call('ZRANGEBYLEX', c.key, low, high, 'LIMIT', 0, string.format('%d', ask))
  for _, member in ipairs(batch) do
    local claim = claim_of(member)
    if claim_live(claim, now) then
      rows[#rows + 1] = {reply_int(claim.number), claim.user, claim.held and 'held' or 'confirmed',
        claim.held and reply_int(claim.expires) or -1, claim.id or false, reply_int(claim.units)}
    end
    low = '(' .. member
  end
  if #batch < ask then break end
end
return rows
