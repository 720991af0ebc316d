/**
 * `redis-guard/express-rate-limit`: `GuardStore`, an express-rate-limit
 * (7 and 8) `Store` kept in Redis through the guard.
 *
 * ```ts
 * app.use(expressRateLimit({ windowMs: 60_000, limit: 10, store: new GuardStore({ guard: guard(redis) }) }));
 * ```
 *
 * express-rate-limit counts hits in fixed windows and compares the count
 * with its `limit` itself, so the store is a counter, not a GCRA:
 * `increment` is MON.INCRCHECK (the window, `windowMs` rounded up to whole
 * seconds, starts at a key's first hit and is never extended) with the
 * key's PTTL in the same round trip for `resetTime`; `decrement` is
 * MON.DECRCLAMP (never below 0, the window kept); `get` reads the counter
 * and its PTTL; `resetKey` deletes the key. Keys are `${prefix}${key}`
 * (default prefix `"erl:"`). Both backends (module or scripts) work.
 */
import type { Guard } from "./index";
/** express-rate-limit's `ClientRateLimitInfo`. */
export interface ClientRateLimitInfo {
    totalHits: number;
    resetTime: Date | undefined;
}
export interface GuardStoreOptions {
    guard: Guard;
    /** Prepended to every key (default `"erl:"`). */
    prefix?: string;
}
export declare class GuardStore {
    #private;
    readonly prefix: string;
    /** Hits are counted in Redis, shared by every process. */
    readonly localKeys = false;
    constructor(options: GuardStoreOptions);
    /** Called by express-rate-limit with its options: takes `windowMs`. */
    init(options: {
        windowMs: number;
    }): void;
    increment(key: string): Promise<ClientRateLimitInfo>;
    decrement(key: string): Promise<void>;
    get(key: string): Promise<ClientRateLimitInfo | undefined>;
    resetKey(key: string): Promise<void>;
}
export default GuardStore;
