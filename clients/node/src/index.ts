/**
 * redis-guard: typed methods for the module's commands over ioredis
 * (`Redis`, `Cluster`, 5.x) and node-redis (clients and clusters, 4.x and
 * 5.x). Through a cluster client every call goes to the node that owns its
 * key's slot, as one command.
 *
 * ```ts
 * const g = guard(new Redis.Cluster([{ host: "127.0.0.1", port: 7000 }]));
 * const { current, level } = await g.incrcheck("{cust:42}:orders", 1, 3600, [5, 20]);
 * ```
 */
import { commands, type Bytes, type CommandName, type Commands, type ResultOf, type Spec } from "./commands";

export * from "./commands";

/** Sends commands through one client library; replies come back raw. */
interface Adapter {
  send(spec: Spec<unknown>): Promise<unknown>;
  /** The raw replies in order; a command's error is its element. */
  batch(specs: readonly Spec<unknown>[], transaction: boolean): Promise<unknown[]>;
}

/** An ioredis `Redis` or `Cluster` (5.x), as far as redis-guard uses it. */
export interface IoredisClient {
  readonly isCluster: boolean;
  pipeline(...args: any[]): unknown;
  multi(...args: any[]): unknown;
  sendCommand(...args: any[]): unknown;
}

/** A node-redis client or cluster (4.x, 5.x), as far as redis-guard uses it. */
export interface NodeRedisClient {
  sendCommand(...args: any[]): unknown;
  multi(...args: any[]): unknown;
}

export type GuardClient = IoredisClient | NodeRedisClient;

/**
 * ioredis's `Command` class, without importing ioredis (the package has no
 * dependency; a linked install could not resolve it anyway): `Redis.Command`
 * for a `Redis`; for a `Cluster`, the class of a command it builds, caught
 * by a throwaway view of the client that never sends it.
 */
function ioredisCommandClass(client: any): any {
  const own = client.constructor?.Command;
  if (typeof own === "function") return own;
  let found: any;
  const probe = Object.create(client);
  probe.options = {}; // no auto-pipelining: the probe must reach sendCommand
  probe.sendCommand = (command: any) => {
    found = command.constructor;
    return Promise.resolve();
  };
  probe.call("PING");
  if (typeof found !== "function") throw new TypeError("redis-guard: cannot find ioredis's Command class");
  return found;
}

/**
 * ioredis does not know the module's commands, so it would find no key and
 * send them to a random node: each command is built here with its key set,
 * so `getSlot()` gives the owner's slot, for plain calls and pipelines.
 */
function ioredisAdapter(client: any): Adapter {
  const Command = ioredisCommandClass(client);
  // ioredis's `keyPrefix` option, applied to every key as ioredis applies
  // it to the keys of the commands it knows.
  const prefix: string | Buffer | undefined = client.options?.keyPrefix || undefined;
  const prefixed = (key: Bytes): Bytes =>
    prefix === undefined
      ? key
      : Buffer.isBuffer(key) || Buffer.isBuffer(prefix)
        ? Buffer.concat([Buffer.from(prefix), Buffer.from(key)])
        : prefix + key;
  const make = (spec: Spec<unknown>): any => {
    const args = spec.args.slice(1);
    for (const i of spec.keyIndexes) args[i - 1] = prefixed(args[i - 1]);
    const command = new Command(spec.args[0], args, { replyEncoding: "utf8", readOnly: spec.readonly });
    command.keys = spec.key === undefined ? [] : [args[spec.keyIndexes[0] - 1]];
    return command;
  };
  return {
    send: (spec) => client.sendCommand(make(spec)),
    async batch(specs, transaction) {
      const pipeline = transaction ? client.multi() : client.pipeline();
      for (const spec of specs) pipeline.sendCommand(make(spec));
      const replies: Array<[Error | null, unknown]> | null = await pipeline.exec();
      if (replies === null) throw new Error("redis-guard: the transaction was aborted");
      return replies.map(([error, reply]) => error ?? reply);
    },
  };
}

/**
 * node-redis routes by the `firstKey` a caller gives: `sendCommand(firstKey,
 * isReadonly, args)` on a cluster, `multi(firstKey)` for its pipelines.
 * Cluster multis take `addCommand(firstKey, args)` in 4.x and
 * `addCommand(firstKey, isReadonly, args)` in 5.x.
 */
function nodeRedisAdapter(client: any): Adapter {
  const cluster = typeof client.getSlotMaster === "function";
  // node-redis 4 in legacyMode keeps its promise API under `.v4` (which
  // throws when read on a client that is not in legacy mode).
  const legacy = !cluster && client.options?.legacyMode === true;
  const modern = (target: any): any => (legacy ? target.v4 : target);
  const api = modern(client);
  return {
    send: (spec) => (cluster ? api.sendCommand(spec.key, spec.readonly, [...spec.args]) : api.sendCommand([...spec.args])),
    async batch(specs, transaction) {
      const firstKey = specs.find((spec) => spec.key !== undefined)?.key;
      const multi = cluster ? client.multi(firstKey) : client.multi();
      const queue = modern(multi);
      for (const spec of specs) {
        if (!cluster) queue.addCommand([...spec.args]);
        else if (queue.addCommand.length >= 4) queue.addCommand(spec.key, spec.readonly, [...spec.args]);
        else queue.addCommand(spec.key, [...spec.args]);
      }
      try {
        // exec(true) is execAsPipeline() in 4.x and 5.x, legacy mode's too.
        return await queue.exec(!transaction);
      } catch (error: any) {
        // node-redis 5: MultiErrorReply carries every reply, errors included.
        if (Array.isArray(error?.replies)) return error.replies;
        throw error;
      }
    },
  };
}

function adapterFor(client: unknown): Adapter {
  const c = client as any;
  if (c === null || typeof c !== "object" || typeof c.sendCommand !== "function") {
    throw new TypeError("redis-guard: guard() takes an ioredis Redis or Cluster, or a node-redis client or cluster");
  }
  if (typeof c.isCluster === "boolean" && typeof c.pipeline === "function") return ioredisAdapter(c);
  return nodeRedisAdapter(c);
}

type Method<K extends CommandName> = (...args: Parameters<Commands[K]>) => Promise<ResultOf<K>>;
type Queued<K extends CommandName, R extends unknown[]> = (...args: Parameters<Commands[K]>) => GuardPipeline<[...R, ResultOf<K>]>;

/** Every command as a method that resolves its parsed reply. */
export type GuardMethods = { [K in CommandName]: Method<K> };
/** Every command as a method that queues it; the result type grows per call. */
export type PipelineMethods<R extends unknown[]> = { [K in CommandName]: Queued<K, R> };

export interface PipelineOptions {
  /** MULTI/EXEC around the queued commands (default false: a plain pipeline). */
  transaction?: boolean;
}

export interface Guard extends GuardMethods {}

/** The commands over one client. Make it with `guard(client)`. */
export class Guard {
  readonly #adapter: Adapter;

  constructor(client: GuardClient) {
    this.#adapter = adapterFor(client);
  }

  /** Queues commands; `exec()` sends them at once and resolves their parsed results in order. */
  pipeline(options: PipelineOptions = {}): GuardPipeline<[]> {
    return new GuardPipeline(this.#adapter, options.transaction ?? false);
  }

  /** @internal */
  static _send<T>(guard: Guard, spec: Spec<T>): Promise<T> {
    return guard.#adapter.send(spec).then(spec.parse);
  }
}

export interface GuardPipeline<R extends unknown[]> extends PipelineMethods<R> {}

/**
 * Queued commands. In a cluster they go to one node (the first key's):
 * give their keys one hash tag. `exec()` rejects with the first command's
 * error (the client library's own) when any command failed.
 */
export class GuardPipeline<R extends unknown[] = []> {
  readonly #adapter: Adapter;
  readonly #transaction: boolean;
  readonly #queue: Spec<unknown>[] = [];

  /** @internal */
  constructor(adapter: Adapter, transaction: boolean) {
    this.#adapter = adapter;
    this.#transaction = transaction;
  }

  /** How many commands are queued. */
  get length(): number {
    return this.#queue.length;
  }

  async exec(): Promise<R> {
    const specs = this.#queue.splice(0);
    if (specs.length === 0) return [] as unknown as R;
    const replies = await this.#adapter.batch(specs, this.#transaction);
    const failed = replies.find((reply) => reply instanceof Error);
    if (failed !== undefined) throw failed;
    return replies.map((reply, i) => specs[i].parse(reply)) as R;
  }

  /** @internal */
  static _queue(pipeline: GuardPipeline<unknown[]>, spec: Spec<unknown>): void {
    pipeline.#queue.push(spec);
  }
}

for (const name of Object.keys(commands) as CommandName[]) {
  const build = commands[name] as (...args: unknown[]) => Spec<unknown>;
  Object.defineProperty(Guard.prototype, name, {
    value: function (this: Guard, ...args: unknown[]) {
      return Guard._send(this, build(...args));
    },
    writable: true,
    configurable: true,
  });
  Object.defineProperty(GuardPipeline.prototype, name, {
    value: function (this: GuardPipeline<unknown[]>, ...args: unknown[]) {
      GuardPipeline._queue(this, build(...args));
      return this;
    },
    writable: true,
    configurable: true,
  });
}

/** The module's commands over an ioredis or node-redis client (standalone or cluster). */
export function guard(client: GuardClient): Guard {
  return new Guard(client);
}

export default guard;
