// redis-guard from TypeScript (an ES module: .mts, or "type": "module").
// Run by the tests with REDIS_URL pointing at a fresh server.
import { Redis } from "ioredis";
import { guard, SOLD_OUT } from "redis-guard";

const g = guard(new Redis(process.env.REDIS_URL ?? "redis://localhost:6379"));

// Velocity: the 3rd order within an hour crosses the threshold.
let orders = await g.incrcheck("{cust:42}:orders", 1, 3600, [3]);
for (let n = 1; n < 3; n++) orders = await g.incrcheck("{cust:42}:orders", 1, 3600, [3]);
console.log("orders", orders.current, orders.level);

// Rate limit and a campaign with a safe retry.
const api = await g.throttle("{user:7}:api", 4, 10, 60);
await g.create("sale:spring", 100, { hold: 600 });
const held = await g.reserve("sale:spring", "alice", { id: "order-1001" });
const retry = await g.reserve("sale:spring", "alice", { id: "order-1001" });
if (held.claim !== SOLD_OUT) console.log("claim", held.claim, retry.claim, await g.confirm("sale:spring", held.claim));
console.log("limited", api.limited, "remaining", api.remaining);

// A pipeline: results typed and parsed in order.
const [rank, refund] = await g.pipeline().issue("drop:1", "bob", 100).decrclamp("{cust:42}:orders", 1).exec();
console.log("rank", rank, "refunded to", refund);
process.exit(0);
