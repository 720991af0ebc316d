// redis-guard from TypeScript: tickets with quantities. A buyer holds 4
// seats while paying for them; the payment covers 3: confirm 3, and the
// 4th is free at once for the next buyer.
import { Redis } from "ioredis";
import { guard, SOLD_OUT } from "redis-guard";

const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
const g = guard(redis);
const show = "show:7:seats";
await g.create(show, 7, { peruser: 4, hold: 600 }); // 7 seats, at most 4 a buyer

// Checkout: 4 seats held while the payment runs (a retry with the same
// id and qty gets the same claim back).
const held = await g.reserve(show, "ann", { qty: 4, id: "order-1" });
console.log("ann holds", (await g.claims(show))[0].units, "seats: claim", held.claim);
const bob = await g.reserve(show, "bob", { qty: 4 });
console.log("bob's 4 seats:", bob.claim === SOLD_OUT ? "sold out" : bob.claim);

// The payment covered 3 seats: confirm 3; the 4th is free at once.
await g.confirm(show, held.claim, { qty: 3 });
const info = await g.campaignInfo(show);
console.log(`ann paid for 3: confirmed ${info.confirmedUnits}, held ${info.heldUnits}, available ${info.available}`);
console.log("bob's 4 seats: claim", (await g.reserve(show, "bob", { qty: 4 })).claim);
redis.disconnect();
