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

-- A command's `numkeys` (ARGV[1]): 1 to 16, a Lua number; or an error
-- reply.
local function numkeys_arg()
  local n, e = positive_arg(ARGV[1], 'numkeys')
  if e then return nil, e end
  if int_cmp(n, '16') > 0 then return nil, err('ERR numkeys must be at most 16') end
  return tonumber(n)
end

-- The server's clock in ns (a string; TIME gives microseconds), read
-- once per call: `time`, TIME's reply, when the script has read it.
local function now_ns(time)
  local t = time or redis.call('TIME')
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

-- Calendar windows (`day`, `TZ zone`): a period ends at the first instant
-- whose local time is in another period. Lua has no zone data, so the
-- packages send a zone as `name|from|to|offset|t1:o1|t2:o2...`: its UTC
-- offset (s) before t1, then from each change on (UTC s), for the span
-- from..to around their clock. Times here are ms, below 2^53: exact.
local CALENDAR = {MINUTE = 60000, HOUR = 3600000, DAY = 86400000, WEEK = 'week', MONTH = 'month'}
local UTC = {from = -math.huge, to = math.huge, offsets = {0}, starts = {}}
local TZ_UNKNOWN = 'ERR tz is not a time zone name the server knows (e.g. Asia/Seoul)'
local TZ_SECONDS = 'ERR tz needs a calendar window (minute, hour, day, week or month)'

local function calendar_unit(text)
  return CALENDAR[string.upper(text)]
end

-- Days since 1970-01-01 of a date and back (proleptic Gregorian).
local function days_from_civil(y, m, d)
  if m <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * (m > 2 and m - 3 or m + 9) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
end

local function civil_from_days(days)
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local m = mp < 10 and mp + 3 or mp - 9
  return yoe + era * 400 + (m <= 2 and 1 or 0), m
end

-- The local time (ms) at which the period holding local time `l` ends.
local function next_start(unit, l)
  if unit == 'week' then
    -- 1970-01-01 was a Thursday: weeks from Monday 1969-12-29.
    return ((math.floor((math.floor(l / 86400000) + 3) / 7) + 1) * 7 - 3) * 86400000
  elseif unit == 'month' then
    local y, m = civil_from_days(math.floor(l / 86400000))
    if m == 12 then y, m = y + 1, 1 else m = m + 1 end
    return days_from_civil(y, m, 1) * 86400000
  end
  return (math.floor(l / unit) + 1) * unit
end

-- A zone as the packages send it (or UTC by name), covering `now` and the
-- month after; nil where it is none.
-- Seconds as the packages write them: at most 12 digits (so every time
-- here stays exact), an offset within a day.
local function zone_seconds(text, offset)
  if not (text and text:match('^%-?%d%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?%d?$')) then return nil end
  local n = tonumber(text)
  if offset and (n <= -86400 or n >= 86400) then return nil end
  return n
end

local function zone_rules(text, now)
  if string.upper(text) == 'UTC' then return UTC end
  local parts = {}
  for part in (text .. '|'):gmatch('([^|]*)|') do
    parts[#parts + 1] = part
    if #parts > 68 then return nil end
  end
  local from, to, first = zone_seconds(parts[2]), zone_seconds(parts[3]), zone_seconds(parts[4], true)
  if not (from and to and first) or now < from * 1000 or now + 32 * 86400000 > to * 1000 then return nil end
  local rules = {offsets = {first}, starts = {}}
  local last = from
  for i = 5, #parts do
    local at, offset = parts[i]:match('^([^:]*):(.*)$')
    at, offset = zone_seconds(at), zone_seconds(offset, true)
    -- Changes in order, within the span.
    if not (at and offset) or at <= last or at > to then return nil end
    rules.starts[#rules.starts + 1] = at
    rules.offsets[#rules.offsets + 1] = offset
    last = at
  end
  return rules
end

-- `TZ value` beside the window (`unit` nil: seconds): the zone's rules,
-- or an error reply.
local function tz_arg(value, unit, now)
  if unit == nil then return nil, err(TZ_SECONDS) end
  local rules = zone_rules(value, now)
  if rules == nil then return nil, err(TZ_UNKNOWN) end
  return rules
end

-- The end (ms) of the period of `unit` holding `now` (ms) in `rules`: where
-- the local time reaches the next period, or a change of the clocks that
-- leaves the period first.
local function period_end_ms(unit, rules, now)
  local i = 1
  while rules.starts[i] and rules.starts[i] * 1000 <= now do i = i + 1 end
  local target = next_start(unit, now + rules.offsets[i] * 1000)
  local from = now
  while true do
    local offset = rules.offsets[i] * 1000
    if from ~= now and next_start(unit, from + offset) ~= target then return from end
    local ends = rules.starts[i] and rules.starts[i] * 1000
    if ends == nil or target - offset < ends then return math.max(target - offset, from) end
    from, i = ends, i + 1
  end
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
-- Returns now (ms), the increment, the window's end from now (ms) or, with
-- `calendar` (MON.INCRCHECK), `{unit = u}` for the calendar unit `window`
-- names, or an error reply last.
local function mon_head(command, calendar)
  if 1 + #KEYS + #ARGV < 5 then return nil, nil, nil, wrong_arity(command) end
  local now = now_ms()
  local increment, e = positive_arg(ARGV[1], 'increment')
  if e then return nil, nil, nil, e end
  local unit = calendar and calendar_unit(ARGV[2])
  if unit then return now, increment, {unit = unit} end
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

-- The arguments of the MON commands' common call (their fast paths,
-- above their `-- @prelude`): `window threshold...` in ARGV[2..n], and
-- from ARGV[from] on each a canonical positive integer of at most 15
-- digits (MON.INCRCHECK's and MON.SLIDECHECK's increment from 1,
-- MON.DISTINCT's member not), the window of at most `window_digits`, at
-- most 32 thresholds, increasing.
local function quick_mon_args(from, n, window_digits)
  if n < 3 or n > 34 or #ARGV[2] > window_digits then return false end
  local last = 0
  for i = from, n do
    local a = ARGV[i]
    if #a > 15 or not a:find('^[1-9]%d*$') then return false end
    if i >= 3 then
      local t = tonumber(a)
      if t <= last then return false end
      last = t
    end
  end
  return true
end

-- The common GCRA call in Lua numbers: the fast path of CL.THROTTLE,
-- CL.THROTTLEALL and CL.REFUND, above their `-- @prelude` (which brings
-- these first and the rest of what they use after it). Arguments of at most 15 digits
-- (the period of at most 6: at most 10^15 ns), the emission interval,
-- tolerance and increment below 10^15 ns, and the stored arrival time
-- less than 10^6 s ahead of now. Times are taken relative to now (ns),
-- which keeps every value below 2^53, exact; anything else goes the
-- exact way (gcra_decide below).

-- floor(a / b) for |a| < 2^53 and 0 < b.
local function quick_div(a, b)
  local q = math.floor(a / b)
  local r = a - q * b
  if r < 0 then return q - 1 elseif r >= b then return q + 1 end
  return q
end

-- A limiter (ARGV's max_burst, count, period and quantity) in Lua
-- numbers, or nil where the exact way decides.
local function quick_rate(max_burst, count, period, quantity)
  if #period > 6 or count == '0' or period == '0' then return nil end
  local texts = {max_burst, count, period, quantity}
  for i = 1, 4 do
    local a = texts[i]
    if #a > 15 or not (a == '0' or a:find('^[1-9]%d*$')) then return nil end
  end
  local size = max_burst + 1
  local emission = quick_div(period * 1000000000, tonumber(count))
  local tolerance, increment = emission * size, emission * tonumber(quantity)
  -- A product at or past 10^15 is so as a double too.
  if emission <= 0 or tolerance >= 1e15 or increment >= 1e15 then return nil end
  return {size = size, emission = emission, tolerance = tolerance, increment = increment}
end

-- The arrival time stored at `key` less now (`time`, TIME's reply) in ns:
-- 0 for none or one past; nil where the exact way decides. MGET reads
-- another type as nothing, where GET would fail with an error the server
-- counts beside the script's own.
local function quick_tat(key, time)
  local stored = redis.call('MGET', key)[1]
  if not stored then
    if redis.call('EXISTS', key) == 0 then return 0 end
    return nil
  end
  if #stored > 19 or not stored:find('^[1-9]%d*$') then return nil end
  local ahead = (#stored > 9 and tonumber(stored:sub(1, -10)) or 0) - time[1]
  if ahead > 1000000 then return nil end
  if ahead < -1000000 then return 0 end
  local tat = ahead * 1000000000 + stored:sub(-9) - time[2] * 1000
  return tat < 0 and 0 or tat
end

-- A request of `rate` against the arrival time `tat` (relative, ns): its
-- reply, and the arrival time to store (relative) when it consumes.
local function quick_decide(rate, tat)
  local new_tat, limited, retry, ttl = tat + rate.increment, 0, -1, tat
  local allow_at = new_tat - rate.tolerance
  if allow_at > 0 then
    limited = 1
    if rate.increment <= rate.tolerance then retry = -quick_div(-allow_at, 1000000000) end
  else
    ttl = new_tat
  end
  local remaining = 0
  if rate.tolerance > ttl then remaining = quick_div(rate.tolerance - ttl, rate.emission) end
  local reply = {limited, rate.size, remaining, retry, -quick_div(-ttl, 1000000000)}
  if limited == 0 and rate.increment > 0 then return reply, new_tat end
  return reply, nil
end

-- Stores at `key` the arrival time `tat` (relative to `time`, ns), which
-- it expires at.
local function quick_store(key, time, tat)
  local ns = time[2] * 1000 + tat
  local s = quick_div(ns, 1000000000)
  ns = ns - s * 1000000000
  s = s + time[1]
  redis.call('SET', key, string.format('%d%09d', s, ns), 'PXAT', string.format('%d', s * 1000 - quick_div(-ns, 1000000)))
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

-- `BLOCK seconds` at `now` (ns): the penalty in ns, or an error naming
-- `block` (now + it must fit 64 bits).
local function block_arg(text, now)
  local s, e = positive_arg(text, 'block')
  if e then return nil, e end
  local ns = int_mul(s, '1000000000')
  if not int_fits(ns) or not int_fits(int_add(now, ns)) then
    return nil, redis.error_reply('ERR block is too large: now + block overflows in nanoseconds')
  end
  return ns
end

-- Does BLOCK act on a decision: refused, and not for good?
local function gcra_blockable(d)
  return d.limited and d.retry ~= '-1'
end

-- A refused cell blocked for `block` ns: its arrival time becomes
-- max(stored, now + block + tolerance - emission), the reply the
-- request's against it (d.tat set when there is something to store).
local function gcra_blocked(tat, now, rate, block)
  local target = int_add(int_add(now, block), int_sub(rate.tolerance, rate.emission))
  if tat ~= nil and int_cmp(tat, target) >= 0 then return gcra_decide(tat, now, rate) end
  if not int_fits(target) then return nil, redis.error_reply('ERR block is too large: the arrival time would overflow') end
  local d, e = gcra_decide(target, now, rate)
  if e then return nil, e end
  d.tat = target
  d.expires_at_ms = ceil_div(target, '1000000')
  return d
end

-- CL.REFUND: the increment given back at `now`, never before now. Returns
-- the state after it as a peek gives it, and the write: nil (nothing),
-- 'del', or {tat, expires_at_ms}.
local function gcra_refund(tat, now, rate)
  local write, after = nil, tat
  if tat ~= nil and int_cmp(tat, now) > 0 then
    local back = int_sub(tat, rate.increment)
    if int_cmp(back, now) <= 0 then
      write, after = 'del', nil
    else
      write, after = {tat = back, expires_at_ms = ceil_div(back, '1000000')}, back
    end
  end
  local peek = {limit = rate.limit, emission = rate.emission, tolerance = rate.tolerance, increment = '0'}
  local d = gcra_decide(after, now, peek)
  return d, write
end

local function gcra_reply(d)
  return {d.limited and 1 or 0, reply_int(d.limit), reply_int(d.remaining), reply_int(d.retry), reply_int(d.reset)}
end

-- Campaigns. The module keeps one in its own type (guard-cpn); the
-- scripts keep it in one sorted set (the command's key) whose members all
-- score 0, so the set is ordered by the members' bytes and each index is
-- a range of them, read and counted in O(log n) (ZRANGEBYLEX, ZLEXCOUNT).
-- Numbers in members are 19-digit decimals (`pad`), whose order is the
-- numbers'; a user or a request id follows its length. The members
-- (docs/clients.md, "Managed services"):
--   A<limit> <peruser> <hold> <made> <released> <expired> <confirmed> <maxlen|-> [+<cx> <hx> ]<-|L<stream>>
--       the settings, the totals and the ledger: the first member; the
--       `+` part only while some claim holds more than 1 unit: cx the
--       extra units (units - 1, summed) of the confirmed claims, hx those
--       of the stored holds (live or expired, not reclaimed yet)
--   c<claim><h|c><expires_at_ms|0><#user><user><request id>  a stored claim of 1 unit
--   c<claim><H|C><expires_at_ms|0><units><#user><user><request id>  of more
--   e<expires_at_ms><claim>              a held claim, by expiry
--   m<expires_at_ms><claim><units>       a hold of more than 1 unit, by expiry
--   u<#user><user>h<expires_at_ms><claim> / u<#user><user>c<claim>
--       a user's held claims by expiry, its confirmed claims
--   u<#user><user>m<expires_at_ms><claim><units>  a user's holds of more than 1 unit
--   u<#user><user>x<cx> <hx>             a user's extra units, as A's (plain decimals: the
--       stored holds' may pass 64 bits; only while not both 0)
--   r<#id><id><claim>                    the stored claim holding an id
--   k<n><user>                           a user with n >= 1 confirmed units
-- Live holds, expired ones not reclaimed yet and confirmed claims are
-- stored, as the module stores them; released and reclaimed ones go.
-- A campaign whose claims are all of 1 unit has no `+` part, no `m` and
-- no `x` members: its members are those of a campaign made before units.

local NO_SUCH_CAMPAIGN = 'ERR no such campaign'
local RECLAIM_PER_CALL = 16
local CAMPAIGN_FIELDS = {'limit', 'peruser', 'hold', 'made', 'released', 'expired', 'confirmed', 'maxlen'}

-- A non-negative integer (a canonical string or a small Lua number) as 19
-- digits, and back.
local function pad(n)
  if type(n) == 'number' then n = string.format('%d', n) end
  return string.rep('0', 19 - #n) .. n
end

local function unpad(digits)
  return (digits:gsub('^0+(%d)', '%1'))
end

-- Bounds of the members that start with `prefix` at or after `from`.
local function lex_range(prefix, from)
  return '[' .. prefix .. (from or ''), '(' .. prefix .. '\255'
end

local function lex_count(key, prefix, from)
  local low, high = lex_range(prefix, from)
  return redis.call('ZLEXCOUNT', key, low, high)
end

local function lex_first(key, prefix, from)
  local low, high = lex_range(prefix, from)
  return redis.call('ZRANGEBYLEX', key, low, high, 'LIMIT', 0, 1)[1]
end

-- A user's (or a request id's) part of a member.
local function sized(bytes)
  return pad(#bytes) .. bytes
end

-- A claim as stored: {number, held, expires (its ms, a string; held
-- only), units (a string), user, id (nil when none)}.
local function claim_of(member)
  local state = member:sub(21, 21)
  local at, units = 41, '1'
  if state == 'H' or state == 'C' then at, units = 60, unpad(member:sub(41, 59)) end
  local size = tonumber(member:sub(at, at + 18))
  local id = member:sub(at + 19 + size)
  return {
    number = unpad(member:sub(2, 20)),
    held = state == 'h' or state == 'H',
    expires = unpad(member:sub(22, 40)),
    units = units,
    user = member:sub(at + 19, at + 18 + size),
    id = id ~= '' and id or nil,
  }
end

-- The members a claim is stored as: its record and its indexes.
local function claim_members(claim)
  local user = 'u' .. sized(claim.user)
  local number = pad(claim.number)
  local many = claim.units ~= '1'
  local state = claim.held and 'h' or 'c'
  local record = 'c' .. number .. (many and state:upper() or state) .. pad(claim.held and claim.expires or '0')
  local members = {record .. (many and pad(claim.units) or '') .. sized(claim.user) .. (claim.id or '')}
  if claim.held then
    members[2] = 'e' .. pad(claim.expires) .. number
    members[3] = user .. 'h' .. pad(claim.expires) .. number
    if many then
      members[4] = 'm' .. pad(claim.expires) .. number .. pad(claim.units)
      members[5] = user .. 'm' .. pad(claim.expires) .. number .. pad(claim.units)
    end
  else
    members[2] = user .. 'c' .. number
  end
  if claim.id then members[#members + 1] = 'r' .. sized(claim.id) .. number end
  return members
end

-- Is a stored claim live at `now`? A hold is gone once now is past its
-- expiry.
local function claim_live(claim, now)
  return not claim.held or int_cmp(now, claim.expires) <= 0
end

-- The campaign at `key`: its settings and totals (strings) and ledger, or
-- an error reply: another type, or a sorted set of no campaign's layout,
-- is WRONGTYPE; a missing key has no campaign.
local function campaign_open(key)
  local kind = type_of(key)
  if kind == 'none' then return nil, err(NO_SUCH_CAMPAIGN) end
  if kind ~= 'zset' then return nil, err(WRONGTYPE) end
  local first = redis.call('ZRANGE', key, 0, 0, 'WITHSCORES')
  local meta = first[1]
  if first[2] ~= '0' or meta:byte(1) ~= 65 then return nil, err(WRONGTYPE) end
  local c, at = {key = key, meta = meta}, 2
  for _, field in ipairs(CAMPAIGN_FIELDS) do
    local space = meta:find(' ', at, true)
    if space == nil then return nil, err(WRONGTYPE) end
    c[field] = meta:sub(at, space - 1)
    at = space + 1
  end
  if c.maxlen == '-' then c.maxlen = nil end
  c.confirmed_extra, c.held_extra = '0', '0'
  if meta:byte(at) == 43 then
    local cx, hx, rest = meta:match('^%+(%d+) (%d+) ()', at)
    if rest == nil then return nil, err(WRONGTYPE) end
    c.confirmed_extra, c.held_extra, at = cx, hx, rest
  end
  local ledger = meta:sub(at)
  if ledger ~= '-' then c.ledger = ledger:sub(2) end
  return c
end

-- The first member, as `c` now says.
local function campaign_meta(c)
  local fields = {}
  for i, field in ipairs(CAMPAIGN_FIELDS) do fields[i] = c[field] or '-' end
  local extra = ''
  if (c.confirmed_extra or '0') ~= '0' or (c.held_extra or '0') ~= '0' then
    extra = '+' .. c.confirmed_extra .. ' ' .. c.held_extra .. ' '
  end
  return 'A' .. table.concat(fields, ' ') .. ' ' .. extra .. (c.ledger and 'L' .. c.ledger or '-')
end

-- Writes `c`'s first member if it changed.
local function campaign_save(c)
  local meta = campaign_meta(c)
  if meta == c.meta then return end
  if c.meta then redis.call('ZREM', c.key, c.meta) end
  redis.call('ZADD', c.key, 0, meta)
  c.meta = meta
end

-- The stored claim numbered `number` (a string), live or an expired hold.
local function campaign_claim(c, number)
  local found = lex_first(c.key, 'c' .. pad(number))
  return found and claim_of(found)
end

-- The stored claim holding `id`, live or not.
local function campaign_id_owner(c, id)
  local found = lex_first(c.key, 'r' .. sized(id))
  return found and campaign_claim(c, unpad(found:sub(-19)))
end

-- Live holds at `now`.
local function campaign_held(c, now)
  return lex_count(c.key, 'e', pad(now))
end

-- Confirmed claims of `user`.
local function user_confirmed(c, user)
  return lex_count(c.key, 'u' .. sized(user) .. 'c')
end

-- The extra units (units - 1, summed) of the live holds among the holds
-- of more than 1 unit that `prefix` indexes (`prefix<expires_at_ms><claim>
-- <units>`), given `stored`, those of all of them (live, or expired and
-- not reclaimed yet): both sides are counted (O(log n)) and the smaller
-- one is walked, so the work is O(log n + min(live, expired) such holds).
-- Nothing is read when none is stored.
local function live_extra(key, prefix, stored, now)
  if stored == '0' then return '0' end
  local edge, last = prefix .. pad(now), '(' .. prefix .. '\255'
  local live = redis.call('ZLEXCOUNT', key, '[' .. edge, last)
  local gone = redis.call('ZLEXCOUNT', key, '[' .. prefix, '(' .. edge)
  local low, high = '[' .. edge, last
  if gone < live then low, high = '[' .. prefix, '(' .. edge end
  local sum = '0'
  for _, member in ipairs(redis.call('ZRANGEBYLEX', key, low, high)) do
    sum = int_add(sum, int_sub(unpad(member:sub(-19)), '1'))
  end
  if gone < live then return int_sub(stored, sum) end
  return sum
end

-- Live held units at `now`.
local function campaign_held_units(c, now)
  return int_add(format_int(campaign_held(c, now)), live_extra(c.key, 'm', c.held_extra, now))
end

-- Confirmed units.
local function campaign_confirmed_units(c)
  return int_add(c.confirmed, c.confirmed_extra)
end

-- The extra units of `user` (its confirmed claims', its stored holds'),
-- and the member that keeps them (nil when both are 0). `exact` reads
-- the member even where the campaign has no extra units (a write that is
-- changing them).
local function user_extras(c, user, exact)
  if not exact and c.confirmed_extra == '0' and c.held_extra == '0' then return '0', '0', nil end
  local of_user = 'u' .. sized(user) .. 'x'
  local found = lex_first(c.key, of_user)
  if found == nil then return '0', '0', nil end
  local cx, hx = found:sub(#of_user + 1):match('^(%d+) (%d+)$')
  return cx, hx, found
end

-- Confirmed units of `user`.
local function user_confirmed_units(c, user)
  local cx = user_extras(c, user)
  return int_add(format_int(user_confirmed(c, user)), cx)
end

-- Live units of `user` at `now`.
local function user_live_units(c, user, now)
  local cx, hx = user_extras(c, user)
  local of_user = 'u' .. sized(user)
  local claims = user_confirmed(c, user) + lex_count(c.key, of_user .. 'h', pad(now))
  return int_add(int_add(format_int(claims), cx), live_extra(c.key, of_user .. 'm', hx, now))
end

-- Adds `confirmed` and `held` (integers, either sign) to the extra units
-- of `c` and of `user`.
local function add_extras(c, user, confirmed, held)
  if confirmed == '0' and held == '0' then return end
  c.confirmed_extra = int_add(c.confirmed_extra, confirmed)
  c.held_extra = int_add(c.held_extra, held)
  local cx, hx, member = user_extras(c, user, true)
  if member then redis.call('ZREM', c.key, member) end
  cx, hx = int_add(cx, confirmed), int_add(hx, held)
  if cx ~= '0' or hx ~= '0' then redis.call('ZADD', c.key, 0, 'u' .. sized(user) .. 'x' .. cx .. ' ' .. hx) end
end

-- max(0, limit - confirmed - held) (units), as COUPON.INFO reports it.
local function campaign_available(limit, confirmed, held)
  local n = int_sub(int_sub(limit, confirmed), held)
  return int_cmp(n, '0') < 0 and '0' or n
end

-- -1 when `units` more would put `user`'s live units past PERUSER, -2
-- when they would put the campaign's past `limit`, in that order; nil
-- when there is room.
local function campaign_room(c, user, now, units)
  if int_cmp(int_add(user_live_units(c, user, now), units), c.peruser) > 0 then return -1 end
  local live = int_add(campaign_confirmed_units(c), campaign_held_units(c, now))
  if int_cmp(int_add(live, units), c.limit) > 0 then return -2 end
  return nil
end

-- The number a new claim gets, or an error reply once the last is made.
local function campaign_next_claim(c)
  if c.made == INT_MAX then
    return nil, err('ERR the campaign has used every claim number (the last is 9223372036854775807)')
  end
  return int_add(c.made, '1')
end

-- A write's changes, as the module decides them: `{op, claim}` with op
-- 'put' (a new claim), 'confirm', 'release' or 'expire' (the reclaim of
-- an expired hold), or `{op = 'alter', settings}` (COUPON.ALTER's new
-- limit, peruser and hold). The reclaims a writing call owes come first: `stale`
-- (a request id's old claim, an expired hold) if any, then the oldest
-- expired holds (by expiry, then number), RECLAIM_PER_CALL in all.
-- COUPON.RECLAIM reclaims `budget` instead.
local function campaign_reclaims(c, now, stale, budget)
  budget = budget or RECLAIM_PER_CALL
  local plan = {}
  if stale then plan[1] = {op = 'expire', claim = stale} end
  local oldest = redis.call('ZRANGEBYLEX', c.key, '[e', '(e' .. pad(now), 'LIMIT', 0, budget)
  for _, member in ipairs(oldest) do
    if #plan == budget then break end
    local number = unpad(member:sub(21, 39))
    if not (stale and stale.number == number) then
      plan[#plan + 1] = {op = 'expire', claim = campaign_claim(c, number)}
    end
  end
  return plan
end

-- The ledger's entries of `plan` on `c` at `now`, in order, each with
-- what is available after it (units) and, for a claim, its units (a
-- confirm's: those confirmed); a release is recorded as `releases`.
local function campaign_records(c, plan, now, releases)
  local records = {}
  if c.ledger == nil then return records end
  local limit, confirmed, held = c.limit, campaign_confirmed_units(c), campaign_held_units(c, now)
  for _, change in ipairs(plan) do
    local claim, op = change.claim or {}, nil
    local expires, units = claim.held and claim.expires or '-1', claim.units
    if change.op == 'alter' then
      local new = change.settings
      limit = new.limit
      records[#records + 1] = {'key', c.key, 'op', 'altered', 'limit', new.limit, 'peruser', new.peruser,
        'hold', new.hold, 'available', campaign_available(limit, confirmed, held)}
    elseif change.op == 'put' then
      if claim.held then
        held, op = int_add(held, units), 'reserved'
      else
        confirmed, op = int_add(confirmed, units), 'confirmed'
      end
    elseif change.op == 'confirm' then
      units = change.units
      held, confirmed, op, expires = int_sub(held, claim.units), int_add(confirmed, units), 'confirmed', '-1'
    elseif change.op == 'release' then
      if claim.held then held = int_sub(held, units) else confirmed = int_sub(confirmed, units) end
      op = releases
    elseif change.op == 'renew' then
      op, expires = 'renewed', change.expires
    else
      op = 'expired'
    end
    if op then
      records[#records + 1] = {'key', c.key, 'op', op, 'claim', claim.number, 'user', claim.user,
        'expires_at_ms', expires, 'id', claim.id or '', 'available', campaign_available(limit, confirmed, held),
        'units', units}
    end
  end
  return records
end

-- Keeps the `k` member of `user` in step with its confirmed units, which
-- went from `before` to `after` (integers).
local function count_confirmed(c, user, before, after)
  if before ~= '0' then redis.call('ZREM', c.key, 'k' .. pad(before) .. user) end
  if after ~= '0' then redis.call('ZADD', c.key, 0, 'k' .. pad(after) .. user) end
end

local function zadd_all(key, members)
  local call = {'ZADD', key}
  for _, m in ipairs(members) do
    call[#call + 1] = 0
    call[#call + 1] = m
  end
  redis.call(unpack(call))
end

-- XADD's own error for a stream whose IDs are used up.
local IDS_USED_UP = 'ERR The stream has exhausted the last possible ID, unable to add more items'

-- Appends one call's ledger entries, each `{c, fields}` (the campaign's
-- ledger and MAXLEN), all or none: a stream at its last IDs is asked
-- first whether it has IDs for them all, as the module asks. An error
-- reply if the server refuses.
local function ledger_append(entries)
  if #entries == 0 then return nil end
  local stream = entries[1][1].ledger
  if #entries > 1 and type_of(stream) == 'stream' then
    local info = redis.call('XINFO', 'STREAM', stream)
    for i = 1, #info - 1, 2 do
      if info[i] == 'last-generated-id' then
        local ms, seq = info[i + 1]:match('^(%d+)%-(%d+)$')
        if ms == '18446744073709551615' and int_cmp(int_sub(ms, seq), tostring(#entries)) < 0 then
          return err(IDS_USED_UP)
        end
      end
    end
  end
  for _, entry in ipairs(entries) do
    local c = entry[1]
    local e = alert_append({stream = c.ledger, maxlen = c.maxlen}, entry[2])
    if e then return e end
  end
  return nil
end

-- The ledger entries of `plan` on `c`, for `ledger_append` (after
-- `entries`, if given).
local function ledger_entries(c, plan, now, releases, entries)
  entries = entries or {}
  for _, fields in ipairs(campaign_records(c, plan, now, releases)) do entries[#entries + 1] = {c, fields} end
  return entries
end

-- Writes `plan`'s changes to `c`, then its first member.
local function campaign_apply(c, plan)
  for _, change in ipairs(plan) do
    local claim = change.claim
    -- The user's confirmed units before a change of its confirmed ones.
    local before = (claim and (change.op == 'confirm' or not claim.held)) and user_confirmed_units(c, claim.user)
    if change.op == 'alter' then
      for name, value in pairs(change.settings) do c[name] = value end
    elseif change.op == 'put' then
      zadd_all(c.key, claim_members(claim))
      c.made = claim.number
      local extra = int_sub(claim.units, '1')
      if claim.held then
        add_extras(c, claim.user, '0', extra)
      else
        c.confirmed = int_add(c.confirmed, '1')
        add_extras(c, claim.user, extra, '0')
        count_confirmed(c, claim.user, before, int_add(before, claim.units))
      end
    else
      redis.call('ZREM', c.key, unpack(claim_members(claim)))
      if change.op == 'renew' then
        claim.expires = change.expires
        zadd_all(c.key, claim_members(claim))
      elseif change.op == 'confirm' then
        add_extras(c, claim.user, int_sub(change.units, '1'), int_sub('1', claim.units))
        claim.held, claim.units = false, change.units
        zadd_all(c.key, claim_members(claim))
        c.confirmed = int_add(c.confirmed, '1')
        count_confirmed(c, claim.user, before, int_add(before, claim.units))
      else
        local extra = int_sub('1', claim.units)
        if claim.held then
          add_extras(c, claim.user, '0', extra)
        else
          c.confirmed = int_sub(c.confirmed, '1')
          add_extras(c, claim.user, extra, '0')
          count_confirmed(c, claim.user, before, int_sub(before, claim.units))
        end
        local total = change.op == 'release' and 'released' or 'expired'
        c[total] = int_add(c[total], '1')
      end
    end
  end
  campaign_save(c)
end

-- Carries out `plan` on `c` at `now`: its ledger entries first (a
-- refused XADD refuses the call, nothing written), then each change, then
-- the totals. Returns an error reply or nil.
local function campaign_carry_out(c, plan, now, releases)
  local e = ledger_append(ledger_entries(c, plan, now, releases))
  if e then return e end
  campaign_apply(c, plan)
  return nil
end

-- The stream a call names (nil when none) against `c`'s ledger: nil, or
-- an error reply.
local function ledger_named(c, stream)
  if c.ledger == nil and stream == nil then return nil end
  if c.ledger == nil then return err('ERR ledger: the campaign keeps no ledger') end
  if stream == nil then return err('ERR ledger: the campaign keeps a ledger; name its stream with LEDGER') end
  if stream ~= c.ledger then return err("ERR ledger: the stream is not the campaign's ledger") end
  return nil
end

-- A campaign write's campaign, KEYS[1], checked in the module's order:
-- the stream the call names (`stream`, nil or KEYS[2]) is a stream or
-- nothing, the campaign exists, and the stream is its ledger.
local function campaign_for_write(stream)
  local e = stream and require_stream(stream)
  if e then return nil, e end
  local c
  c, e = campaign_open(KEYS[1])
  if e then return nil, e end
  e = ledger_named(c, stream)
  if e then return nil, e end
  return c
end

-- COUPON.RESERVE's decision on `c` at `now` (COUPON.RESERVEALL's for
-- each campaign): the request id first (its live claim is repeated,
-- another user's is an error, a released or expired one is free again),
-- then the user's places, then the limit. Returns the reply ([claim,
-- expires_at_ms], [-1, 0] or [-2, 0]) and the plan (empty when nothing
-- changes), or an error reply last.
local function campaign_reserve(c, user, id, hold_until, now, units)
  local stale = id and campaign_id_owner(c, id)
  if stale and claim_live(stale, now) then
    if stale.user ~= user then return nil, nil, err('ERR id is held by a live claim of another user') end
    -- A confirm may keep fewer units: a confirmed claim is repeated.
    if stale.held and stale.units ~= units then return nil, nil, err('ERR id was reserved with another qty') end
    return {reply_int(stale.number), stale.held and reply_int(stale.expires) or -1}, {}
  end
  local full = campaign_room(c, user, now, units)
  if full then return {full, 0}, {} end
  local number, e = campaign_next_claim(c)
  if e then return nil, nil, e end
  local plan = campaign_reclaims(c, now, stale)
  plan[#plan + 1] = {op = 'put', claim = {number = number, held = true, expires = hold_until, units = units,
    user = user, id = id}}
  return {reply_int(number), reply_int(hold_until)}, plan
end

-- The value of one option, checked as the module checks it: HOLD (its
-- end from `now`), ID, QTY (units); nil and an error reply when refused.
local function reserve_value(name, value, now, command)
  if name == 'HOLD' then return seconds_from(value, 'hold', now, command) end
  if name == 'QTY' then return positive_arg(value, 'qty') end
  if value == '' then return nil, err('ERR id must not be empty') end
  return value
end

-- RESERVE's options (HOLD, ID, QTY, LEDGER, whose stream is KEYS[2])
-- from ARGV[2] on: the hold's end (nil: the default), the request id,
-- the units ('1' by default), the stream, or an error reply last.
local function reserve_options(now)
  local got = {QTY = '1'}
  local e = walk_options(2, {'HOLD', 'ID', 'QTY', 'LEDGER'}, {LEDGER = true}, 2, function(name, value)
    local bad
    if name == 'LEDGER' then
      got.LEDGER = value
    else
      got[name], bad = reserve_value(name, value, now, 'coupon.reserve')
    end
    return bad
  end)
  return got.HOLD, got.ID, got.QTY, got.LEDGER, e
end

-- The options of a write that takes only `LEDGER stream` (KEYS[2]), from
-- ARGV[from]: the stream, or an error reply.
local function only_ledger(from)
  local stream
  local e = walk_options(from, {'LEDGER'}, {LEDGER = true}, 2, function(_, value) stream = value end)
  return stream, e
end

-- COUPON.CONFIRM's, COUPON.RELEASE's and COUPON.RENEW's head, `key claim
-- [HOLD s | QTY n] [LEDGER stream]` (HOLD or QTY only where `own` names
-- it, `{name = 'HOLD'}` or `{name = 'QTY'}`: its value, checked, goes to
-- own.value): the arity, the clock, the claim number, the options, then
-- the campaign. Returns now, the campaign and its live claim of that
-- number (nil when none), or an error reply last.
local function campaign_claim_head(command, own)
  if 1 + #KEYS + #ARGV < 3 then return nil, nil, nil, wrong_arity(command) end
  local now = now_ms()
  local number, e = positive_arg(ARGV[1], 'claim')
  if e then return nil, nil, nil, e end
  local stream
  if own then
    e = walk_options(2, {own.name, 'LEDGER'}, {LEDGER = true}, 2, function(name, value)
      if name == 'LEDGER' then stream = value return nil end
      local bad
      own.value, bad = reserve_value(name, value, now, command)
      return bad
    end)
  else
    stream, e = only_ledger(2)
  end
  if e then return nil, nil, nil, e end
  local c
  c, e = campaign_for_write(stream)
  if e then return nil, nil, nil, e end
  local claim = campaign_claim(c, number)
  if claim and not claim_live(claim, now) then claim = nil end
  return now, c, claim
end

-- COUPON.ISSUE's and COUPON.REVOKE's key KEYS[1], once their options
-- from ARGV[from] on (only LEDGER, whose stream is KEYS[2]) are read, in
-- the module's order: a campaign in the scripts' layout is returned, its
-- LEDGER checked as any campaign write's; the module's campaign type is
-- WRONGTYPE; any other key is a plain set of winners, which keeps no
-- ledger, so a LEDGER stream (checked to be a stream or nothing first) is
-- an error, and a key of another type is WRONGTYPE. Returns the set's
-- size (0 when missing) or nil and the campaign, or an error reply last.
local function coupon_key(from)
  local ledger, e = only_ledger(from)
  if e then return nil, nil, e end
  local kind = type_of(KEYS[1])
  if kind == 'guard-cpn' then return nil, nil, err(WRONGTYPE) end
  if kind == 'zset' and campaign_open(KEYS[1]) then
    local c
    c, e = campaign_for_write(ledger)
    return nil, c, e
  end
  if ledger ~= nil then
    e = require_stream(ledger)
    if e then return nil, nil, e end
    return nil, nil, err('ERR ledger: the key is no campaign and keeps no ledger')
  end
  if kind == 'none' then return 0 end
  if kind ~= 'set' then return nil, nil, err(WRONGTYPE) end
  return redis.call('SCARD', KEYS[1])
end

-- The live claims of `user` at `now`, in claim order: O(k log n) for k of
-- them, whatever number of expired holds the user has.
local function user_live_claims(c, user, now)
  local of_user = 'u' .. sized(user)
  local low, high = lex_range(of_user .. 'c')
  local members = redis.call('ZRANGEBYLEX', c.key, low, high)
  low, high = lex_range(of_user .. 'h', pad(now))
  for _, member in ipairs(redis.call('ZRANGEBYLEX', c.key, low, high)) do members[#members + 1] = member end
  local numbers = {}
  for i, member in ipairs(members) do numbers[i] = member:sub(-19) end
  table.sort(numbers)
  local claims = {}
  for i, number in ipairs(numbers) do claims[i] = campaign_claim(c, unpad(number)) end
  return claims
end

-- The most confirmed claims any one user has (0 when none).
local function most_confirmed_of_a_user(c)
  local top = redis.call('ZREVRANGEBYLEX', c.key, '(l', '[k', 'LIMIT', 0, 1)[1]
  return top and unpad(top:sub(2, 20)) or '0'
end
