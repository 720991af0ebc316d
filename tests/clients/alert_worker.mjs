// ioredis: the same alert worker in Node.
import { Redis } from "ioredis";

const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
const [stream, group, me] = ["{cust:42}:alerts", "senders", "worker-node"];
await redis.xgroup("CREATE", stream, group, "0", "MKSTREAM").catch(() => {}); // BUSYGROUP

function send(alertId, alert) { // your pager or webhook, deduplicating on alertId
  console.log(alertId, alert.key, alert.level, alert.threshold, alert.current);
}

async function handle(entries) {
  for (const [alertId, fields] of entries) {
    const alert = {};
    for (let i = 0; i < fields.length; i += 2) alert[fields[i]] = fields[i + 1];
    send(alertId, alert);
    await redis.xack(stream, group, alertId); // only after the send: a crash resends
  }
}

// What a dead worker left unacknowledged (for IDLE_MS), then what is new;
// this one stops after a second without alerts.
const [, claimed] = await redis.xautoclaim(stream, group, me, process.env.IDLE_MS ?? 60000, "0-0");
await handle(claimed);
let reply;
while ((reply = await redis.xreadgroup("GROUP", group, me, "COUNT", 10, "BLOCK", 1000, "STREAMS", stream, ">"))) {
  await handle(reply[0][1]);
}
redis.disconnect();
