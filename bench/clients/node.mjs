// `make bench-clients`, the Node half: the rows of bench/clients/python.py
// through one Node cluster client, GUARD_CLIENT: `ioredis` (its Cluster)
// or `redis` (node-redis's createCluster). Sequential and pipelined, the
// package's MON.INCRCHECK, CL.THROTTLE and COUPON.RESERVE against INCRBY
// and the Lua twins (EVALSHA through the client's own routed script call),
// and a raw MON.INCRCHECK through the client's generic command call; with
// the server commands each call cost (INFO commandstats and errorstats of
// every primary); and the package's MON.INCRCHECK, CL.THROTTLE and
// COUPON.RESERVE on its scripts backend. Prints one JSON object a row, as python.py does;
// bench/bench_clients.rs makes the table. Run it from a folder where the
// client library and redis-guard are installed (a set made by
// clients/node/test/install.sh). GUARD_CLUSTER names the primaries,
// GUARD_BENCH_SECONDS the time a row runs.
//
// Pipelines: a cluster pipeline of either client goes to one node, and
// each needs its commands in one slot (ioredis rejects a pipeline whose
// keys span slots; node-redis sends the whole multi to its first key's
// node, where the others would be answered MOVED). So a pipelined row
// sends batch b (16 calls) under one hash tag: its keys are the ones
// python.py gives call b, the same key for the 16 counter calls
// (`{k<b mod 1000>}:n`, `...:nt`, `...:nl`) and campaign b's keys with 16
// users for the reservations. python.py's redis-py pipelines instead
// split their 16 calls by node themselves.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const require = createRequire(path.join(process.cwd(), "index.js"));
const { guard } = require("redis-guard");

const LIBRARY = process.env.GUARD_CLIENT ?? "ioredis";
const SECONDS = Number(process.env.GUARD_BENCH_SECONDS ?? "1.5");
const BATCH = 16;
const SCRIPTS = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "scripts");
const NODES = (process.env.GUARD_CLUSTER ?? "")
  .split(",")
  .filter(Boolean)
  .map((address) => {
    const at = address.lastIndexOf(":");
    return { host: address.slice(0, at), port: Number(address.slice(at + 1)) };
  });
const TWINS = Object.fromEntries(
  ["incrcheck", "throttle", "campaign_reserve"].map((name) => [name, readFileSync(path.join(SCRIPTS, `${name}.lua`), "utf8")]),
);
const CAMPAIGNS = Array.from({ length: 12 }, (_, n) => `{cpn${n}}`);
// The module's commands and the twins' EVALSHA, and what routing costs.
const COUNTED = new Set(["mon.incrcheck", "cl.throttle", "coupon.reserve", "incrby", "evalsha", "command|getkeys"]);
const LIMIT = 10 ** 9;

const counter = (i) => `{k${i % 1000}}:n`;
const campaign = (i) => CAMPAIGNS[i % CAMPAIGNS.length];
const twinKeys = (tag) => [`${tag}:meta`, `${tag}:claims`, `${tag}:holds`, `${tag}:users`];
// The batch an index of a pipelined row belongs to (see the top).
const batchOf = (i) => Math.floor(i / BATCH);

/** One operation: how to make its i-th call, alone or in a batch (null: not pipelined). */
class Row {
  constructor(name, one, batch) {
    Object.assign(this, { name, one, batch });
  }
}

/**
 * The rows of every client, around its own INCRBY and raw-call rows:
 * the package's calls and the Lua twins through the client's own routed
 * EVALSHA (`twin`), each also pipelined (`pipelined`: the client's batch).
 */
function sharedRows({ client, user, pipelined, twin, incrby, raw }) {
  const g = guard(client);
  // The same methods on the scripts backend (the module loaded or not, the package sends EVALSHA).
  const scripted = guard(client, { backend: "scripts" });
  const guardPipelined = (queue, on = g) => (indexes) => {
    const pipeline = on.pipeline();
    for (const i of indexes) queue(pipeline, i);
    return pipeline.exec();
  };
  return [
    incrby,
    new Row(
      "MON.INCRCHECK (package)",
      (i) => g.incrcheck(counter(i), 1, 3600, [LIMIT]),
      guardPipelined((p, i) => p.incrcheck(counter(batchOf(i)), 1, 3600, [LIMIT])),
    ),
    raw,
    new Row(
      "incrcheck.lua (EVALSHA)",
      (i) => twin(client, "incrcheck", [counter(i)], [1, 3600, LIMIT]),
      pipelined((p, i) => twin(p, "incrcheck", [counter(batchOf(i))], [1, 3600, LIMIT])),
    ),
    new Row(
      "CL.THROTTLE (package)",
      (i) => g.throttle(counter(i) + "t", 10 ** 6, 10 ** 6, 1),
      guardPipelined((p, i) => p.throttle(counter(batchOf(i)) + "t", 10 ** 6, 10 ** 6, 1)),
    ),
    new Row(
      "throttle.lua (EVALSHA)",
      (i) => twin(client, "throttle", [counter(i) + "l"], [10 ** 6, 10 ** 6, 1, 1]),
      pipelined((p, i) => twin(p, "throttle", [counter(batchOf(i)) + "l"], [10 ** 6, 10 ** 6, 1, 1])),
    ),
    new Row(
      "MON.INCRCHECK (scripts)",
      (i) => scripted.incrcheck(counter(i), 1, 3600, [LIMIT]),
      guardPipelined((p, i) => p.incrcheck(counter(batchOf(i)), 1, 3600, [LIMIT]), scripted),
    ),
    new Row(
      "CL.THROTTLE (scripts)",
      (i) => scripted.throttle(counter(i) + "t", 10 ** 6, 10 ** 6, 1),
      guardPipelined((p, i) => p.throttle(counter(batchOf(i)) + "t", 10 ** 6, 10 ** 6, 1), scripted),
    ),
    new Row(
      "COUPON.RESERVE (scripts)",
      (i) => scripted.reserve(`${campaign(i)}:scpn`, user(i)),
      guardPipelined((p, i) => p.reserve(`${campaign(batchOf(i))}:scpn`, user(i) + "p"), scripted),
    ),
    new Row(
      "COUPON.RESERVE (package)",
      (i) => g.reserve(`${campaign(i)}:cpn`, user(i)),
      guardPipelined((p, i) => p.reserve(`${campaign(batchOf(i))}:cpn`, user(i) + "p")),
    ),
    new Row(
      "campaign_reserve.lua (EVALSHA)",
      (i) => twin(client, "campaign_reserve", twinKeys(campaign(i)), [user(i), 3600]),
      pipelined((p, i) => twin(p, "campaign_reserve", twinKeys(campaign(batchOf(i))), [user(i) + "p", 3600])),
    ),
  ];
}

/** The library's own clients: one per primary for the statistics, the cluster client, its rows. */
function ioredis() {
  const module = require("ioredis");
  const Redis = module.default ?? module;
  const ready = (client) =>
    new Promise((resolve, reject) => {
      client.once("ready", () => resolve(client));
      client.once("error", reject);
    });
  // ioredis's pipeline resolves [error, reply] pairs: a failed call fails the batch.
  const exec = async (pipeline) => {
    for (const [error] of await pipeline.exec()) if (error) throw error;
  };
  return {
    name: `ioredis ${require("ioredis/package.json").version}`,
    admin: async ({ host, port }) => {
      const client = await ready(new Redis({ host, port }));
      return { send: (args) => client.call(args[0], ...args.slice(1)), close: () => client.disconnect() };
    },
    cluster: () => ready(new Redis.Cluster(NODES)),
    exists: (client, key) => client.exists(key),
    hset: (client, key, fields) => client.hset(key, fields),
    close: (client) => client.disconnect(),
    rows(client, shas, user) {
      const pipelined = (queue) => (indexes) => {
        const pipeline = client.pipeline();
        for (const i of indexes) queue(pipeline, i);
        return exec(pipeline);
      };
      // ioredis knows EVALSHA's keys (after numkeys) and routes it by them.
      const twin = (target, name, keys, args) => target.evalsha(shas[name], keys.length, ...keys, ...args);
      return sharedRows({
        client,
        user,
        pipelined,
        twin,
        incrby: new Row("INCRBY", (i) => client.incrby(counter(i), 1), pipelined((p, i) => p.incrby(counter(batchOf(i)), 1))),
        // ioredis does not know the command's key: a random node, MOVED when it is not the owner.
        raw: new Row("MON.INCRCHECK (raw call)", (i) => client.call("MON.INCRCHECK", counter(i), 1, 3600, LIMIT), null),
      });
    },
  };
}

function nodeRedis() {
  const { createClient, createCluster } = require("redis");
  const url = ({ host, port }) => `redis://${host}:${port}`;
  const close = (client) => (typeof client.close === "function" ? client.close() : client.quit());
  const connect = async (client) => {
    client.on("error", (error) => console.error(`${LIBRARY}: ${error}`));
    await client.connect();
    return client;
  };
  return {
    name: `node-redis ${require("redis/package.json").version}`,
    admin: async (node) => {
      const client = await connect(createClient({ url: url(node) }));
      return { send: (args) => client.sendCommand(args.map(String)), close: () => close(client) };
    },
    cluster: () => connect(createCluster({ rootNodes: NODES.map((node) => ({ url: url(node) })) })),
    exists: (client, key) => client.exists(key),
    hset: (client, key, fields) => client.hSet(key, fields),
    close,
    rows(client, shas, user) {
      // A cluster multi goes to its first key's node; execAsPipeline() sends it without MULTI/EXEC.
      const pipelined = (queue) => (indexes) => {
        const multi = client.multi();
        for (const i of indexes) queue(multi, i);
        return multi.execAsPipeline();
      };
      // evalSha routes by its first key, in a cluster client and a cluster multi.
      const twin = (target, name, keys, args) => target.evalSha(shas[name], { keys, arguments: args.map(String) });
      return sharedRows({
        client,
        user,
        pipelined,
        twin,
        incrby: new Row("INCRBY", (i) => client.incrBy(counter(i), 1), pipelined((m, i) => m.incrBy(counter(batchOf(i)), 1))),
        // No firstKey: a random node, MOVED when it is not the owner.
        raw: new Row(
          "MON.INCRCHECK (raw call)",
          (i) => client.sendCommand(undefined, false, ["MON.INCRCHECK", counter(i), "1", "3600", String(LIMIT)]),
          null,
        ),
      });
    },
  };
}

const library = { ioredis, redis: nodeRedis }[LIBRARY];
if (library === undefined) throw new Error(`GUARD_CLIENT must be ioredis or redis, not ${LIBRARY}`);
const lib = library();

/** INFO's `name:field=value,...` lines as {name: {field: value}}. */
function info(text) {
  const sections = {};
  for (const line of String(text).split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (line.startsWith("#") || colon < 0) continue;
    sections[line.slice(0, colon)] = Object.fromEntries(line.slice(colon + 1).split(",").map((pair) => pair.split("=")));
  }
  return sections;
}

async function serverCost(admins) {
  const total = {};
  const add = (name, count) => (total[name] = (total[name] ?? 0) + count);
  for (const admin of admins) {
    for (const [key, stat] of Object.entries(info(await admin.send(["INFO", "commandstats"])))) {
      const name = key.replace(/^cmdstat_/, "");
      if (COUNTED.has(name)) add(name, Number(stat.calls) + Number(stat.rejected_calls ?? 0));
    }
    for (const [name, stat] of Object.entries(info(await admin.send(["INFO", "errorstats"])))) add(name, Number(stat.count));
  }
  return total;
}

async function prepare(admins, client) {
  const shas = {};
  for (const admin of admins) {
    for (const [name, body] of Object.entries(TWINS)) shas[name] = String(await admin.send(["SCRIPT", "LOAD", body]));
  }
  const g = guard(client);
  const scripted = guard(client, { backend: "scripts" });
  for (const tag of CAMPAIGNS) {
    if (!(await lib.exists(client, `${tag}:cpn`))) {
      await g.create(`${tag}:cpn`, LIMIT, { hold: 3600 });
      // The scripts keep a campaign in their own layout (WRONGTYPE to the module's).
      await scripted.create(`${tag}:scpn`, LIMIT, { hold: 3600 });
      await lib.hset(client, `${tag}:meta`, { limit: String(LIMIT), peruser: "1", confirmed: "0" });
    }
  }
  return shas;
}

async function measure(admins, row, pipelined) {
  if (pipelined && row.batch === null) return null;
  let i = 0;
  const loop = async (seconds) => {
    let calls = 0;
    const deadline = performance.now() + seconds * 1000;
    while (performance.now() < deadline) {
      if (pipelined) {
        await row.batch(Array.from({ length: BATCH }, (_, j) => i + j));
        i += BATCH;
        calls += BATCH;
      } else {
        await row.one(i);
        i += 1;
        calls += 1;
      }
    }
    return calls;
  };
  // Unlike python.py, a fifth of the time first, not measured: V8 compiles
  // the client's code for a call during its first thousands, so the first
  // row measured (INCRBY) would pay for it.
  await loop(SECONDS / 5);
  for (const admin of admins) await admin.send(["CONFIG", "RESETSTAT"]);
  const start = performance.now();
  const calls = await loop(SECONDS);
  const elapsed = (performance.now() - start) / 1000;
  return { rate: calls / elapsed, cost: await serverCost(admins), calls };
}

async function main() {
  const admins = await Promise.all(NODES.map((node) => lib.admin(node)));
  const client = await lib.cluster();
  const shas = await prepare(admins, client);
  const run = String(Date.now());
  const tag = LIBRARY === "ioredis" ? "ioredis" : "node-redis";
  for (const row of lib.rows(client, shas, (i) => `${run}:${tag}:${i}`)) {
    for (const pipelined of [false, true]) {
      const measured = await measure(admins, row, pipelined);
      if (measured === null) continue;
      const { rate, cost, calls } = measured;
      console.log(
        JSON.stringify({ client: lib.name, op: row.name, pipelined, calls_per_s: Math.round(rate), calls, server: cost }),
      );
    }
  }
  await lib.close(client);
  for (const admin of admins) await admin.close();
}

await main();
