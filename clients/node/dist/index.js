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
var _Sender_instances, _Sender_adapter, _Sender_scripts, _Sender_mayswitch, _Sender_loaded, _Sender_switchedOn, _Sender_load, _Sender_batchOfScripts, _Guard_sender, _GuardPipeline_sender, _GuardPipeline_transaction, _GuardPipeline_queue;
Object.defineProperty(exports, "__esModule", { value: true });
exports.GuardPipeline = exports.Guard = exports.WrongType = exports.NoSuchCampaign = exports.LeaseRefused = exports.GuardError = exports.CampaignExists = void 0;
exports.guard = guard;
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
const node_crypto_1 = require("node:crypto");
const commands_1 = require("./commands");
const errors_1 = require("./errors");
const scripts_1 = require("./scripts");
__exportStar(require("./commands"), exports);
var errors_2 = require("./errors");
Object.defineProperty(exports, "CampaignExists", { enumerable: true, get: function () { return errors_2.CampaignExists; } });
Object.defineProperty(exports, "GuardError", { enumerable: true, get: function () { return errors_2.GuardError; } });
Object.defineProperty(exports, "LeaseRefused", { enumerable: true, get: function () { return errors_2.LeaseRefused; } });
Object.defineProperty(exports, "NoSuchCampaign", { enumerable: true, get: function () { return errors_2.NoSuchCampaign; } });
Object.defineProperty(exports, "WrongType", { enumerable: true, get: function () { return errors_2.WrongType; } });
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
        command.keys = spec.key === undefined ? [] : [prefixed(spec.key)];
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
 * isReadonly, args)` on a cluster, `multi(firstKey)` for its transactions.
 * Cluster multis take `addCommand(firstKey, args)` in 4.x and
 * `addCommand(firstKey, isReadonly, args)` in 5.x and 6.x.
 */
function nodeRedisAdapter(client) {
    const cluster = typeof client.getSlotMaster === "function";
    // node-redis 4 in legacyMode keeps its promise API under `.v4` (which
    // throws when read on a client that is not in legacy mode).
    const legacy = !cluster && client.options?.legacyMode === true;
    const modern = (target) => (legacy ? target.v4 : target);
    const api = modern(client);
    const send = (spec) => cluster ? api.sendCommand(spec.key, spec.readonly, [...spec.args]) : api.sendCommand([...spec.args]);
    return {
        send,
        async batch(specs, transaction) {
            // A pipeline: node-redis writes the commands of one tick at once.
            // (Its execAsPipeline() rejects with the first error in 6.x, and the
            // other replies are lost: which calls ran must be known.)
            if (!transaction)
                return Promise.all(specs.map((spec) => send(spec).catch((error) => error)));
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
                return await queue.exec();
            }
            catch (error) {
                // node-redis 5 and 6: MultiErrorReply carries every reply, errors included.
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
/**
 * How a guard sends the described calls: as the module's commands or as
 * their scripts. A script is loaded (SCRIPT LOAD, on the node of the key
 * that runs it) the first time this guard runs it, and again when the
 * server answers NOSCRIPT (a failover, a restart, SCRIPT FLUSH), after
 * which the call runs once more: a call answered NOSCRIPT or "unknown
 * command" did not run, so sending it again is safe.
 */
class Sender {
    constructor(adapter, backend) {
        _Sender_instances.add(this);
        _Sender_adapter.set(this, void 0);
        _Sender_scripts.set(this, void 0);
        /** `"auto"`, not yet switched. */
        _Sender_mayswitch.set(this, void 0);
        /** The scripts this guard has loaded (on some node: another may still answer NOSCRIPT). */
        _Sender_loaded.set(this, new Set());
        if (!["auto", "module", "scripts"].includes(backend)) {
            throw new TypeError(`redis-guard: backend is "auto", "module" or "scripts", not ${JSON.stringify(backend)}`);
        }
        __classPrivateFieldSet(this, _Sender_adapter, adapter, "f");
        __classPrivateFieldSet(this, _Sender_scripts, backend === "scripts", "f");
        __classPrivateFieldSet(this, _Sender_mayswitch, backend === "auto", "f");
    }
    /**
     * The first attempt at `spec`: the module's command, or its script's
     * EVALSHA (the script loaded first if this guard has not loaded it yet).
     * The common call returns the client's own promise, neither awaited nor
     * wrapped: each wrapper (an async function, a `.catch`) costs every call
     * a promise and a microtask turn. When it fails, `retry` decides what the
     * failure means. Never throws: a failure is the promise's.
     */
    send(spec) {
        try {
            // spec.raw: a plain command of the server's (reset's DEL), as it is on either backend.
            if (spec.raw || !__classPrivateFieldGet(this, _Sender_scripts, "f"))
                return __classPrivateFieldGet(this, _Sender_adapter, "f").send(spec);
            const script = (0, scripts_1.scriptOf)(String(spec.args[0]));
            if (!__classPrivateFieldGet(this, _Sender_loaded, "f").has(script.sha))
                return __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_load).call(this, script, spec.key).then(() => __classPrivateFieldGet(this, _Sender_adapter, "f").send((0, scripts_1.evalsha)(spec, script)));
            return __classPrivateFieldGet(this, _Sender_adapter, "f").send((0, scripts_1.evalsha)(spec, script));
        }
        catch (error) {
            return Promise.reject(error);
        }
    }
    /**
     * After `send(spec)` failed with `error`: the call again where it did not
     * run, else `error`. The server has no such command (`"auto"`): scripts
     * from now on, the call as a script. NOSCRIPT: the script loaded again
     * and the call sent once more.
     */
    async retry(spec, error) {
        if (__classPrivateFieldGet(this, _Sender_instances, "m", _Sender_switchedOn).call(this, error, [spec])) {
            try {
                return await this.send(spec);
            }
            catch (again) {
                error = again;
            }
        }
        if (!(0, scripts_1.isNoScript)(error))
            throw error;
        const script = (0, scripts_1.scriptOf)(String(spec.args[0]));
        await __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_load).call(this, script, spec.key);
        return __classPrivateFieldGet(this, _Sender_adapter, "f").send((0, scripts_1.evalsha)(spec, script));
    }
    /** The raw replies in order, a command's error as its element. */
    async batch(specs, transaction) {
        if (__classPrivateFieldGet(this, _Sender_scripts, "f"))
            return __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_batchOfScripts).call(this, specs, transaction);
        let replies;
        try {
            replies = await __classPrivateFieldGet(this, _Sender_adapter, "f").batch(specs, transaction);
        }
        catch (error) {
            // An unknown command aborts a MULTI (EXECABORT, ioredis; node-redis
            // rejects with the command's error): nothing ran.
            const cause = [error, ...(error?.previousErrors ?? [])].find((each) => (0, scripts_1.namesModuleCommand)(each, specs));
            if (!transaction || !__classPrivateFieldGet(this, _Sender_instances, "m", _Sender_switchedOn).call(this, cause, specs))
                throw error;
            return __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_batchOfScripts).call(this, specs, true);
        }
        const unknown = replies.flatMap((reply, i) => ((0, scripts_1.namesModuleCommand)(reply, [specs[i]]) ? [i] : []));
        if (unknown.length === 0 || !__classPrivateFieldGet(this, _Sender_instances, "m", _Sender_switchedOn).call(this, replies[unknown[0]], specs))
            return replies;
        return replaced(replies, unknown, await __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_batchOfScripts).call(this, unknown.map((i) => specs[i]), false));
    }
}
_Sender_adapter = new WeakMap(), _Sender_scripts = new WeakMap(), _Sender_mayswitch = new WeakMap(), _Sender_loaded = new WeakMap(), _Sender_instances = new WeakSet(), _Sender_switchedOn = function _Sender_switchedOn(error, specs) {
    if (!(0, scripts_1.namesModuleCommand)(error, specs) || !(__classPrivateFieldGet(this, _Sender_mayswitch, "f") || __classPrivateFieldGet(this, _Sender_scripts, "f")))
        return false;
    if (__classPrivateFieldGet(this, _Sender_scripts, "f"))
        return true; // a concurrent call switched already
    __classPrivateFieldSet(this, _Sender_scripts, true, "f");
    process.emitWarning(`the server has no ${error.message.split("'")[1] ?? "module command"} (the module is not loaded): this guard runs the commands as Lua scripts from now on`, { type: "RedisGuardWarning", code: "REDIS_GUARD_SCRIPTS" });
    return true;
}, _Sender_load = async function _Sender_load(script, key) {
    await __classPrivateFieldGet(this, _Sender_adapter, "f").send((0, scripts_1.scriptLoad)(script, key));
    __classPrivateFieldGet(this, _Sender_loaded, "f").add(script.sha);
}, _Sender_batchOfScripts = 
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
async function _Sender_batchOfScripts(specs, transaction) {
    const scripts = specs.map((spec) => (spec.raw ? undefined : (0, scripts_1.scriptOf)(String(spec.args[0]))));
    const needed = [...new Set(scripts.filter((script) => script !== undefined))];
    const key = specs.find((spec) => spec.key !== undefined)?.key;
    const calls = specs.map((spec, i) => (scripts[i] === undefined ? spec : (0, scripts_1.evalsha)(spec, scripts[i])));
    if (transaction) {
        const replies = await __classPrivateFieldGet(this, _Sender_adapter, "f").batch([...needed.map((script) => (0, scripts_1.scriptLoad)(script, key)), ...calls], true);
        return replies.slice(needed.length);
    }
    // All or none: loading only the scripts this guard has not loaded
    // would let the others run while a call whose script the server lost
    // answers NOSCRIPT and runs again after them, out of the order queued;
    // so would the application's own commands beside them. A server that
    // lost one script lost them all (a failover, a restart, SCRIPT FLUSH).
    if (needed.some((script) => !__classPrivateFieldGet(this, _Sender_loaded, "f").has(script.sha)) || specs.some((spec) => spec.raw)) {
        for (const script of needed)
            await __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_load).call(this, script, key);
    }
    const replies = await __classPrivateFieldGet(this, _Sender_adapter, "f").batch(calls, false);
    const missing = replies.flatMap((reply, i) => ((0, scripts_1.isNoScript)(reply) ? [i] : []));
    if (missing.length === 0)
        return replies;
    for (const script of new Set(missing.map((i) => scripts[i])))
        await __classPrivateFieldGet(this, _Sender_instances, "m", _Sender_load).call(this, script, key);
    return replaced(replies, missing, await __classPrivateFieldGet(this, _Sender_adapter, "f").batch(missing.map((i) => calls[i]), false));
};
/** `replies` with those at `indexes` (calls that did not run) replaced, in order, by `retried`. */
function replaced(replies, indexes, retried) {
    indexes.forEach((at, n) => (replies[at] = retried[n]));
    return replies;
}
/** The commands over one client. Make it with `guard(client)`. */
class Guard {
    constructor(client, options = {}) {
        _Guard_sender.set(this, void 0);
        __classPrivateFieldSet(this, _Guard_sender, new Sender(adapterFor(client), options.backend ?? "auto"), "f");
    }
    /** Queues commands; `exec()` sends them at once and resolves their parsed results in order. */
    pipeline(options = {}) {
        return new GuardPipeline(__classPrivateFieldGet(this, _Guard_sender, "f"), options.transaction ?? false);
    }
    /**
     * Releases what the guard opened itself: nothing (its calls use the
     * client's connections), so the client stays the application's to quit.
     * Here for the symmetry with the Python package's `close()`.
     */
    async quit() { }
    /**
     * Holds a slot of the campaign `key` while `work` runs: reserves with a
     * fresh request id, renews every `hold / 3` seconds, releases when
     * `work` settles (also when it throws), and resolves what it resolved.
     * Rejects with `LeaseRefused` (without running `work`) when there is no
     * slot.
     */
    async withLease(key, user, opts, work) {
        const hold = Number(opts.hold ?? 30);
        const lease = await this.reserve(key, user, { hold: opts.hold ?? hold, id: (0, node_crypto_1.randomUUID)(), ledger: opts.ledger });
        if (lease.claim < 0)
            throw new errors_1.LeaseRefused(key, lease.claim);
        let beating = true;
        const beat = setInterval(() => {
            if (!beating)
                return;
            this.renew(key, lease.claim, { hold: opts.hold ?? hold, ledger: opts.ledger }).then((until) => {
                // Confirmed (0), or gone (-3: ended in a stall, or released by someone): nothing left to renew.
                if (until === -3)
                    process.emitWarning(`redis-guard: the lease of claim ${lease.claim} was lost; its slot may be another's now`);
                if (until <= 0)
                    beating = false;
            }, (error) => process.emitWarning(`redis-guard: renewing the lease of claim ${lease.claim} failed: ${String(error)}`));
        }, Math.min((hold * 1000) / 3, MAX_TIMER_MS));
        try {
            return await work(lease);
        }
        finally {
            clearInterval(beat);
            // The slot frees itself when the lease ends: a failed release never replaces the work's own outcome.
            await this.release(key, lease.claim, { ledger: opts.ledger }).catch((error) => process.emitWarning(`redis-guard: releasing the lease of claim ${lease.claim} failed; it ends with its hold: ${String(error)}`));
        }
    }
    /** @internal */
    static _send(guard, spec) {
        const sender = __classPrivateFieldGet(guard, _Guard_sender, "f");
        // One step between the client's reply and the caller on the common
        // call; a failure takes the longer way (retry, then the package's error).
        return sender.send(spec).then(spec.parse, (error) => sender.retry(spec, error).then(spec.parse, (last) => answer(spec, last)));
    }
}
exports.Guard = Guard;
_Guard_sender = new WeakMap();
/**
 * A server error of the client library's (ioredis `ReplyError`, node-redis
 * `ErrorReply` and its subclasses), not a lost connection or a closed client.
 */
function isServerError(error) {
    return error instanceof Error && ["ReplyError", "ErrorReply", "SimpleError", "BlobError"].includes(error.constructor.name);
}
/** What `spec` gives for `error`: the package's error, or the value the call expects for it. */
function answer(spec, error) {
    if (!isServerError(error))
        throw error;
    const mine = (0, errors_1.typed)(error);
    if (spec.onError !== undefined)
        return spec.onError(mine);
    throw mine;
}
/**
 * Queued commands. In a cluster they go to one node (the first key's):
 * give their keys one hash tag. `exec()` rejects with the first command's
 * error (the client library's own) when any command failed.
 */
class GuardPipeline {
    /** @internal */
    constructor(sender, transaction) {
        _GuardPipeline_sender.set(this, void 0);
        _GuardPipeline_transaction.set(this, void 0);
        _GuardPipeline_queue.set(this, []);
        __classPrivateFieldSet(this, _GuardPipeline_sender, sender, "f");
        __classPrivateFieldSet(this, _GuardPipeline_transaction, transaction, "f");
    }
    /** How many commands are queued. */
    get length() {
        return __classPrivateFieldGet(this, _GuardPipeline_queue, "f").length;
    }
    /**
     * Queues one of the application's own commands (`SET`, `XADD`...), sent
     * as it is on either backend; its reply is its result, unparsed. Its
     * first argument after the name is taken as its key (routing, ioredis's
     * `keyPrefix`). In a transaction it shares the MULTI (in a cluster, the
     * slot of the transaction's first key: give the keys one hash tag).
     */
    call(...args) {
        const keyed = args.length > 1;
        __classPrivateFieldGet(this, _GuardPipeline_queue, "f").push({ args, key: args[1], keyIndexes: keyed ? [1] : [], readonly: false, parse: (reply) => reply, raw: true });
        return this;
    }
    async exec() {
        const specs = __classPrivateFieldGet(this, _GuardPipeline_queue, "f").splice(0);
        if (specs.length === 0)
            return [];
        let replies;
        try {
            replies = await __classPrivateFieldGet(this, _GuardPipeline_sender, "f").batch(specs, __classPrivateFieldGet(this, _GuardPipeline_transaction, "f"));
        }
        catch (error) {
            throw isServerError(error) ? (0, errors_1.typed)(error) : error;
        }
        // The first error a call does not expect rejects, as the package's.
        return replies.map((reply, i) => (reply instanceof Error ? answer(specs[i], reply) : specs[i].parse(reply)));
    }
    /** @internal */
    static _queue(pipeline, spec) {
        __classPrivateFieldGet(pipeline, _GuardPipeline_queue, "f").push(spec);
    }
}
exports.GuardPipeline = GuardPipeline;
_GuardPipeline_sender = new WeakMap(), _GuardPipeline_transaction = new WeakMap(), _GuardPipeline_queue = new WeakMap();
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
/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** The module's commands over an ioredis or node-redis client (standalone or cluster). */
function guard(client, options = {}) {
    return new Guard(client, options);
}
exports.default = guard;
