-- COUPON.INFO key: a flat array of field/value pairs, exact as of now.
if 1 + #KEYS + #ARGV ~= 2 then return wrong_arity('coupon.info') end
local now = now_ms()
local c, e = campaign_open(KEYS[1])
if e then return e end
local held = tostring(campaign_held(c, now))
local expired_now = tostring(lex_count(c.key, 'e') - campaign_held(c, now))
return {'limit', reply_int(c.limit), 'peruser', reply_int(c.peruser), 'hold', reply_int(c.hold),
  'confirmed', reply_int(c.confirmed), 'held', reply_int(held),
  'available', reply_int(campaign_available(c.limit, c.confirmed, held)), 'claims', reply_int(c.made),
  'expired', reply_int(int_add(c.expired, expired_now)), 'released', reply_int(c.released)}
