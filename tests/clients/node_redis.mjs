// node-redis: sendCommand takes strings only (a number throws a TypeError)
import { createClient } from "redis";

const client = await createClient({ url: process.env.REDIS_URL ?? "redis://localhost:6379" }).connect();

const [current, level] = await client.sendCommand(["MON.INCRCHECK", "cust:7:orders", "1", "3600", "3"]);
const rank = await client.sendCommand(["COUPON.ISSUE", "drop:coupons", "alice", "100"]);
const left = await client.sendCommand(["MON.DECRCLAMP", "refunds:shop", String(50)]);
const [limited, , remaining] = await client.sendCommand(["CL.THROTTLE", "user:7:api", "15", "30", "60"]);
console.log(current, level, rank, left, limited, remaining);
await client.quit();
