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
var _Limiter_instances, _Limiter_options, _Limiter_policies, _Limiter_blocked, _Limiter_judge, _Limiter_refused, _Limiter_headers, _Limiter_remember;
Object.defineProperty(exports, "__esModule", { value: true });
exports.Limiter = exports.statusText = exports.TimeoutError = void 0;
exports.partitionKey = partitionKey;
/**
 * What `redis-guard/express` and `redis-guard/fastify` share: the judge of
 * one request. One call per request: `throttle` (CL.THROTTLE) for one
 * limit, `throttleAll` (CL.THROTTLEALL, all or nothing) for several; the
 * key of limit `i` is `${prefix}:${i}:${key}`. The headers are the IETF
 * RateLimit headers in the form express-rate-limit calls draft-8, one list
 * item per limit, named `"{q}-in-{w}s"`:
 *
 *     RateLimit-Policy: "3-in-60s"; q=3; w=60; pk=:<partition key>:
 *     RateLimit: "3-in-60s"; r=2; t=20
 *
 * `q` is the burst (`maxBurst + 1`), `w` the seconds a full burst takes to
 * come back (`period * q / count`, rounded up), `r` the requests left, `t`
 * the seconds until the limit is full again (`resetAfter`), `pk`
 * express-rate-limit's partition key. A refused request gets 429 and
 * `Retry-After`. Redis down or slower than `timeout` ms: `onError`
 * `"allow"` (default) lets the request through without the headers,
 * `"deny"` answers 503, `"raise"` hands the error on (a `TimeoutError`
 * for a slow server). The same as the Python package's
 * `redis_guard.asgi`.
 */
const node_crypto_1 = require("node:crypto");
/** Redis did not answer within `timeout`. */
class TimeoutError extends Error {
    constructor(ms) {
        super(`redis-guard: no answer from Redis within ${ms} ms`);
        this.name = "TimeoutError";
    }
}
exports.TimeoutError = TimeoutError;
/** The body of a response the limiter answers itself. */
const statusText = (status) => (status === 429 ? "Too Many Requests" : "Service Unavailable");
exports.statusText = statusText;
/** express-rate-limit's `pk`: base64 of the first 12 hex digits of the key's SHA-256. */
function partitionKey(key) {
    return Buffer.from((0, node_crypto_1.createHash)("sha256").update(key).digest("hex").slice(0, 12)).toString("base64");
}
/** `promise`, or a TimeoutError after `ms` (the late outcome is dropped). */
function within(promise, ms) {
    promise.catch(() => { });
    let timer;
    const late = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new TimeoutError(ms)), ms);
    });
    return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
class Limiter {
    constructor(options, clientAddress) {
        _Limiter_instances.add(this);
        _Limiter_options.set(this, void 0);
        _Limiter_policies.set(this, void 0);
        _Limiter_blocked.set(this, new Map());
        const { guard, limits, key = clientAddress, prefix = "rl", timeout = 1000, onError = "allow", localBlock = false } = options;
        if (!limits || limits.length === 0)
            throw new TypeError("redis-guard: limits: at least one { maxBurst, count, period }");
        if (!["allow", "deny", "raise"].includes(onError))
            throw new TypeError(`redis-guard: onError is "allow", "deny" or "raise", not ${JSON.stringify(onError)}`);
        if (!(timeout > 0))
            throw new TypeError("redis-guard: timeout: a positive number of milliseconds");
        __classPrivateFieldSet(this, _Limiter_options, { guard, limits, key, prefix, timeout, onError, localBlock }, "f");
        __classPrivateFieldSet(this, _Limiter_policies, limits.map(({ maxBurst, count, period }) => {
            const quota = maxBurst + 1;
            const window = Math.ceil((period * quota) / count);
            return { name: `${quota}-in-${window}s`, quota, window };
        }), "f");
    }
    /** The Redis key of each limit for `key`. */
    keys(key) {
        return __classPrivateFieldGet(this, _Limiter_options, "f").limits.map((_, i) => `${__classPrivateFieldGet(this, _Limiter_options, "f").prefix}:${i}:${key}`);
    }
    /** Judges one request; rejects only with `onError: "raise"`. */
    async check(req) {
        const { key: keyOf, timeout, onError, localBlock } = __classPrivateFieldGet(this, _Limiter_options, "f");
        const key = keyOf(req);
        const now = performance.now();
        const blocked = __classPrivateFieldGet(this, _Limiter_blocked, "f").get(key);
        if (blocked !== undefined) {
            if (now < blocked.until)
                return __classPrivateFieldGet(this, _Limiter_instances, "m", _Limiter_refused).call(this, key, blocked.results, now - blocked.at, (blocked.until - now) / 1000);
            __classPrivateFieldGet(this, _Limiter_blocked, "f").delete(key);
        }
        let judged;
        try {
            judged = await within(__classPrivateFieldGet(this, _Limiter_instances, "m", _Limiter_judge).call(this, key), timeout);
        }
        catch (error) {
            if (onError === "raise")
                throw error;
            return { status: onError === "allow" ? 200 : 503, headers: [] };
        }
        if (!judged.limited)
            return { status: 200, headers: __classPrivateFieldGet(this, _Limiter_instances, "m", _Limiter_headers).call(this, key, judged.results, 0) };
        if (localBlock && judged.retryAfter > 0)
            __classPrivateFieldGet(this, _Limiter_instances, "m", _Limiter_remember).call(this, key, { until: now + judged.retryAfter * 1000, at: now, results: judged.results });
        return __classPrivateFieldGet(this, _Limiter_instances, "m", _Limiter_refused).call(this, key, judged.results, 0, judged.retryAfter);
    }
}
exports.Limiter = Limiter;
_Limiter_options = new WeakMap(), _Limiter_policies = new WeakMap(), _Limiter_blocked = new WeakMap(), _Limiter_instances = new WeakSet(), _Limiter_judge = async function _Limiter_judge(key) {
    const { guard, limits } = __classPrivateFieldGet(this, _Limiter_options, "f");
    const keys = this.keys(key);
    if (keys.length === 1) {
        const one = await guard.throttle(keys[0], limits[0].maxBurst, limits[0].count, limits[0].period);
        return { limited: one.limited, retryAfter: one.retryAfter, results: [one] };
    }
    return guard.throttleAll(limits.map((l, i) => [keys[i], l.maxBurst, l.count, l.period]));
}, _Limiter_refused = function _Limiter_refused(key, results, elapsedMs, retryAfter) {
    return { status: 429, headers: [...__classPrivateFieldGet(this, _Limiter_instances, "m", _Limiter_headers).call(this, key, results, elapsedMs), ["Retry-After", String(Math.max(0, Math.ceil(retryAfter)))]] };
}, _Limiter_headers = function _Limiter_headers(key, results, elapsedMs) {
    const pk = partitionKey(key);
    const policies = __classPrivateFieldGet(this, _Limiter_policies, "f").map(({ name, quota, window }) => `"${name}"; q=${quota}; w=${window}; pk=:${pk}:`);
    const states = __classPrivateFieldGet(this, _Limiter_policies, "f").map(({ name }, i) => {
        const { remaining, resetAfter } = results[i];
        if (elapsedMs === 0)
            return `"${name}"; r=${remaining}; t=${resetAfter}`;
        return `"${name}"; r=0; t=${Math.max(0, Math.ceil(resetAfter - elapsedMs / 1000))}`;
    });
    return [
        ["RateLimit-Policy", policies.join(", ")],
        ["RateLimit", states.join(", ")],
    ];
}, _Limiter_remember = function _Limiter_remember(key, block) {
    if (__classPrivateFieldGet(this, _Limiter_blocked, "f").size >= 10000) {
        const now = performance.now();
        for (const [stale, b] of __classPrivateFieldGet(this, _Limiter_blocked, "f"))
            if (b.until <= now)
                __classPrivateFieldGet(this, _Limiter_blocked, "f").delete(stale);
    }
    __classPrivateFieldGet(this, _Limiter_blocked, "f").set(key, block);
};
