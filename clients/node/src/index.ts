/**
 * redis-guard: typed methods for the module's commands over ioredis
 * (`Redis`, `Cluster`, 5.x and 6.x) and node-redis (clients and clusters,
 * 4.x to 6.x), sent as the module's commands or, where the module is not
 * loaded (managed services), as their Lua scripts. Through a cluster
 * client every call goes to the node that owns its key's slot, as one
 * command.
 *
 * ```ts
 * const g = guard(new Redis.Cluster([{ host: "127.0.0.1", port: 7000 }]));
 * const { current, level } = await g.incrcheck("{cust:42}:orders", 1, 3600, [5, 20]);
 * ```
 */
import { randomUUID } from "node:crypto";
import { commands, type Bytes, type CommandName, type Commands, type Int, type Reservation, type ResultOf, type Spec } from "./commands";
import { LeaseRefused, typed } from "./errors";
import { evalsha, isNoScript, namesModuleCommand, scriptLoad, scriptOf, type Script } from "./scripts";

export * from "./commands";
export { CampaignExists, GuardError, LeaseRefused, NoSuchCampaign, WrongType } from "./errors";

/** `withLease`'s options: the lease time (seconds, default 30) and the campaign's ledger. */
export interface LeaseOptions {
  hold?: Int;
  ledger?: Bytes;
}

/** Sends commands through one client library; replies come back raw. */
interface Adapter {
  send(spec: Spec<unknown>): Promise<unknown>;
  /** The raw replies in order; a command's error is its element. */
  batch(specs: readonly Spec<unknown>[], transaction: boolean): Promise<unknown[]>;
}

/** An ioredis `Redis` or `Cluster` (5.x, 6.x), as far as redis-guard uses it. */
export interface IoredisClient {
  readonly isCluster: boolean;
  pipeline(...args: any[]): unknown;
  multi(...args: any[]): unknown;
  sendCommand(...args: any[]): unknown;
}

/** A node-redis client or cluster (4.x to 6.x), as far as redis-guard uses it. */
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
    command.keys = spec.key === undefined ? [] : [prefixed(spec.key)];
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
 * isReadonly, args)` on a cluster, `multi(firstKey)` for its transactions.
 * Cluster multis take `addCommand(firstKey, args)` in 4.x and
 * `addCommand(firstKey, isReadonly, args)` in 5.x and 6.x.
 */
function nodeRedisAdapter(client: any): Adapter {
  const cluster = typeof client.getSlotMaster === "function";
  // node-redis 4 in legacyMode keeps its promise API under `.v4` (which
  // throws when read on a client that is not in legacy mode).
  const legacy = !cluster && client.options?.legacyMode === true;
  const modern = (target: any): any => (legacy ? target.v4 : target);
  const api = modern(client);
  const send = (spec: Spec<unknown>): Promise<unknown> =>
    cluster ? api.sendCommand(spec.key, spec.readonly, [...spec.args]) : api.sendCommand([...spec.args]);
  return {
    send,
    async batch(specs, transaction) {
      // A pipeline: node-redis writes the commands of one tick at once.
      // (Its execAsPipeline() rejects with the first error in 6.x, and the
      // other replies are lost: which calls ran must be known.)
      if (!transaction) return Promise.all(specs.map((spec) => send(spec).catch((error: unknown) => error)));
      const firstKey = specs.find((spec) => spec.key !== undefined)?.key;
      const multi = cluster ? client.multi(firstKey) : client.multi();
      const queue = modern(multi);
      for (const spec of specs) {
        if (!cluster) queue.addCommand([...spec.args]);
        else if (queue.addCommand.length >= 4) queue.addCommand(spec.key, spec.readonly, [...spec.args]);
        else queue.addCommand(spec.key, [...spec.args]);
      }
      try {
        return await queue.exec();
      } catch (error: any) {
        // node-redis 5 and 6: MultiErrorReply carries every reply, errors included.
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

export type Backend = "auto" | "module" | "scripts";

export interface GuardOptions {
  /**
   * `"module"`: the module's commands. `"scripts"`: each command's Lua
   * script (EVALSHA), for servers that cannot load the module (managed
   * services). `"auto"` (default): the module's commands until the server
   * answers that it has no such command, then scripts for good (one
   * warning). Nothing else is asked of the server to decide.
   */
  backend?: Backend;
}

/**
 * How a guard sends the described calls: as the module's commands or as
 * their scripts. A script is loaded (SCRIPT LOAD, on the node of the key
 * that runs it) the first time this guard runs it, and again when the
 * server answers NOSCRIPT (a failover, a restart, SCRIPT FLUSH), after
 * which the call runs once more: a call answered NOSCRIPT or "unknown
 * command" did not run, so sending it again is safe.
 */
class Sender {
  readonly #adapter: Adapter;
  #scripts: boolean;
  /** `"auto"`, not yet switched. */
  #mayswitch: boolean;
  /** The scripts this guard has loaded (on some node: another may still answer NOSCRIPT). */
  readonly #loaded = new Set<string>();

  constructor(adapter: Adapter, backend: Backend) {
    if (!["auto", "module", "scripts"].includes(backend)) {
      throw new TypeError(`redis-guard: backend is "auto", "module" or "scripts", not ${JSON.stringify(backend)}`);
    }
    this.#adapter = adapter;
    this.#scripts = backend === "scripts";
    this.#mayswitch = backend === "auto";
  }

  /**
   * The first attempt at `spec`: the module's command, or its script's
   * EVALSHA (the script loaded first if this guard has not loaded it yet).
   * The common call returns the client's own promise, neither awaited nor
   * wrapped: each wrapper (an async function, a `.catch`) costs every call
   * a promise and a microtask turn. When it fails, `retry` decides what the
   * failure means. Never throws: a failure is the promise's.
   */
  send(spec: Spec<unknown>): Promise<unknown> {
    try {
      // spec.raw: a plain command of the server's (reset's DEL), as it is on either backend.
      if (spec.raw || !this.#scripts) return this.#adapter.send(spec);
      const script = scriptOf(String(spec.args[0]));
      if (!this.#loaded.has(script.sha)) return this.#load(script, spec.key).then(() => this.#adapter.send(evalsha(spec, script)));
      return this.#adapter.send(evalsha(spec, script));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * After `send(spec)` failed with `error`: the call again where it did not
   * run, else `error`. The server has no such command (`"auto"`): scripts
   * from now on, the call as a script. NOSCRIPT: the script loaded again
   * and the call sent once more.
   */
  async retry(spec: Spec<unknown>, error: unknown): Promise<unknown> {
    if (this.#switchedOn(error, [spec])) {
      try {
        return await this.send(spec);
      } catch (again) {
        error = again;
      }
    }
    if (!isNoScript(error)) throw error;
    const script = scriptOf(String(spec.args[0]));
    await this.#load(script, spec.key);
    return this.#adapter.send(evalsha(spec, script));
  }

  /** The raw replies in order, a command's error as its element. */
  async batch(specs: readonly Spec<unknown>[], transaction: boolean): Promise<unknown[]> {
    if (this.#scripts) return this.#batchOfScripts(specs, transaction);
    let replies: unknown[];
    try {
      replies = await this.#adapter.batch(specs, transaction);
    } catch (error) {
      // An unknown command aborts a MULTI (EXECABORT, ioredis; node-redis
      // rejects with the command's error): nothing ran.
      const cause = [error, ...((error as any)?.previousErrors ?? [])].find((each) => namesModuleCommand(each, specs));
      if (!transaction || !this.#switchedOn(cause, specs)) throw error;
      return this.#batchOfScripts(specs, true);
    }
    const unknown = replies.flatMap((reply, i) => (namesModuleCommand(reply, [specs[i]]) ? [i] : []));
    if (unknown.length === 0 || !this.#switchedOn(replies[unknown[0]], specs)) return replies;
    return replaced(replies, unknown, await this.#batchOfScripts(unknown.map((i) => specs[i]), false));
  }

  /** `"auto"` meets the server's unknown-command error for one of `specs`' commands: scripts from now on. */
  #switchedOn(error: unknown, specs: readonly Spec<unknown>[]): boolean {
    if (!namesModuleCommand(error, specs) || !(this.#mayswitch || this.#scripts)) return false;
    if (this.#scripts) return true; // a concurrent call switched already
    this.#scripts = true;
    process.emitWarning(
      `the server has no ${(error as Error).message.split("'")[1] ?? "module command"} (the module is not loaded): this guard runs the commands as Lua scripts from now on`,
      { type: "RedisGuardWarning", code: "REDIS_GUARD_SCRIPTS" },
    );
    return true;
  }

  async #load(script: Script, key: Bytes | undefined): Promise<void> {
    await this.#adapter.send(scriptLoad(script, key));
    this.#loaded.add(script.sha);
  }

  /**
   * A pipeline loads the scripts it needs beforehand, on its node, all of
   * them when this guard has not loaded one yet or the application's own
   * commands share it, none otherwise; calls answered NOSCRIPT there did
   * not run, nor did the others (the server lost every script): they are
   * sent again, once, as a pipeline of their own, in their order.
   *
   * A transaction loads every script it runs inside its MULTI, before the
   * calls: EXEC runs every queued call, so a NOSCRIPT inside it would leave
   * the others applied, where running the transaction again would apply
   * them twice and running the failed calls alone would split it in two.
   * Loaded in the MULTI, no script can be missing at EXEC: the transaction
   * stays all-or-nothing, at the price of the scripts' text on each one.
   */
  async #batchOfScripts(specs: readonly Spec<unknown>[], transaction: boolean): Promise<unknown[]> {
    const scripts = specs.map((spec) => (spec.raw ? undefined : scriptOf(String(spec.args[0]))));
    const needed = [...new Set(scripts.filter((script) => script !== undefined))];
    const key = specs.find((spec) => spec.key !== undefined)?.key;
    const calls = specs.map((spec, i) => (scripts[i] === undefined ? spec : evalsha(spec, scripts[i]!)));
    if (transaction) {
      const replies = await this.#adapter.batch([...needed.map((script) => scriptLoad(script, key)), ...calls], true);
      return replies.slice(needed.length);
    }
    // All or none: loading only the scripts this guard has not loaded
    // would let the others run while a call whose script the server lost
    // answers NOSCRIPT and runs again after them, out of the order queued;
    // so would the application's own commands beside them. A server that
    // lost one script lost them all (a failover, a restart, SCRIPT FLUSH).
    if (needed.some((script) => !this.#loaded.has(script.sha)) || specs.some((spec) => spec.raw)) {
      for (const script of needed) await this.#load(script, key);
    }
    const replies = await this.#adapter.batch(calls, false);
    const missing = replies.flatMap((reply, i) => (isNoScript(reply) ? [i] : []));
    if (missing.length === 0) return replies;
    for (const script of new Set(missing.map((i) => scripts[i]!))) await this.#load(script, key);
    return replaced(replies, missing, await this.#adapter.batch(missing.map((i) => calls[i]), false));
  }
}

/** `replies` with those at `indexes` (calls that did not run) replaced, in order, by `retried`. */
function replaced(replies: unknown[], indexes: readonly number[], retried: readonly unknown[]): unknown[] {
  indexes.forEach((at, n) => (replies[at] = retried[n]));
  return replies;
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
  readonly #sender: Sender;

  constructor(client: GuardClient, options: GuardOptions = {}) {
    this.#sender = new Sender(adapterFor(client), options.backend ?? "auto");
  }

  /** Queues commands; `exec()` sends them at once and resolves their parsed results in order. */
  pipeline(options: PipelineOptions = {}): GuardPipeline<[]> {
    return new GuardPipeline(this.#sender, options.transaction ?? false);
  }

  /**
   * Releases what the guard opened itself: nothing (its calls use the
   * client's connections), so the client stays the application's to quit.
   * Here for the symmetry with the Python package's `close()`.
   */
  async quit(): Promise<void> {}

  /**
   * Holds a slot of the campaign `key` while `work` runs: reserves with a
   * fresh request id, renews every `hold / 3` seconds, releases when
   * `work` settles (also when it throws), and resolves what it resolved.
   * Rejects with `LeaseRefused` (without running `work`) when there is no
   * slot.
   */
  async withLease<T>(key: Bytes, user: Bytes, opts: LeaseOptions, work: (lease: Reservation) => Promise<T>): Promise<T> {
    const hold = Number(opts.hold ?? 30);
    const lease = await this.reserve(key, user, { hold: opts.hold ?? hold, id: randomUUID(), ledger: opts.ledger });
    if (lease.claim < 0) throw new LeaseRefused(key, lease.claim);
    let beating = true;
    const beat = setInterval(() => {
      if (!beating) return;
      this.renew(key, lease.claim, { hold: opts.hold ?? hold, ledger: opts.ledger }).then(
        (until) => {
          // Confirmed (0), or gone (-3: ended in a stall, or released by someone): nothing left to renew.
          if (until === -3) process.emitWarning(`redis-guard: the lease of claim ${lease.claim} was lost; its slot may be another's now`);
          if (until <= 0) beating = false;
        },
        (error: unknown) => process.emitWarning(`redis-guard: renewing the lease of claim ${lease.claim} failed: ${String(error)}`),
      );
    }, Math.min((hold * 1000) / 3, MAX_TIMER_MS));
    try {
      return await work(lease);
    } finally {
      clearInterval(beat);
      // The slot frees itself when the lease ends: a failed release never replaces the work's own outcome.
      await this.release(key, lease.claim, { ledger: opts.ledger }).catch((error: unknown) =>
        process.emitWarning(`redis-guard: releasing the lease of claim ${lease.claim} failed; it ends with its hold: ${String(error)}`),
      );
    }
  }

  /** @internal */
  static _send<T>(guard: Guard, spec: Spec<T>): Promise<T> {
    const sender = guard.#sender;
    // One step between the client's reply and the caller on the common
    // call; a failure takes the longer way (retry, then the package's error).
    return sender.send(spec).then(spec.parse, (error: unknown) =>
      sender.retry(spec, error).then(spec.parse, (last: unknown) => answer(spec, last)),
    );
  }
}

/**
 * A server error of the client library's (ioredis `ReplyError`, node-redis
 * `ErrorReply` and its subclasses), not a lost connection or a closed client.
 */
function isServerError(error: unknown): error is Error {
  return error instanceof Error && ["ReplyError", "ErrorReply", "SimpleError", "BlobError"].includes(error.constructor.name);
}

/** What `spec` gives for `error`: the package's error, or the value the call expects for it. */
function answer<T>(spec: Spec<T>, error: unknown): T {
  if (!isServerError(error)) throw error;
  const mine = typed(error);
  if (spec.onError !== undefined) return spec.onError(mine);
  throw mine;
}

export interface GuardPipeline<R extends unknown[]> extends PipelineMethods<R> {}

/**
 * Queued commands. In a cluster they go to one node (the first key's):
 * give their keys one hash tag. `exec()` rejects with the first command's
 * error (the client library's own) when any command failed.
 */
export class GuardPipeline<R extends unknown[] = []> {
  readonly #sender: Sender;
  readonly #transaction: boolean;
  readonly #queue: Spec<unknown>[] = [];

  /** @internal */
  constructor(sender: Sender, transaction: boolean) {
    this.#sender = sender;
    this.#transaction = transaction;
  }

  /** How many commands are queued. */
  get length(): number {
    return this.#queue.length;
  }

  /**
   * Queues one of the application's own commands (`SET`, `XADD`...), sent
   * as it is on either backend; its reply is its result, unparsed. Its
   * first argument after the name is taken as its key (routing, ioredis's
   * `keyPrefix`). In a transaction it shares the MULTI (in a cluster, the
   * slot of the transaction's first key: give the keys one hash tag).
   */
  call(...args: Bytes[]): GuardPipeline<[...R, unknown]> {
    const keyed = args.length > 1;
    this.#queue.push({ args, key: args[1], keyIndexes: keyed ? [1] : [], readonly: false, parse: (reply) => reply, raw: true });
    return this as unknown as GuardPipeline<[...R, unknown]>;
  }

  async exec(): Promise<R> {
    const specs = this.#queue.splice(0);
    if (specs.length === 0) return [] as unknown as R;
    let replies: unknown[];
    try {
      replies = await this.#sender.batch(specs, this.#transaction);
    } catch (error) {
      throw isServerError(error) ? typed(error) : error;
    }
    // The first error a call does not expect rejects, as the package's.
    return replies.map((reply, i) => (reply instanceof Error ? answer(specs[i], reply) : specs[i].parse(reply))) as R;
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

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The module's commands over an ioredis or node-redis client (standalone or cluster). */
export function guard(client: GuardClient, options: GuardOptions = {}): Guard {
  return new Guard(client, options);
}

export default guard;
