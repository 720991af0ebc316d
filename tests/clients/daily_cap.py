# redis_guard: at most 5 orders per customer per day, the day being Seoul's:
# the quota resets at 00:00 in Seoul, whenever the first order came.
import os
from datetime import datetime
from zoneinfo import ZoneInfo

import redis

from redis_guard import Guard

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379"))
g = Guard(r)
key = "orders:cust:42:day"
for order in range(1, 7):
    verdict = g.quota(key, 5, "day", tz="Asia/Seoul")
    if verdict.limited:
        print(f"order {order} refused until midnight in Seoul")
    else:
        print(f"order {order} taken, {verdict.remaining} left today")
# A cancelled order gives its place back (never below 0).
g.decrclamp(key, 1)
ends = datetime.fromtimestamp(r.pexpiretime(key) / 1000, ZoneInfo("Asia/Seoul"))
print("the day ends at", ends.strftime("%H:%M"), "in Seoul;", g.quota(key, 5, "day", 0, tz="Asia/Seoul").remaining, "left")
