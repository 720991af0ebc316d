# redis-py: execute_command sends any command
import os

import redis

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379"))

current, level = r.execute_command("MON.INCRCHECK", "cust:7:orders", 1, 3600, 3)
rank = r.execute_command("COUPON.ISSUE", "drop:coupons", "alice", 100)
left = r.execute_command("MON.DECRCLAMP", "refunds:shop", 50)
limited, limit, remaining, retry_after, reset_after = r.execute_command(
    "CL.THROTTLE", "user:7:api", 15, 30, 60
)
print(current, level, rank, left, limited, remaining)
