// A user's program for the packed install (clients/node/test/install-packed.sh):
// tests/client_node.rs copies it into that folder and runs it there, so
// `redis-guard`, `ioredis` and `redis` resolve as in an application:
// from the tarball's install, beside ioredis 6.1.0 and node-redis 6.4.0.
// GUARD_STANDALONE has the module, GUARD_STANDALONE_NO_MODULE does not
// (the package runs the scripts the tarball carries). Prints one line per
// client and server.
import { realpathSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import Redis from "ioredis";
import { createClient } from "redis";
import { guard } from "redis-guard";

const require = createRequire(import.meta.url);
const here = path.dirname(realpathSync(new URL(import.meta.url).pathname));
// The tarball's copy, not a link to a checkout; its scripts inside it.
const installed = path.dirname(realpathSync(require.resolve("redis-guard/package.json")));
if (installed !== path.join(here, "node_modules", "redis-guard")) throw new Error(`redis-guard from ${installed}`);
for (const lib of ["ioredis", "redis"]) console.log(lib, require(`${lib}/package.json`).version);

const servers = { module: process.env.GUARD_STANDALONE, scripts: process.env.GUARD_STANDALONE_NO_MODULE };
for (const [backend, address] of Object.entries(servers)) {
  const [host, port] = address.split(":");
  const ioredis = new Redis({ host, port: Number(port) });
  const nodeRedis = await createClient({ url: `redis://${host}:${port}` }).connect();
  for (const [name, client] of [["ioredis", ioredis], ["redis", nodeRedis]]) {
    const g = guard(client, { backend });
    const key = `packed:${name}`;
    const first = await g.throttle(key, 1, 2, 60);
    const second = await g.throttle(key, 1, 2, 60);
    const third = await g.throttle(key, 1, 2, 60);
    const { current, level } = await g.incrcheck(`packed:${name}:orders`, 1, 60, [1, 5]);
    console.log(backend, name, first.remaining, second.remaining, third.limited, current, level);
  }
  ioredis.disconnect();
  await nodeRedis.quit();
}
