// The client library under test (GUARD_CLIENT: ioredis or redis), behind
// one small interface so that every test runs unchanged on each: make a
// standalone client or a cluster client, send a raw command, close. The
// servers: with the module (GUARD_STANDALONE, GUARD_CLUSTER) and without
// it (GUARD_STANDALONE_NO_MODULE, GUARD_CLUSTER_NO_MODULE).
import { createRequire } from "node:module";
import path from "node:path";

const require = createRequire(path.join(process.cwd(), "index.js"));

export const library = process.env.GUARD_CLIENT ?? "ioredis";
export const version = require(`${library}/package.json`).version;
export const major = Number(version.split(".")[0]);
export const guardPackage = require("redis-guard");

const address = (text) => {
  const [host, port] = text.split(":");
  return { host, port: Number(port) };
};
const addresses = (text) => (text ?? "").split(",").filter(Boolean).map(address);
export const standaloneAddress = address(process.env.GUARD_STANDALONE ?? "127.0.0.1:6379");
export const clusterAddresses = addresses(process.env.GUARD_CLUSTER);
export const [standaloneNoModuleAddress] = addresses(process.env.GUARD_STANDALONE_NO_MODULE);
export const clusterNoModuleAddresses = addresses(process.env.GUARD_CLUSTER_NO_MODULE);

function ioredis() {
  const module = require("ioredis");
  const Redis = module.default ?? module;
  const ready = (client) =>
    new Promise((resolve, reject) => {
      client.once("ready", resolve);
      client.once("error", reject);
    });
  const wrap = (client) => ({
    client,
    raw: (args) => client.call(args[0], ...args.slice(1)),
    close: () => client.disconnect(),
  });
  return {
    resp3: false,
    async standalone({ host, port }) {
      const client = new Redis({ host, port, maxRetriesPerRequest: 2 });
      await ready(client);
      return wrap(client);
    },
    async cluster(nodes, options = {}) {
      const client = new Redis.Cluster(nodes, { ...options, redisOptions: { maxRetriesPerRequest: 2 } });
      await ready(client);
      return wrap(client);
    },
  };
}

function nodeRedis() {
  const { createClient, createCluster } = require("redis");
  const url = ({ host, port }) => `redis://${host}:${port}`;
  const close = (client) => (typeof client.close === "function" ? client.close() : client.quit());
  return {
    resp3: major >= 5,
    async standalone(node, { resp, legacyMode } = {}) {
      const client = createClient({ url: url(node), ...(resp ? { RESP: resp } : {}), ...(legacyMode ? { legacyMode } : {}) });
      client.on("error", () => {});
      await client.connect();
      const api = legacyMode ? client.v4 : client;
      return { client, raw: (args) => api.sendCommand(args.map(String)), close: () => (legacyMode ? api.quit() : close(client)) };
    },
    async cluster(nodes, { resp } = {}) {
      const client = createCluster({ rootNodes: nodes.map((node) => ({ url: url(node) })), ...(resp ? { RESP: resp } : {}) });
      client.on("error", () => {});
      await client.connect();
      // A raw call routed by hand: the key is the first argument (CL.THROTTLEALL, COUPON.RESERVEALL: after numkeys; EVAL: after the script and numkeys).
      const firstKey = (args) => String(/^(cl\.throttleall|coupon\.reserveall)$/i.test(args[0]) ? args[2] : /^eval/i.test(args[0]) ? args[3] : args[1]);
      return { client, raw: (args) => client.sendCommand(firstKey(args), false, args.map(String)), close: () => close(client) };
    },
  };
}

export const clients = library === "ioredis" ? ioredis() : nodeRedis();
