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
var _RateLimiterGuard_instances, _RateLimiterGuard_guard, _RateLimiterGuard_points, _RateLimiterGuard_duration, _RateLimiterGuard_keyPrefix, _RateLimiterGuard_throttle;
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
 * allowed, in ms. `reward` needs CL.REFUND, `block`, `set` and
 * `blockDuration` BLOCK: not in this release, they throw.
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
const unsupported = (what) => new Error(`redis-guard: RateLimiterGuard.${what} needs CL.REFUND / BLOCK, not in this release`);
class RateLimiterGuard extends peer.RateLimiterCompatibleAbstract {
    constructor(options) {
        super();
        _RateLimiterGuard_instances.add(this);
        _RateLimiterGuard_guard.set(this, void 0);
        _RateLimiterGuard_points.set(this, void 0);
        _RateLimiterGuard_duration.set(this, void 0);
        _RateLimiterGuard_keyPrefix.set(this, void 0);
        __classPrivateFieldSet(this, _RateLimiterGuard_guard, options.guard, "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_points, options.points ?? 4, "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_duration, options.duration ?? 1, "f");
        __classPrivateFieldSet(this, _RateLimiterGuard_keyPrefix, options.keyPrefix ?? "rlflx", "f");
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
    get blockDuration() {
        return 0;
    }
    set blockDuration(value) {
        if (value !== 0)
            throw unsupported("blockDuration");
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
    async reward() {
        throw unsupported("reward");
    }
    async block() {
        throw unsupported("block");
    }
    async set() {
        throw unsupported("set");
    }
}
exports.RateLimiterGuard = RateLimiterGuard;
_RateLimiterGuard_guard = new WeakMap(), _RateLimiterGuard_points = new WeakMap(), _RateLimiterGuard_duration = new WeakMap(), _RateLimiterGuard_keyPrefix = new WeakMap(), _RateLimiterGuard_instances = new WeakSet(), _RateLimiterGuard_throttle = async function _RateLimiterGuard_throttle(key, points) {
    const t = await __classPrivateFieldGet(this, _RateLimiterGuard_guard, "f").throttle(this.getKey(key), __classPrivateFieldGet(this, _RateLimiterGuard_points, "f") - 1, __classPrivateFieldGet(this, _RateLimiterGuard_points, "f"), __classPrivateFieldGet(this, _RateLimiterGuard_duration, "f"), points);
    const consumed = t.limit - t.remaining;
    const ms = (t.limited ? t.retryAfter : t.resetAfter) * 1000;
    return { limited: t.limited, res: new peer.RateLimiterRes(t.remaining, ms, consumed, !t.limited && points > 0 && consumed === points) };
};
exports.default = RateLimiterGuard;
