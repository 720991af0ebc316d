-- COUPON.INFO key: a flat array of field/value pairs, exact as of now
-- (claims counted, but `available`, `held_units` and `confirmed_units`).
if 1 + #KEYS + #ARGV ~= 2 then return wrong_arity('coupon.info') end
local now = now_ms()
local c, e = campaign_open(KEYS[1])
if e then return e end
local held = campaign_held(c, now)
local expired_now = format_int(lex_count(c.key, 'e') - held)
local held_units, confirmed_units = campaign_held_units(c, now), campaign_confirmed_units(c)
return {'limit', reply_int(c.limit), 'peruser', reply_int(c.peruser), 'hold', reply_int(c.hold),
  'confirmed', reply_int(c.confirmed), 'held', held,
  'available', reply_int(campaign_available(c.limit, confirmed_units, held_units)), 'claims', reply_int(c.made),
  'expired', reply_int(int_add(c.expired, expired_now)), 'released', reply_int(c.released),
  'held_units', reply_int(held_units), 'confirmed_units', reply_int(confirmed_units)}
