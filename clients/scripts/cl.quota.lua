-- CL.QUOTA key limit window [quantity] [TZ zone]
-- The common call first, above the prelude (a call that returns here
-- makes none of its functions): a window in seconds of at most 9 digits,
-- no zone, the limit, quantity and count stored at the key of at most 15
-- characters (every sum and time below 2^53, exact in Lua numbers), and
-- at the key nothing or such a count.
local n = #ARGV
if #KEYS == 1 and (n == 2 or n == 3) and #ARGV[1] <= 15 and #ARGV[2] <= 9 and #(ARGV[3] or '') <= 15
  and ARGV[1]:find('^[1-9]%d*$') and ARGV[2]:find('^[1-9]%d*$')
  and (n == 2 or ARGV[3] == '0' or ARGV[3]:find('^[1-9]%d*$')) then
  -- MGET reads another type as nothing, where GET would fail with an
  -- error the server counts beside the script's own.
  local stored = redis.call('MGET', KEYS[1])[1]
  local fast
  if stored then
    fast = #stored <= 15 and (stored == '0' or stored:find('^%-?[1-9]%d*$') ~= nil)
  else
    fast = redis.call('EXISTS', KEYS[1]) == 0
  end
  if fast then
    local time = redis.call('TIME')
    local now = time[1] * 1000 + math.floor(time[2] / 1000)
    local limit, quantity, used = tonumber(ARGV[1]), tonumber(ARGV[3] or 1), tonumber(stored or 0)
    local running = stored and redis.call('PEXPIRETIME', KEYS[1]) or -1
    local ends = running >= 0 and running or now + ARGV[2] * 1000
    local reset = -math.floor((now - ends) / 1000)
    local after = used + quantity
    local limited = after > limit
    local left = limit - (limited and used or after)
    if left < 0 then left = 0 end
    local retry = -1
    if limited and quantity <= limit then retry = reset end
    if not limited and quantity ~= 0 then
      redis.call('SET', KEYS[1], string.format('%d', after), 'PXAT', string.format('%d', ends))
    end
    return {limited and 1 or 0, limit, left, retry, reset}
  end
end
-- @prelude
local command = 'cl.quota'
if #KEYS ~= 1 or #ARGV < 2 then return wrong_arity(command) end
local now = now_ms()
local limit, e = positive_arg(ARGV[1], 'limit')
if e then return e end
local unit = calendar_unit(ARGV[2])
local new_ends
if not unit then
  new_ends, e = seconds_from(ARGV[2], 'window', now, command)
  if e then return e end
end
-- A first token that names no option is the quantity.
local quantity, options_at = '1', 3
if ARGV[3] and string.upper(ARGV[3]) ~= 'TZ' then
  quantity, e = non_negative_arg(ARGV[3], 'quantity')
  if e then return e end
  options_at = 4
end
local rules = UTC
e = walk_options(options_at, {'TZ'}, {}, 2, function(_, value)
  local zone, bad = tz_arg(value, unit, tonumber(now))
  rules = zone
  return bad
end)
if e then return e end
if unit then new_ends = string.format('%d', period_end_ms(unit, rules, tonumber(now))) end
local used
used, e = read_integer(KEYS[1])
if e then return e end
-- The running window's end (a count without a TTL gets a new window).
local running = used and redis.call('PEXPIRETIME', KEYS[1])
local ends = (running and running >= 0) and string.format('%d', running) or new_ends
local reset = ceil_div(int_sub(ends, now), '1000')
local after = int_add(used or '0', quantity)
local limited = int_cmp(after, limit) > 0
local left = int_sub(limit, limited and (used or '0') or after)
if int_cmp(left, '0') < 0 then left = '0' elseif not int_fits(left) then left = INT_MAX end
local retry = '-1'
if limited and int_cmp(quantity, limit) <= 0 then retry = reset end
if not limited and quantity ~= '0' then
  redis.call('SET', KEYS[1], after, 'PXAT', ends)
end
return {limited and 1 or 0, reply_int(limit), reply_int(left), reply_int(retry), reply_int(reset)}
