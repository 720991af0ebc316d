# redis-py: an alert worker. MON.INCRCHECK ... ALERT {cust:42}:alerts wrote
# each crossing into the stream; every alert reaches send() at least once,
# and its entry ID tells a resend from a new alert.
import os

import redis

r = redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379"), decode_responses=True)
stream, group, me = "{cust:42}:alerts", "senders", "worker-py"
try:
    r.xgroup_create(stream, group, id="0", mkstream=True)
except redis.ResponseError:  # BUSYGROUP: another worker made it
    pass


def send(alert_id, alert):  # your pager or webhook, deduplicating on alert_id
    print(alert_id, alert["key"], alert["level"], alert["threshold"], alert["current"])


def handle(entries):
    for alert_id, alert in entries:
        send(alert_id, alert)
        r.xack(stream, group, alert_id)  # only after the send: a crash resends


# What a dead worker left unacknowledged (for IDLE_MS), then what is new;
# this one stops after a second without alerts.
handle(r.xautoclaim(stream, group, me, min_idle_time=int(os.environ.get("IDLE_MS", 60000)))[1])
while reply := r.xreadgroup(group, me, {stream: ">"}, count=10, block=1000):
    handle(reply[0][1])
