// redis-guard from TypeScript: the same reconciliation worker, for a
// sale of two products that share one ledger, bought as one cart.
import { Redis } from "ioredis";
import { guard } from "redis-guard";

const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
const g = guard(redis);
const [hats, scarves, ledger, group] = ["{sale:8}:hats", "{sale:8}:scarves", "{sale:8}:ledger", "orders-db"];

// The sale and a checkout that never pays: a cart held for 1 s.
await g.create(hats, 5, { ledger });
await g.create(scarves, 2, { ledger });
const cart = await g.reserveAll([hats, scarves], "carol", { hold: 1, id: "order-3", ledger });
console.log("cart", cart.reserved, cart.reservations.map((held) => held.claim).join(" "));

await redis.xgroup("CREATE", ledger, group, "0", "MKSTREAM").catch(() => {}); // BUSYGROUP

// The worker: reclaim every second, apply each entry once, ack it; this
// one stops after 3 quiet seconds.
type Entry = [id: string, fields: string[]];
for (let quiet = 0; quiet < 3; ) {
  for (const key of [hats, scarves]) await g.reclaim(key, { ledger });
  const reply = (await redis.xreadgroup("GROUP", group, "worker-1", "COUNT", 100, "BLOCK", 1000, "STREAMS", ledger, ">")) as
    | [stream: string, entries: Entry[]][]
    | null;
  const entries = reply?.[0][1] ?? [];
  quiet = entries.length > 0 ? 0 : quiet + 1;
  for (const [entryId, fields] of entries) {
    const change: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) change[fields[i]] = fields[i + 1];
    console.log(change.key, change.op, change.claim, change.user, change.id, change.available);
    await redis.xack(ledger, group, entryId); // only once applied: a crash re-reads it
  }
}
redis.disconnect();
