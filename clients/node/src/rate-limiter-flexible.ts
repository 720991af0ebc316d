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
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Guard } from "./index";

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
}

const unsupported = (what: string): Error => new Error(`redis-guard: RateLimiterGuard.${what} needs CL.REFUND / BLOCK, not in this release`);

export class RateLimiterGuard extends peer.RateLimiterCompatibleAbstract {
  readonly #guard: Guard;
  readonly #points: number;
  readonly #duration: number;
  readonly #keyPrefix: string;

  constructor(options: RateLimiterGuardOptions) {
    super();
    this.#guard = options.guard;
    this.#points = options.points ?? 4;
    this.#duration = options.duration ?? 1;
    this.#keyPrefix = options.keyPrefix ?? "rlflx";
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
  get blockDuration(): number {
    return 0;
  }
  set blockDuration(value: number) {
    if (value !== 0) throw unsupported("blockDuration");
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
    const t = await this.#guard.throttle(this.getKey(key), this.#points - 1, this.#points, this.#duration, points);
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

  async reward(): Promise<RateLimiterRes> {
    throw unsupported("reward");
  }
  async block(): Promise<RateLimiterRes> {
    throw unsupported("block");
  }
  async set(): Promise<RateLimiterRes> {
    throw unsupported("set");
  }
}

export default RateLimiterGuard;
