# redis_guard: a restock while the sale runs, and a cart that takes one
# place in each product or none.
import os

import redis

from redis_guard import SOLD_OUT, Guard

g = Guard(redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379")))
hats, scarves = "{shop:1}:hats", "{shop:1}:scarves"  # one hash tag: one slot
g.create(hats, 5)
g.create(scarves, 1)

# A cart of a hat and a scarf: both held, or nothing held anywhere.
cart = g.reserve_all([hats, scarves], "alice", hold=300, request_id="cart-1")
print(cart.reserved, [held.claim for held in cart.reservations])
late = g.reserve_all([hats, scarves], "bob")
if not late.reserved and late.refused == SOLD_OUT:
    print("sold out: item", late.at, "hats left", g.campaign_info(hats)["available"])

# Restock: 10 more scarves arrive; bob's cart now goes through.
g.alter(scarves, limit=11)
print(g.reserve_all([hats, scarves], "bob").reserved, g.campaign_info(scarves)["available"])
