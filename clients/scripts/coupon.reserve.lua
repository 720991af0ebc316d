-- COUPON.RESERVE key user [HOLD seconds] [ID request-id] [QTY n] [LEDGER stream]
local command = 'coupon.reserve'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
local now = now_ms()
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local hold_until, id, units, stream, e = reserve_options(now)
if e then return e end
local c
c, e = campaign_for_write(stream)
if e then return e end
local reply, plan
reply, plan, e = campaign_reserve(c, user, id, hold_until or span_end_ms(now, c.hold) or INT_MAX, now, units)
if e then return e end
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return reply
