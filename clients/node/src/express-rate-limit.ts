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

/** A threshold never reached: MON.INCRCHECK asks for one; the limit is express-rate-limit's to apply. */
const NEVER = Number.MAX_SAFE_INTEGER;

const resetTime = (pttl: unknown): Date | undefined => (Number(pttl) > 0 ? new Date(Date.now() + Number(pttl)) : undefined);

export class GuardStore {
  readonly prefix: string;
  /** Hits are counted in Redis, shared by every process. */
  readonly localKeys = false;
  readonly #guard: Guard;
  #windowSeconds = 60;

  constructor(options: GuardStoreOptions) {
    this.#guard = options.guard;
    this.prefix = options.prefix ?? "erl:";
  }

  /** Called by express-rate-limit with its options: takes `windowMs`. */
  init(options: { windowMs: number }): void {
    this.#windowSeconds = Math.max(1, Math.ceil(options.windowMs / 1000));
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const k = this.prefix + key;
    const [{ current }, pttl] = await this.#guard.pipeline().incrcheck(k, 1, this.#windowSeconds, NEVER).call("PTTL", k).exec();
    return { totalHits: current, resetTime: resetTime(pttl) };
  }

  async decrement(key: string): Promise<void> {
    await this.#guard.decrclamp(this.prefix + key, 1);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const k = this.prefix + key;
    const [hits, pttl] = await this.#guard.pipeline().call("GET", k).call("PTTL", k).exec();
    return hits === null || hits === undefined ? undefined : { totalHits: Number(hits), resetTime: resetTime(pttl) };
  }

  async resetKey(key: string): Promise<void> {
    await this.#guard.pipeline().call("DEL", this.prefix + key).exec();
  }
}

export default GuardStore;
