-- CL.THROTTLEALL as a Lua script: several GCRA limiters (throttle.lua's
-- rule), all or nothing. KEYS: the limiters; ARGV: quantity, then
-- max_burst, count, period (s) per key. TATs in microseconds, as in
-- throttle.lua. Reply: {limited, retry_after, {5 integers} per key}.
local quantity = tonumber(ARGV[1])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local cells, limited, retry, never = {}, 0, -1, false
for i, key in ipairs(KEYS) do
  local burst, count, period = tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  local emission = period * 1000000 / count
  local tolerance = emission * (burst + 1)
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local new_tat = tat + emission * quantity
  local allow_at = new_tat - tolerance
  local cell = {burst = burst, emission = emission, tolerance = tolerance, tat = tat, new_tat = new_tat}
  if allow_at > now then
    cell.limited = 1
    limited = 1
    if emission * quantity <= tolerance then
      retry = math.max(retry, math.ceil((allow_at - now) / 1000000))
    else
      never = true
    end
  end
  cells[i] = cell
end
if never then retry = -1 end
local replies = {}
for i, cell in ipairs(cells) do
  local ttl
  if limited == 0 then
    ttl = cell.new_tat - now
    if quantity > 0 then
      redis.call('SET', KEYS[i], string.format('%d', cell.new_tat), 'PXAT', math.ceil(cell.new_tat / 1000))
    end
  else
    ttl = cell.tat - now
  end
  local remaining = 0
  if cell.tolerance - ttl > 0 then remaining = math.floor((cell.tolerance - ttl) / cell.emission) end
  local own_retry = -1
  if cell.limited then own_retry = retry end
  replies[i] = {cell.limited or 0, cell.burst + 1, remaining, own_retry, math.ceil(ttl / 1000000)}
end
return {limited, retry, unpack(replies)}
