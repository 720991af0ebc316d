// redis-guard/express, /fastify, /express-rate-limit and
// /rate-limiter-flexible against real servers started by tests/web.rs:
// GUARD_STANDALONE (with the module), GUARD_STANDALONE_NO_MODULE (without:
// the package runs its scripts), GUARD_DOWN (a server that was stopped). A
// server that accepts connections and never answers is made here. Run
// from the `web` client set (clients/node/test/install.sh web).
//
// Expected headers are worked out here from SPEC's GCRA: a limit
// { maxBurst, count, period } lets q = maxBurst + 1 requests through at
// once, each taking T = period / count seconds of the burst: after the
// i-th request r = q - i and t = ceil(i * T); the refused one gets r = 0,
// t = ceil(q * T) and Retry-After = ceil(T).
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { once } from "node:events";
import { createServer } from "node:net";
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "index.js"));
const Redis = require("ioredis").default ?? require("ioredis");
const express = require("express");
const Fastify = require("fastify");
const { rateLimit: expressRateLimit } = require("express-rate-limit");
const { RateLimiterCompatibleAbstract, RateLimiterRes, RateLimiterUnion } = require("rate-limiter-flexible");
const { guard } = require("redis-guard");
const { rateLimit } = require("redis-guard/express");
const fastifyPlugin = require("redis-guard/fastify");
const { GuardStore } = require("redis-guard/express-rate-limit");
const { RateLimiterGuard } = require("redis-guard/rate-limiter-flexible");

const address = (variable) => {
  const value = process.env[variable];
  assert.ok(value, `${variable} is not set: run through \`cargo test --test web\``);
  const [host, port] = value.split(":");
  return { host, port: Number(port) };
};
const SERVERS = { module: "GUARD_STANDALONE", scripts: "GUARD_STANDALONE_NO_MODULE" };
const clients = [];
const connect = ({ host, port }, options = {}) => {
  const client = new Redis({ host, port, ...options });
  client.on("error", () => {});
  clients.push(client);
  return client;
};
after(() => clients.forEach((client) => client.disconnect()));

const BURST = { maxBurst: 2, count: 3, period: 60 }; // q 3, T 20 s
const WIDE = { maxBurst: 9, count: 10, period: 60 }; // q 10, T 6 s

const policy = ({ maxBurst, count, period }) => {
  const q = maxBurst + 1;
  const w = Math.ceil((period * q) / count);
  return { name: `${q}-in-${w}s`, q, w };
};
const pk = (key) => Buffer.from(createHash("sha256").update(key).digest("hex").slice(0, 12)).toString("base64");
const gcra = ({ maxBurst, count, period }, i) => [maxBurst + 1 - i, Math.ceil((i * period) / count)];
const refused = ({ maxBurst, count, period }) => [0, Math.ceil(((maxBurst + 1) * period) / count)];
/** The RateLimit headers for `states` ([r, t]) of `limits`. */
const headersAfter = (limits, key, states) => {
  const names = limits.map(policy);
  return {
    "ratelimit-policy": names.map(({ name, q, w }) => `"${name}"; q=${q}; w=${w}; pk=:${pk(key)}:`).join(", "),
    ratelimit: names.map(({ name }, i) => `"${name}"; r=${states[i][0]}; t=${states[i][1]}`).join(", "),
  };
};
const ours = (response) =>
  Object.fromEntries(["ratelimit-policy", "ratelimit"].filter((n) => response.headers.has(n)).map((n) => [n, response.headers.get(n)]));

/** A Node http server of `app` (an express app) on a free loopback port; its base URL. */
async function serve(app) {
  const server = app.listen(0, "127.0.0.1");
  await once(server, "listening");
  after(() => server.close());
  return `http://127.0.0.1:${server.address().port}`;
}

async function fastifyServer(options) {
  const app = Fastify();
  await app.register(fastifyPlugin, options);
  app.get("/", async () => ({ hello: "world" }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  after(() => app.close());
  return `http://127.0.0.1:${app.server.address().port}`;
}

function helloExpress(middleware) {
  const app = express();
  app.use(middleware);
  app.get("/", (req, res) => res.json({ hello: "world" }));
  app.use((error, req, res, next) => res.status(500).json({ error: error.name }));
  return app;
}

/** Calls of the guard's commands so far on one server, the module's or their scripts'. */
async function guardCalls(con) {
  const stats = await con.info("commandstats");
  const names = ["cl.throttle", "cl.throttleall", "evalsha", "eval"];
  return names.reduce((sum, name) => sum + Number(stats.match(new RegExp(`^cmdstat_${name.replace(".", "\\.")}:calls=(\\d+)`, "m"))?.[1] ?? 0), 0);
}

for (const [backend, variable] of Object.entries(SERVERS)) {
  describe(`on the ${backend} backend`, () => {
    const con = connect(address(variable));
    const g = guard(connect(address(variable)));

    it("express: the burst, then 429 with Retry-After, headers from the GCRA", async () => {
      await con.del("rl:0:127.0.0.1"); // the client's IP: the default key, the same in every run
      const base = await serve(helloExpress(rateLimit({ guard: g, limits: [BURST] })));
      for (const i of [1, 2, 3]) {
        const response = await fetch(base);
        assert.equal(response.status, 200);
        assert.deepEqual(await response.json(), { hello: "world" });
        assert.deepEqual(ours(response), headersAfter([BURST], "127.0.0.1", [gcra(BURST, i)]));
        assert.equal(response.headers.get("retry-after"), null);
      }
      const response = await fetch(base);
      assert.equal(response.status, 429);
      assert.equal(response.headers.get("retry-after"), "20");
      assert.deepEqual(ours(response), headersAfter([BURST], "127.0.0.1", [refused(BURST)]));
      // A cell expires at the first ms at or after its arrival time (ns):
      // PTTL, read at a later ms rounded down, may say one ms more.
      const ttl = await con.pttl("rl:0:127.0.0.1");
      assert.ok(ttl > 59_000 && ttl <= 60_001, String(ttl));
    });

    it("fastify: several limits all or nothing, custom key and prefix", async () => {
      const user = `user-${randomUUID()}`;
      const limits = [BURST, WIDE];
      const base = await fastifyServer({ guard: g, limits, prefix: "api", key: (request) => String(request.headers["x-user"]) });
      const get = () => fetch(base, { headers: { "x-user": user } });
      for (const i of [1, 2, 3]) {
        const response = await get();
        assert.equal(response.status, 200);
        assert.deepEqual(ours(response), headersAfter(limits, user, [gcra(BURST, i), gcra(WIDE, i)]));
      }
      const before = await Promise.all([0, 1].map((i) => con.get(`api:${i}:${user}`)));
      const response = await get();
      assert.equal(response.status, 429);
      assert.equal(response.headers.get("retry-after"), "20");
      assert.deepEqual(ours(response), headersAfter(limits, user, [refused(BURST), gcra(WIDE, 3)]));
      // Refused by the burst: nothing consumed from the wide limit.
      assert.deepEqual(await Promise.all([0, 1].map((i) => con.get(`api:${i}:${user}`))), before);
      assert.ok(before.every((value) => value !== null));
      const ttl = await con.pttl(`api:1:${user}`);
      assert.ok(ttl > 17_000 && ttl <= 18_001, String(ttl));
    });

    for (const localBlock of [true, false]) {
      it(`localBlock ${localBlock}: ${localBlock ? "no" : "a"} server call for a refused key`, async () => {
        const one = { maxBurst: 0, count: 1, period: 60 };
        const prefix = `lb-${randomUUID()}`;
        const base = await fastifyServer({ guard: g, limits: [one], prefix, localBlock });
        assert.equal((await fetch(base)).status, 200);
        const calls = await guardCalls(con);
        const refusedOnce = await fetch(base);
        assert.equal(refusedOnce.status, 429);
        assert.equal(refusedOnce.headers.get("retry-after"), "60");
        assert.equal(await guardCalls(con), calls + 1);
        for (let n = 0; n < 5; n++) {
          const again = await fetch(base);
          assert.equal(again.status, 429);
          const retry = Number(again.headers.get("retry-after"));
          assert.ok(retry > 0 && retry <= 60, String(retry));
          assert.deepEqual(ours(again), headersAfter([one], "127.0.0.1", [[0, 60]]));
        }
        assert.equal(await guardCalls(con), calls + 1 + (localBlock ? 0 : 5));
      });
    }

    it("GuardStore: express-rate-limit counts in Redis (MON.INCRCHECK fixed window)", async () => {
      const prefix = `erl-${randomUUID()}:`;
      const store = new GuardStore({ guard: g, prefix });
      const app = helloExpress(expressRateLimit({ windowMs: 60_000, limit: 3, standardHeaders: "draft-8", legacyHeaders: false, store }));
      const base = await serve(app);
      const statuses = [];
      for (let n = 0; n < 4; n++) statuses.push((await fetch(base)).status);
      assert.deepEqual(statuses, [200, 200, 200, 429]);
      assert.equal(await con.get(`${prefix}127.0.0.1`), "4");
      const ttl = await con.pttl(`${prefix}127.0.0.1`);
      assert.ok(ttl > 59_000 && ttl <= 60_000, String(ttl));
      const info = await store.get("127.0.0.1");
      assert.equal(info.totalHits, 4);
      assert.ok(Math.abs(info.resetTime.getTime() - (Date.now() + ttl)) < 1000);
      await store.decrement("127.0.0.1");
      assert.equal((await store.get("127.0.0.1")).totalHits, 3);
      await store.resetKey("127.0.0.1");
      assert.equal(await store.get("127.0.0.1"), undefined);
      assert.equal((await fetch(base)).status, 200);
    });

    it("RateLimiterGuard: rate-limiter-flexible's consume/penalty/get/delete on CL.THROTTLE", async () => {
      const limiter = new RateLimiterGuard({ guard: g, points: 3, duration: 60, keyPrefix: `flx-${randomUUID()}` });
      assert.ok(limiter instanceof RateLimiterCompatibleAbstract);
      assert.equal(await limiter.get("ip"), null);
      const first = await limiter.consume("ip");
      assert.ok(first instanceof RateLimiterRes);
      assert.deepEqual(first.toJSON(), { remainingPoints: 2, msBeforeNext: 20_000, consumedPoints: 1, isFirstInDuration: true });
      assert.equal((await limiter.penalty("ip", 1)).remainingPoints, 1);
      assert.deepEqual((await limiter.get("ip")).toJSON(), { remainingPoints: 1, msBeforeNext: 40_000, consumedPoints: 2, isFirstInDuration: false });
      assert.equal((await limiter.consume("ip")).remainingPoints, 0);
      const rejection = await limiter.consume("ip").then(() => assert.fail("allowed past the limit"), (res) => res);
      assert.ok(rejection instanceof RateLimiterRes);
      assert.equal(rejection.remainingPoints, 0);
      assert.equal(rejection.msBeforeNext, 20_000);
      // Wrapped by the library's own union: the same verdict.
      const union = new RateLimiterUnion(limiter, new RateLimiterGuard({ guard: g, points: 100, duration: 60, keyPrefix: `flx2-${randomUUID()}` }));
      await assert.rejects(union.consume("ip"));
      assert.equal(await limiter.delete("ip"), true);
      assert.equal(await limiter.delete("ip"), false);
      assert.equal((await limiter.consume("ip")).remainingPoints, 2);
      await assert.rejects(limiter.set("ip", 1, 60), /no GCRA equivalent/);
    });

    it("RateLimiterGuard: reward is CL.REFUND, block and blockDuration are BLOCK", async () => {
      const keyPrefix = `flx-${randomUUID()}`;
      const limiter = new RateLimiterGuard({ guard: g, points: 3, duration: 60, keyPrefix }); // T 20 s
      await limiter.consume("ip", 2);
      assert.deepEqual((await limiter.reward("ip", 1)).toJSON(), { remainingPoints: 2, msBeforeNext: 20_000, consumedPoints: 1, isFirstInDuration: false });
      // Never above a full limiter, whose key is gone.
      assert.equal((await limiter.reward("ip", 5)).remainingPoints, 3);
      assert.equal(await con.exists(limiter.getKey("ip")), 0);
      assert.equal(await limiter.get("ip"), null);
      // block: refused for 120 s, beyond the 60 s a full refill takes; its
      // first point comes back then, the other two (2 T) after it.
      assert.deepEqual((await limiter.block("ip", 120)).toJSON(), { remainingPoints: 0, msBeforeNext: 120_000, consumedPoints: 3, isFirstInDuration: false });
      const pttl = await con.pttl(limiter.getKey("ip"));
      // The key expires at the first ms at or after the arrival time: PTTL,
      // read at a later ms rounded down, may say one ms more.
      assert.ok(pttl > 159_000 && pttl <= 160_001, `PTTL ${pttl}`);
      const refused = await limiter.consume("ip").then(() => assert.fail("allowed while blocked"), (res) => res);
      assert.equal(refused.msBeforeNext, 120_000);
      // A shorter block keeps the longer one.
      assert.equal((await limiter.block("ip", 10)).msBeforeNext, 120_000);
      // Inside the library's union: still refused, for as long.
      const union = new RateLimiterUnion(limiter, new RateLimiterGuard({ guard: g, points: 100, duration: 60, keyPrefix: `${keyPrefix}-wide` }));
      const rejected = await union.consume("ip").then(() => assert.fail("the union allowed a blocked key"), (res) => res);
      assert.equal(rejected[keyPrefix].msBeforeNext, 120_000);
      await assert.rejects(limiter.block("ip", 0), /at least 1 second/);

      // blockDuration: an allowed consume blocks nothing; the first refused
      // one blocks the key for 300 s; the next refusal says the same.
      const boxed = new RateLimiterGuard({ guard: g, points: 2, duration: 60, keyPrefix: `${keyPrefix}-box`, blockDuration: 300 });
      assert.equal(boxed.blockDuration, 300);
      assert.equal((await boxed.consume("ip")).msBeforeNext, 30_000);
      assert.equal((await boxed.consume("ip")).msBeforeNext, 60_000);
      const boxedOut = await boxed.consume("ip").then(() => assert.fail("allowed past the limit"), (res) => res);
      assert.deepEqual(boxedOut.toJSON(), { remainingPoints: 0, msBeforeNext: 300_000, consumedPoints: 2, isFirstInDuration: false });
      assert.equal((await boxed.penalty("ip", 1)).msBeforeNext, 300_000);
      // Without it (the setter, as rate-limiter-flexible's own limiters have it): refused for T only.
      boxed.blockDuration = 0;
      const plain = new RateLimiterGuard({ guard: g, points: 2, duration: 60, keyPrefix: `${keyPrefix}-plain` });
      await plain.consume("ip", 2);
      assert.equal((await plain.penalty("ip", 1)).msBeforeNext, 30_000);
      assert.throws(() => { boxed.blockDuration = 1.5; }, /whole seconds/);
    });
  });
}

/** A TCP server that accepts connections and never answers. */
async function silentServer() {
  const held = [];
  const server = createServer((socket) => held.push(socket));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  after(() => {
    held.forEach((socket) => socket.destroy());
    server.close();
  });
  return { server, held };
}

const TIMEOUT_MS = 300;
// Beyond the timeout: a loaded 2-core machine's scheduling, not a retry.
const MARGIN_MS = 150;

describe("Redis down or slow: answered within the timeout", () => {
  for (const trouble of ["down", "slow"]) {
    for (const onError of ["allow", "deny", "raise"]) {
      it(`${trouble}, onError ${onError}`, async () => {
        const silent = await silentServer();
        const where = trouble === "down" ? address("GUARD_DOWN") : { host: "127.0.0.1", port: silent.server.address().port };
        const g = guard(connect(where));
        const base = await serve(helloExpress(rateLimit({ guard: g, limits: [BURST], timeout: TIMEOUT_MS, onError })));
        const started = performance.now();
        const response = await fetch(base);
        const elapsed = performance.now() - started;
        assert.ok(elapsed <= TIMEOUT_MS + MARGIN_MS, `${elapsed} ms`);
        if (trouble === "slow") {
          assert.ok(elapsed >= TIMEOUT_MS - 10, `${elapsed} ms`);
          assert.ok(silent.held.length > 0, "the client never reached the silent server");
        }
        assert.equal(response.status, { allow: 200, deny: 503, raise: 500 }[onError]);
        if (onError === "raise") assert.deepEqual(await response.json(), { error: "TimeoutError" });
        assert.deepEqual(ours(response), {});
      });
    }
  }
});

describe("the guide's Express recipe (test/recipe_express.ts, compiled), as shown", () => {
  it("10 a minute per API key, then 429", async () => {
    const { app, redis } = require(path.join(process.env.GUARD_RECIPE_DIR, "recipe_express.js"));
    after(() => redis.disconnect());
    const base = await serve(app);
    const apiKey = randomUUID();
    const statuses = [];
    for (let n = 0; n < 11; n++) statuses.push((await fetch(`${base}/orders`, { headers: { "x-api-key": apiKey } })).status);
    assert.deepEqual(statuses, [...Array(10).fill(200), 429]);
  });
});
