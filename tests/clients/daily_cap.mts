// redis-guard from TypeScript: at most 5 orders per customer per day,
// the day being Seoul's: the quota resets at 00:00 in Seoul.
import { Redis } from "ioredis";
import { guard } from "redis-guard";

const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
const g = guard(redis);
const key = "orders:cust:42:day";
for (let order = 1; order <= 6; order++) {
  const verdict = await g.quota(key, 5, "day", { tz: "Asia/Seoul" });
  console.log(verdict.limited ? `order ${order} refused` : `order ${order} taken, ${verdict.remaining} left today`);
}
const seoul = new Intl.DateTimeFormat("en-GB", { timeZone: "Asia/Seoul", hour: "2-digit", minute: "2-digit" });
console.log("the day ends at", seoul.format(new Date(Number(await redis.pexpiretime(key)))), "in Seoul");
redis.disconnect();
