# redis-py: 10 a second and 1,000 a day for one customer, all or nothing
import os

import redis

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379"))
customer = 7
limits = [
    f"{{cust:{customer}}}:second", 9, 10, 1,  # burst 10, 10 a second
    f"{{cust:{customer}}}:day", 999, 1000, 86400,  # 1,000 a day
]
limited, retry_after, second, day = r.execute_command("CL.THROTTLEALL", 2, *limits)
if limited:
    print("429, retry after", retry_after)
else:
    print(limited, second[2], day[2])  # places left: 9 this second, 999 today
