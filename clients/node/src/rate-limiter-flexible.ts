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
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Guard, Throttle } from "./index";

/** rate-limiter-flexible's `RateLimiterRes`. */
export interface RateLimiterRes {
  readonly remainingPoints: number;
  readonly msBeforeNext: number;
  readonly consumedPoints: number;
  readonly isFirstInDuration: boolean;
}

interface Peer {
  RateLimiterCompatibleAbstract: new () => object;
  RateLimiterRes: new (remainingPoints?: number, msBeforeNext?: number, consumedPoints?: number, isFirstInDuration?: boolean) => RateLimiterRes;
}

/**
 * The peer, loaded when this subpath is imported (not by `redis-guard`).
 * A linked install (`npm install <checkout>/clients/node` makes a symlink)
 * cannot find it from this file's real folder: then from the
 * application's (its main module's, else the working directory).
 */
function loadPeer(): Peer {
  try {
    return require("rate-limiter-flexible");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "MODULE_NOT_FOUND") throw error;
    return createRequire(require.main?.filename ?? join(process.cwd(), "index.js"))("rate-limiter-flexible");
  }
}
const peer = loadPeer();

export interface RateLimiterGuardOptions {
  guard: Guard;
  /** Points per `duration` (default 4, as rate-limiter-flexible's). */
  points?: number;
  /** Seconds (default 1). */
  duration?: number;
  /** Keys are `${keyPrefix}:${key}` (default `"rlflx"`). */
  keyPrefix?: string;
  /** Seconds a refused consume or penalty blocks its key (default 0: none). */
  blockDuration?: number;
}

const wholeSeconds = (what: string, value: number): number => {
  if (!(Number.isInteger(value) && value >= 0)) throw new TypeError(`redis-guard: ${what}: whole seconds, 0 or more`);
  return value;
};

export class RateLimiterGuard extends peer.RateLimiterCompatibleAbstract {
  readonly #guard: Guard;
  readonly #points: number;
  readonly #duration: number;
  readonly #keyPrefix: string;
  #blockDuration: number;

  constructor(options: RateLimiterGuardOptions) {
    super();
    this.#guard = options.guard;
    this.#points = options.points ?? 4;
    this.#duration = options.duration ?? 1;
    this.#keyPrefix = options.keyPrefix ?? "rlflx";
    this.#blockDuration = wholeSeconds("blockDuration", options.blockDuration ?? 0);
    if (!(this.#points >= 1 && this.#duration >= 1)) throw new TypeError("redis-guard: points and duration: at least 1");
  }

  get keyPrefix(): string {
    return this.#keyPrefix;
  }
  get points(): number {
    return this.#points;
  }
  get duration(): number {
    return this.#duration;
  }
  /** Seconds a refused consume or penalty blocks its key (0: none). */
  get blockDuration(): number {
    return this.#blockDuration;
  }
  set blockDuration(value: number) {
    this.#blockDuration = wholeSeconds("blockDuration", value);
  }
  get execEvenly(): boolean {
    return false;
  }
  set execEvenly(value: boolean) {
    if (value) throw new Error("redis-guard: RateLimiterGuard has no execEvenly (a GCRA spaces requests already)");
  }

  /** The Redis key of `key`. */
  getKey(key: string | number): string {
    return `${this.#keyPrefix}:${key}`;
  }

  async #throttle(key: string | number, points: number): Promise<{ limited: boolean; res: RateLimiterRes }> {
    const block = points > 0 && this.#blockDuration > 0 ? this.#blockDuration : undefined;
    const t = await this.#guard.throttle(this.getKey(key), this.#points - 1, this.#points, this.#duration, { quantity: points, block });
    return this.#result(t, points);
  }

  #result(t: Throttle, points: number): { limited: boolean; res: RateLimiterRes } {
    const consumed = t.limit - t.remaining;
    const ms = (t.limited ? t.retryAfter : t.resetAfter) * 1000;
    return { limited: t.limited, res: new peer.RateLimiterRes(t.remaining, ms, consumed, !t.limited && points > 0 && consumed === points) };
  }

  /** Resolves the state after consuming `points`; rejects with the refused `RateLimiterRes` (nothing consumed). */
  async consume(key: string | number, points = 1): Promise<RateLimiterRes> {
    const { limited, res } = await this.#throttle(key, points);
    if (limited) throw res;
    return res;
  }

  /** As `consume`, but resolves either way (a GCRA takes all `points` or none). */
  async penalty(key: string | number, points = 1): Promise<RateLimiterRes> {
    return (await this.#throttle(key, points)).res;
  }

  /** The state without consuming anything; null for a limiter that is full (no record). */
  async get(key: string | number): Promise<RateLimiterRes | null> {
    const { res } = await this.#throttle(key, 0);
    return res.consumedPoints === 0 ? null : res;
  }

  /** Deletes the key; whether there was one. */
  async delete(key: string | number): Promise<boolean> {
    const [deleted] = await this.#guard.pipeline().call("DEL", this.getKey(key)).exec();
    return Number(deleted) > 0;
  }

  /** Gives `points` back (CL.REFUND; never above a full limiter); the state after. */
  async reward(key: string | number, points = 1): Promise<RateLimiterRes> {
    const t = await this.#guard.refund(this.getKey(key), this.#points - 1, this.#points, this.#duration, points);
    return this.#result(t, 0).res;
  }

  /**
   * Blocks `key` for `secDuration` seconds from now: its next request is
   * allowed then, and the points refill from there (a block already
   * longer is kept). Resolves with the blocked state.
   */
  async block(key: string | number, secDuration: number): Promise<RateLimiterRes> {
    const seconds = wholeSeconds("block", secDuration);
    if (seconds < 1) throw new TypeError("redis-guard: block: at least 1 second");
    const k = this.getKey(key);
    const [, blocked] = await this.#guard
      .pipeline({ transaction: true })
      .throttle(k, this.#points - 1, this.#points, this.#duration, { quantity: this.#points, block: seconds })
      .throttle(k, this.#points - 1, this.#points, this.#duration, { quantity: 1, block: seconds })
      .exec();
    return this.#result(blocked, 0).res;
  }

  async set(): Promise<RateLimiterRes> {
    throw new Error("redis-guard: RateLimiterGuard.set has no GCRA equivalent (use delete, consume, reward or block)");
  }
}

export default RateLimiterGuard;
