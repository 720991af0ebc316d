// make bench-web: an Express route with redis-guard/express's rateLimit
// against the same route without it (requests/s, one run each), and
// localBlock under a flood from one key (CL.THROTTLE calls the server
// counted in INFO commandstats, with and without it). Run by
// bench/clients/web.sh from the `web` client set against a server with
// the module (REDIS_URL); prints the markdown table.
import { createRequire } from "node:module";
import http from "node:http";
import os from "node:os";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "index.js"));
const express = require("express");
const Redis = require("ioredis").default ?? require("ioredis");
const { guard } = require("redis-guard");
const { rateLimit } = require("redis-guard/express");

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = 16;
const FLOOD = 2000;
const redis = new Redis(process.env.REDIS_URL);
const g = guard(redis);

async function serve(middleware) {
  const app = express();
  if (middleware) app.use(middleware);
  app.get("/orders", (req, res) => res.json(["order-1"]));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return server;
}

/** GET /orders on CONNECTIONS keep-alive connections for `seconds`: [requests/s, statuses]. */
async function load(server, seconds) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const { port } = server.address();
  const statuses = {};
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const get = () =>
    new Promise((resolve, reject) => {
      http.get({ host: "127.0.0.1", port, path: "/orders", agent }, (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode));
      }).on("error", reject);
    });
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const status = await get();
        statuses[status] = (statuses[status] ?? 0) + 1;
        done++;
      }
    }),
  );
  agent.destroy();
  return [done / ((performance.now() - start) / 1000), statuses];
}

async function throttleCalls() {
  const stats = await redis.info("commandstats");
  return Number(/cmdstat_cl\.throttle:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

const rows = [];
// Every request allowed: the middleware's cost, not its refusals.
const wide = [{ maxBurst: 100_000_000, count: 100_000_000, period: 1 }];
const plain = await serve(null);
const limited = await serve(rateLimit({ guard: g, limits: wide, prefix: "bench-web" }));
await load(plain, 1); // warm up both
await load(limited, 1);
// Interleaved 1 s rounds, so that other work on the machine falls on both alike.
let [without, withMw, s1, s2] = [0, 0, {}, {}];
for (let round = 0; round < SECONDS; round++) {
  const [a, sa] = await load(plain, 1);
  const [b, sb] = await load(limited, 1);
  without += a / SECONDS;
  withMw += b / SECONDS;
  for (const [k, v] of Object.entries(sa)) s1[k] = (s1[k] ?? 0) + v;
  for (const [k, v] of Object.entries(sb)) s2[k] = (s2[k] ?? 0) + v;
}
plain.close();
limited.close();
rows.push(`| Express GET /orders, no middleware | ${Math.round(without)} req/s | statuses ${JSON.stringify(s1)} |`);
rows.push(`| the same with rateLimit (1 limit, CL.THROTTLE per request) | ${Math.round(withMw)} req/s | ${(withMw / without).toFixed(2)}× the bare route; statuses ${JSON.stringify(s2)} |`);

// A flood from one key past a limit of 3 a minute.
for (const localBlock of [false, true]) {
  await redis.del("flood:0:127.0.0.1");
  const server = await serve(rateLimit({ guard: g, limits: [{ maxBurst: 2, count: 3, period: 60 }], prefix: "flood", localBlock }));
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const before = await throttleCalls();
  const statuses = {};
  const { port } = server.address();
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (sent < FLOOD) {
        sent++;
        const status = await new Promise((resolve, reject) =>
          http.get({ host: "127.0.0.1", port, path: "/orders", agent }, (res) => {
            res.resume();
            res.on("end", () => resolve(res.statusCode));
          }).on("error", reject),
        );
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }),
  );
  const calls = (await throttleCalls()) - before;
  agent.destroy();
  server.close();
  rows.push(`| flood of ${FLOOD} requests from one key, localBlock ${localBlock} | ${calls} CL.THROTTLE calls | statuses ${JSON.stringify(statuses)} |`);
}
redis.disconnect();

console.log(`# Web middleware bench (make bench-web)

Express ${require("express/package.json").version}, ioredis ${require("ioredis/package.json").version}, Node ${process.version}, ${os.cpus().length} cores shared
(${os.cpus()[0].model}); a local redis-server with the module; ${CONNECTIONS} keep-alive connections
from the same process, ${SECONDS} interleaved 1 s rounds each, their mean (one run, not a statistic: a
machine shared with other work moves these by tens of percent). Written by bench/clients/web.sh.

| what | result | notes |
|---|---|---|
${rows.join("\n")}
`);
