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
var _GuardStore_guard, _GuardStore_windowSeconds;
Object.defineProperty(exports, "__esModule", { value: true });
exports.GuardStore = void 0;
/** A threshold never reached: MON.INCRCHECK asks for one; the limit is express-rate-limit's to apply. */
const NEVER = Number.MAX_SAFE_INTEGER;
const resetTime = (pttl) => (Number(pttl) > 0 ? new Date(Date.now() + Number(pttl)) : undefined);
class GuardStore {
    constructor(options) {
        /** Hits are counted in Redis, shared by every process. */
        this.localKeys = false;
        _GuardStore_guard.set(this, void 0);
        _GuardStore_windowSeconds.set(this, 60);
        __classPrivateFieldSet(this, _GuardStore_guard, options.guard, "f");
        this.prefix = options.prefix ?? "erl:";
    }
    /** Called by express-rate-limit with its options: takes `windowMs`. */
    init(options) {
        __classPrivateFieldSet(this, _GuardStore_windowSeconds, Math.max(1, Math.ceil(options.windowMs / 1000)), "f");
    }
    async increment(key) {
        const k = this.prefix + key;
        const [{ current }, pttl] = await __classPrivateFieldGet(this, _GuardStore_guard, "f").pipeline().incrcheck(k, 1, __classPrivateFieldGet(this, _GuardStore_windowSeconds, "f"), NEVER).call("PTTL", k).exec();
        return { totalHits: current, resetTime: resetTime(pttl) };
    }
    async decrement(key) {
        await __classPrivateFieldGet(this, _GuardStore_guard, "f").decrclamp(this.prefix + key, 1);
    }
    async get(key) {
        const k = this.prefix + key;
        const [hits, pttl] = await __classPrivateFieldGet(this, _GuardStore_guard, "f").pipeline().call("GET", k).call("PTTL", k).exec();
        return hits === null || hits === undefined ? undefined : { totalHits: Number(hits), resetTime: resetTime(pttl) };
    }
    async resetKey(key) {
        await __classPrivateFieldGet(this, _GuardStore_guard, "f").pipeline().call("DEL", this.prefix + key).exec();
    }
}
exports.GuardStore = GuardStore;
_GuardStore_guard = new WeakMap(), _GuardStore_windowSeconds = new WeakMap();
exports.default = GuardStore;
