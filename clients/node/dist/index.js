"use strict";
var __createBinding = (this && this.__createBinding) || (Object.create ? (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    var desc = Object.getOwnPropertyDescriptor(m, k);
    if (!desc || ("get" in desc ? !m.__esModule : desc.writable || desc.configurable)) {
      desc = { enumerable: true, get: function() { return m[k]; } };
    }
    Object.defineProperty(o, k2, desc);
}) : (function(o, m, k, k2) {
    if (k2 === undefined) k2 = k;
    o[k2] = m[k];
}));
var __exportStar = (this && this.__exportStar) || function(m, exports) {
    for (var p in m) if (p !== "default" && !Object.prototype.hasOwnProperty.call(exports, p)) __createBinding(exports, m, p);
};
var __classPrivateFieldSet = (this && this.__classPrivateFieldSet) || function (receiver, state, value, kind, f) {
    if (kind === "m") throw new TypeError("Private method is not writable");
    if (kind === "a" && !f) throw new TypeError("Private accessor was defined without a setter");
    if (typeof state === "function" ? receiver !== state || !f : !state.has(receiver)) throw new TypeError("Cannot write private member to an object whose class did not declare it");
    return (kind === "a" ? f.call(receiver, value) : f ? f.value = value : state.set(receiver, value)), value;
};
var __classPrivateFieldGet = (this && this.__classPrivateFieldGet) || function (receiver, state, kind, f) {
    if (kind === "a" && !f) throw new TypeError("Private accessor was defined without a getter");
    if (typeof state === "function" ? receiver !== state || !f : !state.has(receiver)) throw new TypeError("Cannot read private member from an object whose class did not declare it");
    return kind === "m" ? f : kind === "a" ? f.call(receiver) : f ? f.value : state.get(receiver);
};
var _Guard_adapter, _GuardPipeline_adapter, _GuardPipeline_transaction, _GuardPipeline_queue;
Object.defineProperty(exports, "__esModule", { value: true });
exports.GuardPipeline = exports.Guard = void 0;
exports.guard = guard;
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
const commands_1 = require("./commands");
__exportStar(require("./commands"), exports);
/**
 * ioredis's `Command` class, without importing ioredis (the package has no
 * dependency; a linked install could not resolve it anyway): `Redis.Command`
 * for a `Redis`; for a `Cluster`, the class of a command it builds, caught
 * by a throwaway view of the client that never sends it.
 */
function ioredisCommandClass(client) {
    const own = client.constructor?.Command;
    if (typeof own === "function")
        return own;
    let found;
    const probe = Object.create(client);
    probe.options = {}; // no auto-pipelining: the probe must reach sendCommand
    probe.sendCommand = (command) => {
        found = command.constructor;
        return Promise.resolve();
    };
    probe.call("PING");
    if (typeof found !== "function")
        throw new TypeError("redis-guard: cannot find ioredis's Command class");
    return found;
}
/**
 * ioredis does not know the module's commands, so it would find no key and
 * send them to a random node: each command is built here with its key set,
 * so `getSlot()` gives the owner's slot, for plain calls and pipelines.
 */
function ioredisAdapter(client) {
    const Command = ioredisCommandClass(client);
    // ioredis's `keyPrefix` option, applied to every key as ioredis applies
    // it to the keys of the commands it knows.
    const prefix = client.options?.keyPrefix || undefined;
    const prefixed = (key) => prefix === undefined
        ? key
        : Buffer.isBuffer(key) || Buffer.isBuffer(prefix)
            ? Buffer.concat([Buffer.from(prefix), Buffer.from(key)])
            : prefix + key;
    const make = (spec) => {
        const args = spec.args.slice(1);
        for (const i of spec.keyIndexes)
            args[i - 1] = prefixed(args[i - 1]);
        const command = new Command(spec.args[0], args, { replyEncoding: "utf8", readOnly: spec.readonly });
        command.keys = spec.key === undefined ? [] : [args[spec.keyIndexes[0] - 1]];
        return command;
    };
    return {
        send: (spec) => client.sendCommand(make(spec)),
        async batch(specs, transaction) {
            const pipeline = transaction ? client.multi() : client.pipeline();
            for (const spec of specs)
                pipeline.sendCommand(make(spec));
            const replies = await pipeline.exec();
            if (replies === null)
                throw new Error("redis-guard: the transaction was aborted");
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
function nodeRedisAdapter(client) {
    const cluster = typeof client.getSlotMaster === "function";
    // node-redis 4 in legacyMode keeps its promise API under `.v4` (which
    // throws when read on a client that is not in legacy mode).
    const legacy = !cluster && client.options?.legacyMode === true;
    const modern = (target) => (legacy ? target.v4 : target);
    const api = modern(client);
    return {
        send: (spec) => (cluster ? api.sendCommand(spec.key, spec.readonly, [...spec.args]) : api.sendCommand([...spec.args])),
        async batch(specs, transaction) {
            const firstKey = specs.find((spec) => spec.key !== undefined)?.key;
            const multi = cluster ? client.multi(firstKey) : client.multi();
            const queue = modern(multi);
            for (const spec of specs) {
                if (!cluster)
                    queue.addCommand([...spec.args]);
                else if (queue.addCommand.length >= 4)
                    queue.addCommand(spec.key, spec.readonly, [...spec.args]);
                else
                    queue.addCommand(spec.key, [...spec.args]);
            }
            try {
                // exec(true) is execAsPipeline() in 4.x and 5.x, legacy mode's too.
                return await queue.exec(!transaction);
            }
            catch (error) {
                // node-redis 5: MultiErrorReply carries every reply, errors included.
                if (Array.isArray(error?.replies))
                    return error.replies;
                throw error;
            }
        },
    };
}
function adapterFor(client) {
    const c = client;
    if (c === null || typeof c !== "object" || typeof c.sendCommand !== "function") {
        throw new TypeError("redis-guard: guard() takes an ioredis Redis or Cluster, or a node-redis client or cluster");
    }
    if (typeof c.isCluster === "boolean" && typeof c.pipeline === "function")
        return ioredisAdapter(c);
    return nodeRedisAdapter(c);
}
/** The commands over one client. Make it with `guard(client)`. */
class Guard {
    constructor(client) {
        _Guard_adapter.set(this, void 0);
        __classPrivateFieldSet(this, _Guard_adapter, adapterFor(client), "f");
    }
    /** Queues commands; `exec()` sends them at once and resolves their parsed results in order. */
    pipeline(options = {}) {
        return new GuardPipeline(__classPrivateFieldGet(this, _Guard_adapter, "f"), options.transaction ?? false);
    }
    /** @internal */
    static _send(guard, spec) {
        return __classPrivateFieldGet(guard, _Guard_adapter, "f").send(spec).then(spec.parse);
    }
}
exports.Guard = Guard;
_Guard_adapter = new WeakMap();
/**
 * Queued commands. In a cluster they go to one node (the first key's):
 * give their keys one hash tag. `exec()` rejects with the first command's
 * error (the client library's own) when any command failed.
 */
class GuardPipeline {
    /** @internal */
    constructor(adapter, transaction) {
        _GuardPipeline_adapter.set(this, void 0);
        _GuardPipeline_transaction.set(this, void 0);
        _GuardPipeline_queue.set(this, []);
        __classPrivateFieldSet(this, _GuardPipeline_adapter, adapter, "f");
        __classPrivateFieldSet(this, _GuardPipeline_transaction, transaction, "f");
    }
    /** How many commands are queued. */
    get length() {
        return __classPrivateFieldGet(this, _GuardPipeline_queue, "f").length;
    }
    async exec() {
        const specs = __classPrivateFieldGet(this, _GuardPipeline_queue, "f").splice(0);
        if (specs.length === 0)
            return [];
        const replies = await __classPrivateFieldGet(this, _GuardPipeline_adapter, "f").batch(specs, __classPrivateFieldGet(this, _GuardPipeline_transaction, "f"));
        const failed = replies.find((reply) => reply instanceof Error);
        if (failed !== undefined)
            throw failed;
        return replies.map((reply, i) => specs[i].parse(reply));
    }
    /** @internal */
    static _queue(pipeline, spec) {
        __classPrivateFieldGet(pipeline, _GuardPipeline_queue, "f").push(spec);
    }
}
exports.GuardPipeline = GuardPipeline;
_GuardPipeline_adapter = new WeakMap(), _GuardPipeline_transaction = new WeakMap(), _GuardPipeline_queue = new WeakMap();
for (const name of Object.keys(commands_1.commands)) {
    const build = commands_1.commands[name];
    Object.defineProperty(Guard.prototype, name, {
        value: function (...args) {
            return Guard._send(this, build(...args));
        },
        writable: true,
        configurable: true,
    });
    Object.defineProperty(GuardPipeline.prototype, name, {
        value: function (...args) {
            GuardPipeline._queue(this, build(...args));
            return this;
        },
        writable: true,
        configurable: true,
    });
}
/** The module's commands over an ioredis or node-redis client (standalone or cluster). */
function guard(client) {
    return new Guard(client);
}
exports.default = guard;
