-- What every command's script shares; the packages send it in front of
-- each script (prelude .. script is what SCRIPT LOAD gets).
--
-- Lua's numbers are doubles, exact to 2^53 only, and the module's
-- integers are 64-bit: integers are kept as canonical decimal strings and
-- computed on exactly (`int_*`); a Lua number is made of one only where
-- it is known to be small, and for a reply.

-- Discarded results.
local _

local INT_MAX = '9223372036854775807'
local INT_MIN = '-9223372036854775808'

local function err(text)
  return redis.error_reply(text)
end

local function wrong_arity(command)
  return redis.error_reply("ERR wrong number of arguments for '" .. command .. "' command")
end

local WRONGTYPE = 'WRONGTYPE Operation against a key holding the wrong kind of value'
local NOT_INTEGER = 'ERR value is not an integer or out of range'

-- What TYPE says of a key ('none', 'string', ..., a module type's name).
local function type_of(key)
  return redis.call('TYPE', key)['ok']
end

-- Magnitudes: decimal strings of digits, no leading zeros ('0' for zero).
local function mag_cmp(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end

-- A magnitude as limbs of 7 digits, the least significant first: sums and
-- products of limbs stay below 2^53, exact in Lua numbers.
local LIMB = 10000000

local function limbs(m)
  local out, i = {}, #m
  while i > 0 do
    local j = i > 7 and i - 6 or 1
    out[#out + 1] = tonumber(m:sub(j, i))
    i = j - 1
  end
  return out
end

local function from_limbs(l)
  local n = #l
  while n > 1 and l[n] == 0 do n = n - 1 end
  local parts = {string.format('%d', l[n])}
  for k = n - 1, 1, -1 do parts[#parts + 1] = string.format('%07d', l[k]) end
  return table.concat(parts)
end

local function mag_add(a, b)
  local x, y, out, carry = limbs(a), limbs(b), {}, 0
  for i = 1, math.max(#x, #y) do
    local d = (x[i] or 0) + (y[i] or 0) + carry
    carry = d >= 10000000 and 1 or 0
    out[i] = d - carry * 10000000
  end
  if carry > 0 then out[#out + 1] = carry end
  return from_limbs(out)
end

-- a - b for a >= b.
local function mag_sub(a, b)
  local x, y, out, borrow = limbs(a), limbs(b), {}, 0
  for i = 1, #x do
    local d = x[i] - (y[i] or 0) - borrow
    borrow = d < 0 and 1 or 0
    out[i] = d + borrow * 10000000
  end
  return from_limbs(out)
end

local function mag_mul(a, b)
  local x, y, out = limbs(a), limbs(b), {}
  for i = 1, #x + #y do out[i] = 0 end
  for i = 1, #x do
    local carry = 0
    for j = 1, #y do
      local d = out[i + j - 1] + x[i] * y[j] + carry
      carry = math.floor(d / 10000000)
      out[i + j - 1] = d - carry * 10000000
    end
    out[i + #y] = out[i + #y] + carry
  end
  return from_limbs(out)
end

-- (floor(a / b), a mod b) for b > 0, by long division: a digit at a time
-- in Lua numbers for a divisor below 10^14 (each step below 10^15, exact),
-- by subtraction of strings for a larger one.
local function mag_divmod(a, b)
  if #b <= 14 then
    local y, rest, digits = tonumber(b), 0, {}
    for i = 1, #a do
      local at = rest * 10 + (a:byte(i) - 48)
      local q = math.floor(at / y)
      rest = at - q * y
      if rest < 0 then q, rest = q - 1, rest + y elseif rest >= y then q, rest = q + 1, rest - y end
      digits[i] = q
    end
    local text = table.concat(digits)
    return (text:gsub('^0+(%d)', '%1')), string.format('%d', rest)
  end
  local quotient, rest = {}, '0'
  for i = 1, #a do
    rest = (rest == '0' and '' or rest) .. a:sub(i, i)
    rest = (rest:gsub('^0+(%d)', '%1'))
    local q = 0
    while mag_cmp(rest, b) >= 0 do
      rest = mag_sub(rest, b)
      q = q + 1
    end
    quotient[#quotient + 1] = q
  end
  local text = table.concat(quotient)
  return (text:gsub('^0+(%d)', '%1')), rest
end

-- Signed integers: a magnitude with an optional '-' ('0' has none).
local function split(x)
  if x:byte(1) == 45 then return true, x:sub(2) end
  return false, x
end

local function join(negative, m)
  if m == '0' or not negative then return m end
  return '-' .. m
end

-- Integers of at most 15 characters (below 10^15 < 2^53): exact as Lua
-- numbers, the fast path of every operation below; a result is formatted
-- back with %d (a C long: 64 bits).
local function short(a, b)
  return #a <= 15 and #b <= 15
end

local function format_int(x)
  return string.format('%d', x)
end

local function int_cmp(a, b)
  if #a <= 15 and #b <= 15 then
    local x, y = tonumber(a), tonumber(b)
    return x < y and -1 or (x > y and 1 or 0)
  end
  local na, ma = split(a)
  local nb, mb = split(b)
  if na ~= nb then return na and -1 or 1 end
  local c = mag_cmp(ma, mb)
  return na and -c or c
end

local function int_add(a, b)
  if #a <= 15 and #b <= 15 then return string.format('%d', tonumber(a) + tonumber(b)) end
  local na, ma = split(a)
  local nb, mb = split(b)
  if na == nb then return join(na, mag_add(ma, mb)) end
  if mag_cmp(ma, mb) >= 0 then return join(na, mag_sub(ma, mb)) end
  return join(nb, mag_sub(mb, ma))
end

local function int_neg(a)
  local n, m = split(a)
  return join(not n, m)
end

local function int_sub(a, b)
  return int_add(a, int_neg(b))
end

local function int_mul(a, b)
  if #a + #b <= 15 then return string.format('%d', tonumber(a) * tonumber(b)) end
  local na, ma = split(a)
  local nb, mb = split(b)
  return join(na ~= nb, mag_mul(ma, mb))
end

-- floor(a / b) and a - b * floor(a / b), for b > 0.
local function int_floordiv(a, b)
  if #a <= 15 and #b <= 15 then
    local x, y = tonumber(a), tonumber(b)
    -- The division rounds: the remainder puts the quotient right.
    local q = math.floor(x / y)
    local r = x - q * y
    if r < 0 then q, r = q - 1, r + y elseif r >= y then q, r = q + 1, r - y end
    return string.format('%d', q), string.format('%d', r)
  end
  local na, ma = split(a)
  local q, r = mag_divmod(ma, b)
  if not na then return q, r end
  if r == '0' then return join(true, q), '0' end
  return join(true, mag_add(q, '1')), mag_sub(b, r)
end

-- a mod n for a magnitude a and a small number n (at most 2^40), exactly.
local function mag_mod_small(a, n)
  local rest = 0
  for i = 1, #a do rest = (rest * 10 + a:byte(i) - 48) % n end
  return rest
end

local function int_fits(x)
  if #x <= 15 then return true end
  return int_cmp(x, '-9223372036854775808') >= 0 and int_cmp(x, '9223372036854775807') <= 0
end

-- An integer as INCRBY reads one: signed 64-bit decimal, no sign '+', no
-- leading zeros, no '-0', no spaces; its canonical string, or nil.
local function parse_int(text)
  if not (text:match('^%-?[1-9]%d*$') or text == '0') then return nil end
  if #text > 20 or not int_fits(text) then return nil end
  return text
end

local function integer_arg(text, name)
  local n = parse_int(text)
  if n == nil then return nil, redis.error_reply('ERR ' .. name .. ' is not an integer or out of range') end
  return n
end

local function positive_arg(text, name)
  local n, e = integer_arg(text, name)
  if e then return nil, e end
  if int_cmp(n, '0') <= 0 then return nil, redis.error_reply('ERR ' .. name .. ' must be a positive integer') end
  return n
end

local function non_negative_arg(text, name)
  local n, e = integer_arg(text, name)
  if e then return nil, e end
  if int_cmp(n, '0') < 0 then return nil, redis.error_reply('ERR ' .. name .. ' must not be negative') end
  return n
end

-- The server's clock in ns (a string; TIME gives microseconds), read
-- once per call.
local function now_ns()
  local t = redis.call('TIME')
  -- seconds * 10^9 + microseconds * 1000, written out.
  return t[1] .. string.format('%06d', tonumber(t[2])) .. '000'
end

-- The same reading in ms.
local function now_ms()
  local t = redis.call('TIME')
  return t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
end

-- The end of `seconds` from `now` (ms), or nil where EXPIRE would refuse
-- it as overflowing.
local function span_end_ms(now, seconds)
  local ms = int_mul(seconds, '1000')
  if not int_fits(ms) then return nil end
  local at = int_add(now, ms)
  if not int_fits(at) then return nil end
  return at
end

local function seconds_from(text, name, now, command)
  local seconds, e = positive_arg(text, name)
  if e then return nil, e end
  local at = span_end_ms(now, seconds)
  if at == nil then
    return nil, redis.error_reply("ERR invalid expire time in '" .. command .. "' command: " .. name .. ' is too large')
  end
  return at
end

-- The integer a string key holds (a string), nil for a missing key, or an
-- error reply (another type, not an integer).
local function read_integer(key)
  local kind = type_of(key)
  if kind == 'none' then return nil end
  if kind ~= 'string' then return nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
  local n = parse_int(redis.call('GET', key))
  if n == nil then return nil, redis.error_reply('ERR value is not an integer or out of range') end
  return n
end

-- Bytes as the module shows them in an error: invalid UTF-8 replaced as
-- Rust's from_utf8_lossy does (each maximal invalid part by U+FFFD), NUL
-- bytes dropped.
local function shown(bytes)
  local out, i, n = {}, 1, #bytes
  local function between(at, low, high)
    local b = bytes:byte(at)
    return b ~= nil and b >= low and b <= high
  end
  while i <= n do
    local b = bytes:byte(i)
    local second, rest
    if b < 0x80 then second, rest = nil, 0
    elseif b >= 0xC2 and b <= 0xDF then second, rest = {0x80, 0xBF}, 0
    elseif b == 0xE0 then second, rest = {0xA0, 0xBF}, 1
    elseif (b >= 0xE1 and b <= 0xEC) or b == 0xEE or b == 0xEF then second, rest = {0x80, 0xBF}, 1
    elseif b == 0xED then second, rest = {0x80, 0x9F}, 1
    elseif b == 0xF0 then second, rest = {0x90, 0xBF}, 2
    elseif b >= 0xF1 and b <= 0xF3 then second, rest = {0x80, 0xBF}, 2
    elseif b == 0xF4 then second, rest = {0x80, 0x8F}, 2
    else second, rest = false, 0 end
    if second == nil then
      if b ~= 0 then out[#out + 1] = string.char(b) end
      i = i + 1
    elseif second == false or not between(i + 1, second[1], second[2]) then
      out[#out + 1] = '\239\191\189'
      i = i + 1
    else
      local good = 2
      while good < rest + 2 and between(i + good, 0x80, 0xBF) do good = good + 1 end
      if good == rest + 2 then
        out[#out + 1] = bytes:sub(i, i + good - 1)
      else
        out[#out + 1] = '\239\191\189'
      end
      i = i + good
    end
  end
  return table.concat(out)
end

-- Options `NAME value` from ARGV[from] on (names case-insensitive, once
-- each). `names` lists them; a name in `key_options` takes its value from
-- KEYS (the next one, from KEYS[key_from]) since ARGV leaves keys out.
-- `each(name, value)` may return an error reply. Returns an error reply or
-- nil.
local function walk_options(from, names, key_options, key_from, each)
  local seen, i, k = {}, from, key_from
  while i <= #ARGV do
    local given = ARGV[i]
    local name = nil
    for _, known in ipairs(names) do
      if string.upper(given) == known then name = known end
    end
    if name == nil then return redis.error_reply("ERR unknown option '" .. shown(given) .. "'") end
    if seen[name] then return redis.error_reply('ERR option ' .. name .. ' is given more than once') end
    seen[name] = true
    local value
    if key_options[name] then
      value = KEYS[k]
      k = k + 1
      i = i + 1
    else
      value = ARGV[i + 1]
      i = i + 2
    end
    if value == nil then return redis.error_reply('ERR option ' .. name .. ' needs a value') end
    local e = each(name, value)
    if e then return e end
  end
  return nil
end

-- An integer for the reply. Lua turns a number into an integer reply
-- through a double, exact to 2^53 only: past that the exact decimal goes
-- as a bulk string, which the packages read as the integer it is.
local function reply_int(n)
  local _, m = split(n)
  if mag_cmp(m, '9007199254740992') > 0 then return n end
  return tonumber(n)
end

local OVERFLOW = 'ERR increment or decrement would overflow'

-- The options from ARGV[from] on, among `names`: ALERT (its stream is
-- KEYS[2], never the counter KEYS[1]), MAXLEN (only with ALERT) and a
-- command's own, each checked where it stands by `check_own(name, value)`
-- (if given; an error reply or nil). Returns the alert ({stream, maxlen}
-- or nil), the own options' values by name, or an error reply last.
local function alert_options(from, names, check_own)
  local alert, values = {}, {}
  local e = walk_options(from, names, {ALERT = true}, 2, function(name, value)
    if name == 'ALERT' then
      if value == KEYS[1] then return redis.error_reply("ERR alert stream must not be the counter's key") end
      alert.stream = value
    elseif name == 'MAXLEN' then
      local n, bad = positive_arg(value, 'maxlen')
      if bad then return bad end
      alert.maxlen = n
    else
      local bad = check_own and check_own(name, value)
      if bad then return bad end
      values[name] = value
    end
  end)
  if e then return nil, nil, e end
  if alert.stream == nil then
    if alert.maxlen ~= nil then return nil, nil, redis.error_reply('ERR option MAXLEN is only valid with ALERT') end
    alert = nil
  end
  return alert, values
end

-- The MON commands' tail from ARGV[from]: thresholds, then the options
-- (the first option name after the first threshold starts them): ALERT,
-- MAXLEN and the command's `own`, checked by `check_own` as
-- `alert_options` does. Returns the thresholds (strings), the alert
-- ({stream, maxlen} or nil), the own options' values by name, or an error
-- reply last.
local function mon_tail(from, own, check_own)
  local names = {'ALERT', 'MAXLEN'}
  for _, name in ipairs(own) do names[#names + 1] = name end
  local options_at = #ARGV + 1
  for i = from + 1, #ARGV do
    local token = ARGV[i]
    if token:match('^%a') then
      for _, name in ipairs(names) do
        if string.upper(token) == name and options_at > i then options_at = i end
      end
    end
  end
  if options_at - from > 32 then return nil, nil, nil, redis.error_reply('ERR too many threshold values (at most 32)') end
  local thresholds = {}
  for i = from, options_at - 1 do
    local position = i - from + 1
    local t, e = positive_arg(ARGV[i], 'threshold #' .. position)
    if e then return nil, nil, nil, e end
    if position > 1 and int_cmp(t, thresholds[position - 1]) <= 0 then
      return nil, nil, nil, redis.error_reply('ERR threshold #' .. position .. ' must be greater than #' .. (position - 1)
        .. ': threshold values must be strictly increasing')
    end
    thresholds[position] = t
  end
  local alert, values, e = alert_options(options_at, names, check_own)
  if e then return nil, nil, nil, e end
  return thresholds, alert, values
end

-- A stream named by a call (ALERT's, LEDGER's) is a stream or nothing,
-- even where nothing would be written to it.
local function require_stream(key)
  local kind = type_of(key)
  if kind ~= 'none' and kind ~= 'stream' then return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
  return nil
end

-- MON.INCRCHECK's and MON.SLIDECHECK's head, `key increment window
-- threshold`: the arity, the clock, then `increment` and `window`.
-- Returns now (ms), the increment, the window's end from now (ms), or an
-- error reply last.
local function mon_head(command)
  if 1 + #KEYS + #ARGV < 5 then return nil, nil, nil, wrong_arity(command) end
  local now = now_ms()
  local increment, e = positive_arg(ARGV[1], 'increment')
  if e then return nil, nil, nil, e end
  local expires_at
  expires_at, e = seconds_from(ARGV[2], 'window', now, command)
  if e then return nil, nil, nil, e end
  return now, increment, expires_at
end

-- The stream of an alert is a stream or nothing, checked before the
-- counter is read.
local function alert_check(alert)
  if alert == nil then return nil end
  return require_stream(alert.stream)
end

-- The counter KEYS[1] (nil when missing) once the alert's stream is
-- checked, in the module's order; or an error reply.
local function read_counter(alert)
  local e = alert_check(alert)
  if e then return nil, e end
  return read_integer(KEYS[1])
end

-- The 1-based index of the highest threshold t with prev < t <= current,
-- or 0.
local function crossing_level(prev, current, thresholds)
  local level = 0
  for i, t in ipairs(thresholds) do
    if int_cmp(prev, t) < 0 and int_cmp(t, current) <= 0 then level = i end
  end
  return level
end

-- Appends an entry of `fields` to the alert's stream; an error reply if
-- the server refuses the XADD (nothing is written then).
local function alert_append(alert, fields)
  if alert == nil then return nil end
  local xadd = {'XADD', alert.stream}
  if alert.maxlen then
    xadd[#xadd + 1] = 'MAXLEN'
    xadd[#xadd + 1] = '~'
    xadd[#xadd + 1] = alert.maxlen
  end
  xadd[#xadd + 1] = '*'
  for _, f in ipairs(fields) do xadd[#xadd + 1] = f end
  local added = redis.pcall(unpack(xadd))
  if type(added) == 'table' and added.err then return added end
  return nil
end

-- COUPON.ISSUE's and COUPON.REVOKE's options from ARGV[from] on (only
-- LEDGER, whose stream is KEYS[2]), then the coupon set KEYS[1]'s size (0
-- when missing), in the module's order: a campaign (the module's type;
-- the scripts keep none yet) is WRONGTYPE; a set keeps no ledger, so a
-- LEDGER stream (checked to be a stream or nothing first) is an error;
-- any other type is WRONGTYPE. Returns the size, or an error reply.
local function coupon_set_size(from)
  local ledger
  local e = walk_options(from, {'LEDGER'}, {LEDGER = true}, 2, function(_, value) ledger = value end)
  if e then return nil, e end
  local kind = type_of(KEYS[1])
  if kind == 'guard-cpn' then return nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
  if ledger ~= nil then
    e = require_stream(ledger)
    if e then return nil, e end
    return nil, redis.error_reply('ERR ledger: the key is no campaign and keeps no ledger')
  end
  if kind == 'none' then return 0 end
  if kind ~= 'set' then return nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value') end
  return redis.call('SCARD', KEYS[1])
end

-- CL.THROTTLE's GCRA, over 64-bit nanoseconds (see src/throttle/gcra.rs,
-- whose rules these follow step by step).

-- A limiter's `max_burst count period`, checked in that order.
local function limit_args(max_burst, count, period)
  local limit, e = {}, nil
  limit.max_burst, e = non_negative_arg(max_burst, 'max_burst')
  if e then return nil, e end
  limit.count, e = positive_arg(count, 'count')
  if e then return nil, e end
  limit.period, e = positive_arg(period, 'period')
  if e then return nil, e end
  return limit
end

-- The limiter asked for `quantity`: its limit, emission interval,
-- tolerance and increment in ns, or an error naming the argument whose
-- product overflows.
local function gcra_rate(limit, quantity)
  local function too_large(name, why) return redis.error_reply('ERR ' .. name .. ' is too large: ' .. why) end
  local period_ns = int_mul(limit.period, '1000000000')
  if not int_fits(period_ns) then return nil, too_large('period', 'it overflows in nanoseconds') end
  local emission = int_floordiv(period_ns, limit.count)
  if emission == '0' then return nil, too_large('count', 'period / count rounds to 0 nanoseconds') end
  local size = int_add(limit.max_burst, '1')
  if not int_fits(size) then return nil, too_large('max_burst', 'max_burst + 1 overflows') end
  local tolerance = int_mul(emission, size)
  if not int_fits(tolerance) then return nil, too_large('max_burst', 'the burst overflows in nanoseconds') end
  local increment = int_mul(emission, quantity)
  if not int_fits(increment) then return nil, too_large('quantity', 'it overflows in nanoseconds') end
  return {limit = size, emission = emission, tolerance = tolerance, increment = increment}
end

-- ceil(ns / unit) for ns >= 0.
local function ceil_div(ns, unit)
  local q, r = int_floordiv(ns, unit)
  if r ~= '0' then q = int_add(q, '1') end
  return q
end

-- A request at `now` (ns) against the stored arrival time `tat` (nil: no
-- key): {limited, limit, remaining, retry, reset, tat, expires_at_ms}
-- (tat nil: nothing to store), or an error reply.
local function gcra_decide(tat, now, rate)
  if tat == nil or int_cmp(tat, now) < 0 then tat = now end
  local new_tat = int_add(tat, rate.increment)
  local allow_at = int_sub(new_tat, rate.tolerance)
  local d = {limit = rate.limit, retry = '-1'}
  local ttl
  if int_cmp(allow_at, now) > 0 then
    d.limited = true
    if int_cmp(rate.increment, rate.tolerance) <= 0 then d.retry = ceil_div(int_sub(allow_at, now), '1000000000') end
    ttl = int_sub(tat, now)
  else
    d.limited = false
    ttl = int_sub(new_tat, now)
  end
  if not d.limited and int_cmp(rate.increment, '0') > 0 then
    if not int_fits(new_tat) then return nil, redis.error_reply('ERR quantity is too large: the arrival time would overflow') end
    d.tat = new_tat
    d.expires_at_ms = ceil_div(new_tat, '1000000')
  end
  local room = int_sub(rate.tolerance, ttl)
  d.remaining = int_cmp(room, '0') > 0 and (int_floordiv(room, rate.emission)) or '0'
  d.reset = ceil_div(ttl, '1000000000')
  return d
end

local function gcra_reply(d)
  return {d.limited and 1 or 0, reply_int(d.limit), reply_int(d.remaining), reply_int(d.retry), reply_int(d.reset)}
end
