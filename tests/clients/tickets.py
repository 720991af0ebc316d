# redis_guard: tickets with quantities. A buyer holds 4 seats while paying
# for them; the payment covers 3: confirm 3, and the 4th is free at once
# for the next buyer.
import os

import redis

from redis_guard import SOLD_OUT, Guard

g = Guard(redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379")))
show = "show:7:seats"
g.create(show, 7, peruser=4, hold=600)  # 7 seats, at most 4 a buyer

# Checkout: 4 seats held while the payment runs (a retry with the same
# request id and qty gets the same claim back).
held = g.reserve(show, "ann", qty=4, request_id="order-1")
print("ann holds", g.claims(show)[0].units, "seats: claim", held.claim)
bob = g.reserve(show, "bob", qty=4)
print("bob's 4 seats:", "sold out" if bob.claim == SOLD_OUT else bob.claim)

# The payment covered 3 seats: confirm 3; the 4th is free at once.
g.confirm(show, held.claim, qty=3)
info = g.campaign_info(show)
print(f"ann paid for 3: confirmed {info.confirmed_units}, held {info.held_units}, available {info.available}")
print("bob's 4 seats: claim", g.reserve(show, "bob", qty=4).claim)
