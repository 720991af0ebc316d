// redis-guard from TypeScript: a login form. 5 failed attempts a minute per
// account; the 6th puts the account in a penalty box for 15 minutes, in
// which even a right password is not tried.
import { Redis } from "ioredis";
import { guard } from "redis-guard";

const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
const g = guard(redis);

async function login(user: string, passwordIsRight: boolean): Promise<string> {
  const key = `login:fail:${user}`;
  // A peek (quantity 0): is the account in the box?
  const state = await g.throttle(key, 4, 5, 60, { quantity: 0 });
  if (state.limited) return "locked";
  if (passwordIsRight) return "welcome";
  // A failure takes one attempt; the one past the limit blocks 900 s.
  const failure = await g.throttle(key, 4, 5, 60, { block: 900 });
  return failure.limited ? `locked, retry in ${failure.retryAfter} s` : `wrong password, ${failure.remaining} left`;
}

for (let attempt = 1; attempt <= 6; attempt++) console.log(attempt, await login("ann", false));
console.log("right password:", await login("ann", true));
await g.reset("login:fail:ann"); // support unlocks the account
console.log("after a reset:", await login("ann", true));
redis.disconnect();
