"""One call of each family through redis_guard, sync and asyncio; type
checked with `mypy --strict` and run by the tests (tests/client_python.rs)
against a server given as GUARD_STANDALONE=host:port."""

import asyncio
import os
from typing import List

import redis
import redis.asyncio

from redis_guard import SOLD_OUT, AsyncGuard, CampaignInfo, Check, Claim, Guard, Reservation, Throttle

host, port = os.environ.get("GUARD_STANDALONE", "127.0.0.1:6379").rsplit(":", 1)
g = Guard(redis.Redis(host=host, port=int(port)))

# Velocity: the 5th order within an hour crosses the first threshold.
for _ in range(5):
    check: Check = g.incrcheck("{cust:42}:orders", 1, 3600, [5, 20], alert="{cust:42}:alerts")
current, level = check
print("orders", current, level)

# Rate limit: 10 a minute, bursts of 5.
limit: Throttle = g.throttle("{user:7}:api", 4, 10, 60)
if limit.limited:
    print("retry in", limit.retry_after, "s")

# A campaign: hold a place while the payment runs, then confirm it.
g.create("sale:spring", 100, peruser=1, hold=600)
held: Reservation = g.reserve("sale:spring", "alice", request_id="order-1001")
if held.claim != SOLD_OUT:
    print("confirm", g.confirm("sale:spring", held.claim))
info: CampaignInfo = g.campaign_info("sale:spring")
live: List[Claim] = g.claims("sale:spring")
print("available", info.available, "live", [claim.state for claim in live])

# Several calls, one round trip; results parsed, in order.
pipe = g.pipeline(transaction=False)
pipe.issue("drop:1", "bob", 100).throttle_all([("{user:7}:second", 4, 5, 1), ("{user:7}:day", 99, 1000, 86400)])
rank, both = pipe.execute()
print("rank", rank, "limited", both.limited)


async def main() -> None:
    a = AsyncGuard(redis.asyncio.Redis(host=host, port=int(port)))
    distinct: Check = await a.distinct("{card:9}:customers", "cust:42", 86400, [3])
    refunded: int = await a.decrclamp("{cust:42}:orders", 2)
    print("distinct", distinct.current, "refunded to", refunded)


asyncio.run(main())
