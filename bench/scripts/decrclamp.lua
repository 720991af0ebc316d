-- MON.DECRCLAMP as a Lua script. KEYS[1] counter; ARGV[1] amount.
local current = tonumber(redis.call('GET', KEYS[1]))
if not current or current <= 0 then return 0 end
local value = current - tonumber(ARGV[1])
if value < 0 then value = 0 end
redis.call('SET', KEYS[1], value, 'KEEPTTL')
return value
