# redis_guard: 10 a second and 1,000 a day for one customer, all or nothing
import os

import redis

from redis_guard import Guard

g = Guard(redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379")))
customer = 7
verdict = g.throttle_all([
    (f"{{cust:{customer}}}:second", 9, 10, 1),  # burst 10, 10 a second
    (f"{{cust:{customer}}}:day", 999, 1000, 86400),  # 1,000 a day
])
if verdict.limited:
    print("429, retry after", verdict.retry_after)
else:
    second, day = verdict.results
    print(int(verdict.limited), second.remaining, day.remaining)  # 9 this second, 999 today
