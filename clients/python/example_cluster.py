"""The same methods through a cluster client: each call goes straight to
its key's node as one command. Run by the tests against a 3-primary
cluster named by GUARD_CLUSTER=host:port,..."""

import os

import redis.cluster

from redis_guard import Guard

host, port = os.environ.get("GUARD_CLUSTER", "127.0.0.1:7000").split(",")[0].rsplit(":", 1)
g = Guard(redis.cluster.RedisCluster(host=host, port=int(port)))

# One customer's keys share a hash tag, so they live in one slot.
check = g.incrcheck("{cust:42}:orders", 1, 3600, [5], alert="{cust:42}:alerts")
both = g.throttle_all([("{cust:42}:second", 9, 10, 1), ("{cust:42}:day", 999, 1000, 86400)])

# A pipeline on a cluster client: each call to its own key's node.
pipe = g.pipeline()
for drop in ("drop:1", "drop:2", "drop:3"):
    pipe.issue(drop, "alice", 100)
print(check.current, both.limited, pipe.execute())
