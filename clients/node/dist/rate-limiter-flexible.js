"use strict";
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
var _RateLimiterGuard_instances, _RateLimiterGuard_guard, _RateLimiterGuard_points, _RateLimiterGuard_duration, _RateLimiterGuard_keyPrefix, _RateLimiterGuard_blockDuration, _RateLimiterGuard_throttle, _RateLimiterGuard_result;
Object.defineProperty(exports, "__esModule", { value: true });
exports.RateLimiterGuard = void 0;
/**
 * `redis-guard/rate-limiter-flexible`: `RateLimiterGuard`, a
 * rate-limiter-flexible (5 and newer) limiter built on its
 * `RateLimiterCompatibleAbstract`, so its wrappers (`RateLimiterUnion`,
 * `RLWrapperBlackAndWhite`...) and middlewares take it.
 *
 * ```ts
 * const limiter = new RateLimiterGuard({ guard: guard(redis), points: 10, duration: 60 });
 * await limiter.consume(ip); // rejects with a RateLimiterRes when limited
 * ```
 *
 * `points` per `duration` seconds is a CL.THROTTLE GCRA of `count =
 * points`, `maxBurst = points - 1`, `period = duration` on key
 * `${keyPrefix}:${key}`: `consume(key, n)` and `penalty(key, n)` are
 * CL.THROTTLE with quantity n (a GCRA refuses a quantity whole, so a
 * penalty beyond what is left consumes nothing and rejects), `get` is
 * quantity 0 (null for a full limiter), `delete` deletes the key.
 * `msBeforeNext` is `retryAfter` when refused and `resetAfter` when
 * allowed, in ms. `reward(key, n)` is CL.REFUND with quantity n (never
 * above a full limiter). `blockDuration` (seconds) sends `BLOCK` with
 * every consume and penalty: a refused one blocks the key, so that its
 * next request is allowed `blockDuration` seconds later and the points
 * refill from there. `block(key, s)` blocks the key now, in one MULTI:
 * CL.THROTTLE of all `points` with `BLOCK s` (taken when there are that
 * many left, else refused, which blocks), then of 1 point with `BLOCK s`
 * (refused now either way, so blocked, and its `retryAfter` is the next
 * point's, not a whole burst's). `set` has no GCRA
 * equivalent (a cell holds one arrival time, not a count and a window):
 * it throws.
 */
const node_module_1 = require("node:module");
const node_path_1 = require("node:path");
/**
 * The peer, loaded when this subpath is imported (not by `redis-guard`).
 * A linked install (`npm install <checkout>/clients/node` makes a symlink)
 * cannot find it from this file's real folder: then from the
 * application's (its main module's, else the working directory).
 */
function loadPeer() {
    try {
        return require("rate-limiter-flexible");
    }
    catch (error) {
        if (error.code !== "MODULE_NOT_FOUND")
            throw error;
        return (0, node_module_1.createRequire)(require.main?.filename ?? (0, node_path_1.join)(process.cwd(), "index.js"))("rate-limiter-flexible");
    }
}
const peer = loadPeer();
const wholeSeconds = (what, value) => {
    if (!(Number.isInteger(value) && value >= 0))
        throw new TypeError(`redis-guard: ${what}: whole seconds, 0 or more`);
    return value;
};
class RateLimiterGuard extends peer.RateLimiterCompatibleAbstract {
    constructor(options) {
        super();
        _RateLimiterGuard_instances.add(this);
        _RateLimiterGuard_guard.set(this, void 0);
        _RateLimiterGuard_points.set(this, void 0);
        _RateLimiterGuard_duration.set(this, void 0);
        _RateLimiterGuard_keyPrefix.set(this, void 0);
        _RateLimiterGuard_blockDuration.set(this, void 0);
        __classPrivateFieldSet(this, _RateLimiterGuard_guard, options.guard, "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_points, options.points ?? 4, "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_duration, options.duration ?? 1, "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_keyPrefix, options.keyPrefix ?? "rlflx", "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_blockDuration, wholeSeconds("blockDuration", options.blockDuration ?? 0), "f");
        if (!(__classPrivateFieldGet(this, _RateLimiterGuard_points, "f") >= 1 && __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f") >= 1))
            throw new TypeError("redis-guard: points and duration: at least 1");
    }
    get keyPrefix() {
        return __classPrivateFieldGet(this, _RateLimiterGuard_keyPrefix, "f");
    }
    get points() {
        return __classPrivateFieldGet(this, _RateLimiterGuard_points, "f");
    }
    get duration() {
        return __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f");
    }
    /** Seconds a refused consume or penalty blocks its key (0: none). */
    get blockDuration() {
        return __classPrivateFieldGet(this, _RateLimiterGuard_blockDuration, "f");
    }
    set blockDuration(value) {
        __classPrivateFieldSet(this, _RateLimiterGuard_blockDuration, wholeSeconds("blockDuration", value), "f");
    }
    get execEvenly() {
        return false;
    }
    set execEvenly(value) {
        if (value)
            throw new Error("redis-guard: RateLimiterGuard has no execEvenly (a GCRA spaces requests already)");
    }
    /** The Redis key of `key`. */
    getKey(key) {
        return `${__classPrivateFieldGet(this, _RateLimiterGuard_keyPrefix, "f")}:${key}`;
    }
    /** Resolves the state after consuming `points`; rejects with the refused `RateLimiterRes` (nothing consumed). */
    async consume(key, points = 1) {
        const { limited, res } = await __classPrivateFieldGet(this, _RateLimiterGuard_instances, "m", _RateLimiterGuard_throttle).call(this, key, points);
        if (limited)
            throw res;
        return res;
    }
    /** As `consume`, but resolves either way (a GCRA takes all `points` or none). */
    async penalty(key, points = 1) {
        return (await __classPrivateFieldGet(this, _RateLimiterGuard_instances, "m", _RateLimiterGuard_throttle).call(this, key, points)).res;
    }
    /** The state without consuming anything; null for a limiter that is full (no record). */
    async get(key) {
        const { res } = await __classPrivateFieldGet(this, _RateLimiterGuard_instances, "m", _RateLimiterGuard_throttle).call(this, key, 0);
        return res.consumedPoints === 0 ? null : res;
    }
    /** Deletes the key; whether there was one. */
    async delete(key) {
        const [deleted] = await __classPrivateFieldGet(this, _RateLimiterGuard_guard, "f").pipeline().call("DEL", this.getKey(key)).exec();
        return Number(deleted) > 0;
    }
    /** Gives `points` back (CL.REFUND; never above a full limiter); the state after. */
    async reward(key, points = 1) {
        const t = await __classPrivateFieldGet(this, _RateLimiterGuard_guard, "f").refund(this.getKey(key), __classPrivateFieldGet(this, _RateLimiterGuard_points, "f") - 1, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f"), __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f"), points);
        return __classPrivateFieldGet(this, _RateLimiterGuard_instances, "m", _RateLimiterGuard_result).call(this, t, 0).res;
    }
    /**
     * Blocks `key` for `secDuration` seconds from now: its next request is
     * allowed then, and the points refill from there (a block already
     * longer is kept). Resolves with the blocked state.
     */
    async block(key, secDuration) {
        const seconds = wholeSeconds("block", secDuration);
        if (seconds < 1)
            throw new TypeError("redis-guard: block: at least 1 second");
        const k = this.getKey(key);
        const [, blocked] = await __classPrivateFieldGet(this, _RateLimiterGuard_guard, "f")
            .pipeline({ transaction: true })
            .throttle(k, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f") - 1, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f"), __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f"), { quantity: __classPrivateFieldGet(this, _RateLimiterGuard_points, "f"), block: seconds })
            .throttle(k, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f") - 1, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f"), __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f"), { quantity: 1, block: seconds })
            .exec();
        return __classPrivateFieldGet(this, _RateLimiterGuard_instances, "m", _RateLimiterGuard_result).call(this, blocked, 0).res;
    }
    async set() {
        throw new Error("redis-guard: RateLimiterGuard.set has no GCRA equivalent (use delete, consume, reward or block)");
    }
}
exports.RateLimiterGuard = RateLimiterGuard;
_RateLimiterGuard_guard = new WeakMap(), _RateLimiterGuard_points = new WeakMap(), _RateLimiterGuard_duration = new WeakMap(), _RateLimiterGuard_keyPrefix = new WeakMap(), _RateLimiterGuard_blockDuration = new WeakMap(), _RateLimiterGuard_instances = new WeakSet(), _RateLimiterGuard_throttle = async function _RateLimiterGuard_throttle(key, points) {
    const block = points > 0 && __classPrivateFieldGet(this, _RateLimiterGuard_blockDuration, "f") > 0 ? __classPrivateFieldGet(this, _RateLimiterGuard_blockDuration, "f") : undefined;
    const t = await __classPrivateFieldGet(this, _RateLimiterGuard_guard, "f").throttle(this.getKey(key), __classPrivateFieldGet(this, _RateLimiterGuard_points, "f") - 1, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f"), __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f"), { quantity: points, block });
    return __classPrivateFieldGet(this, _RateLimiterGuard_instances, "m", _RateLimiterGuard_result).call(this, t, points);
}, _RateLimiterGuard_result = function _RateLimiterGuard_result(t, points) {
    const consumed = t.limit - t.remaining;
    const ms = (t.limited ? t.retryAfter : t.resetAfter) * 1000;
    return { limited: t.limited, res: new peer.RateLimiterRes(t.remaining, ms, consumed, !t.limited && points > 0 && consumed === points) };
};
exports.default = RateLimiterGuard;
