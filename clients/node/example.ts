// redis-guard from TypeScript: the same methods over ioredis and node-redis,
// standalone or cluster. A test compiles this file with `tsc --strict`.
import { Redis, Cluster } from "ioredis";
import { createClient, createCluster } from "redis";
import { guard, ALREADY_WON, SOLD_OUT, type Check, type Confirmation, type GuardPipeline, type Throttle } from "redis-guard";

async function checkout(user: string): Promise<string> {
  // A cluster: every call goes straight to the node that owns its key.
  const cluster = new Cluster([{ host: "127.0.0.1", port: 7000 }]);
  const g = guard(cluster);

  const orders: Check = await g.incrcheck(`{cust:${user}}:orders`, 1, 3600, [5, 20], {
    alert: `{cust:${user}}:alerts`,
  });
  if (orders.level > 0) console.log(`threshold ${orders.level} crossed at ${orders.current}`);

  const api: Throttle = await g.throttle(`user:${user}:api`, 15, 30, 60);
  if (api.limited) return `retry in ${api.retryAfter} s`;

  const all = await g.throttleAll([
    [`{user:${user}}:second`, 4, 5, 1],
    [`{user:${user}}:day`, 999, 1000, 86400],
  ]);
  if (all.limited) return `limited by ${all.results.findIndex((r) => r.limited)}`;

  const { claim, expiresAtMs } = await g.reserve("{sale:42}", user, { hold: 300, id: `order-${user}` });
  if (claim === ALREADY_WON) return "you already have one";
  if (claim === SOLD_OUT) return "sold out";
  const confirmed: Confirmation = await g.confirm("{sale:42}", claim);
  await cluster.quit();
  return `claim ${claim} (held until ${new Date(expiresAtMs).toISOString()}): ${confirmed}`;
}

async function campaign(): Promise<void> {
  // node-redis, standalone; a pipeline whose results are typed in order.
  const client = createClient({ url: process.env.REDIS_URL });
  await client.connect();
  const g = guard(client);
  const created: boolean = await g.create("sale:7", 100, { peruser: 2, hold: 600, existOk: true });
  const [reservation, info, claims, rank] = await g
    .pipeline({ transaction: true })
    .reserve("sale:7", "alice")
    .campaignInfo("sale:7")
    .claims("sale:7", { from: 1, count: 10 })
    .issue("coupons:7", "alice", 500)
    .exec();
  console.log(created, reservation.claim, info.available, rank);
  for (const c of claims) console.log(c.claim, c.user, c.state, c.expiresAtMs, c.requestId ?? "-");
  const clamped: number = await g.decrclamp("refunds:alice", 5);
  console.log(clamped);
  await client.quit();
}

async function plain(): Promise<void> {
  const g = guard(new Redis());
  const seen: Check = await g.distinct("{card:1}:ips", "10.0.0.1", 86400, [3]);
  const sliding: Check = await g.slidecheck("{card:1}:amount", 250, 600, [1000, 5000], { buckets: 60 });
  console.log(seen.current, sliding.level, await g.revoke("coupons:7", "alice"));
  // Queued in a loop: say what the results are.
  const batch: GuardPipeline<Check[]> = g.pipeline();
  for (const card of ["1", "2", "3"]) batch.incrcheck(`card:${card}:orders`, 1, 3600, [10]);
  const levels: number[] = (await batch.exec()).map((check) => check.level);
  console.log(levels);
  const cluster = createCluster({ rootNodes: [{ url: "redis://127.0.0.1:7000" }] });
  await cluster.connect();
  console.log(await guard(cluster).release("{sale:42}", 1));
}

void checkout("42").then(console.log).then(campaign).then(plain);
