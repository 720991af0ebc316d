# redis_guard: a reconciliation worker. The sale keeps its ledger in a
# stream: every change of every claim is one entry. The worker applies
# each to the orders database (here: prints it), then acknowledges it,
# and reclaims expired holds every second so that their entries come too.
import os

import redis

from redis_guard import Guard

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379"), decode_responses=True)
g = Guard(r)
sale, ledger, group = "{sale:9}", "{sale:9}:ledger", "orders-db"

# The sale and two checkouts (in a shop: the web servers).
g.create(sale, 100, hold=600, ledger=ledger)
paid = g.reserve(sale, "alice", request_id="order-1", ledger=ledger)
g.confirm(sale, paid.claim, ledger=ledger)
g.reserve(sale, "bob", hold=1, request_id="order-2", ledger=ledger)  # never pays

try:
    r.xgroup_create(ledger, group, id="0", mkstream=True)
except redis.ResponseError:  # BUSYGROUP: another worker made it
    pass

# The worker; this one stops after 3 quiet seconds.
quiet = 0
while quiet < 3:
    g.reclaim(sale, ledger=ledger)  # expired holds get their entries now
    reply = r.xreadgroup(group, "worker-1", {ledger: ">"}, count=100, block=1000)
    entries = reply[0][1] if reply else []
    quiet = 0 if entries else quiet + 1
    for entry_id, change in entries:
        print(change["op"], change["claim"], change["user"], change["id"], change["available"])
        r.xack(ledger, group, entry_id)  # only once applied: a crash re-reads it
