// ioredis in TypeScript, an ES module (top-level await: save it as .mts,
// or set "type": "module"): declare the commands once, as for defineCommand...
import { Redis, type Result } from "ioredis";

declare module "ioredis" {
  interface RedisCommander<Context> {
    "mon.incrcheck"(key: string, increment: number, window: number, ...thresholds: number[]): Result<[number, number], Context>;
    "mon.decrclamp"(key: string, amount: number): Result<number, Context>;
    "coupon.issue"(key: string, user: string, limit: number): Result<number, Context>;
    "coupon.revoke"(key: string, user: string): Result<number, Context>;
    "cl.throttle"(key: string, maxBurst: number, count: number, period: number, quantity?: number): Result<[number, number, number, number, number], Context>;
  }
}

const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
for (const name of ["mon.incrcheck", "mon.decrclamp", "coupon.issue", "coupon.revoke", "cl.throttle"]) {
  redis.addBuiltinCommand(name);
}

// ...then call them like Redis's own, typed.
const [current, level] = await redis["mon.incrcheck"]("cust:7:orders", 1, 3600, 3);
const rank = await redis["coupon.issue"]("drop:coupons", "alice", 100);
const left = await redis["mon.decrclamp"]("refunds:shop", 50);
const [limited, , remaining] = await redis["cl.throttle"]("user:7:api", 15, 30, 60);
console.log(current, level, rank, left, limited, remaining);
redis.disconnect();
