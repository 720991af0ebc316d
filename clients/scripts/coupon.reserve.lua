-- COUPON.RESERVE key user [HOLD seconds] [ID request-id] [LEDGER stream]
local command = 'coupon.reserve'
if 1 + #KEYS + #ARGV < 3 then return wrong_arity(command) end
local now = now_ms()
local user = ARGV[1]
if user == '' then return err('ERR user must not be empty') end
local hold_until, id, stream, e = reserve_options(2, 2, now, command)
if e then return e end
local c
c, e = campaign_for_write(stream)
if e then return e end
local reply, plan
reply, plan, e = campaign_reserve(c, user, id, hold_until or span_end_ms(now, c.hold) or INT_MAX, now)
if e then return e end
e = campaign_carry_out(c, plan, now, 'released')
if e then return e end
return reply
