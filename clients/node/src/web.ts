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
import { createHash } from "node:crypto";
import type { Throttle } from "./commands";
import type { Guard } from "./index";

/** One limit: `count` requests per `period` seconds, `maxBurst + 1` at once. */
export interface LimitOptions {
  maxBurst: number;
  count: number;
  period: number;
}

export type OnError = "allow" | "deny" | "raise";

export interface RateLimitOptions<Req> {
  guard: Guard;
  limits: readonly LimitOptions[];
  /** What a request is limited by (default: the client's IP address). */
  key?: (req: Req) => string;
  /** Keys are `${prefix}:${i}:${key}` (default `"rl"`). */
  prefix?: string;
  /** Milliseconds to wait for Redis (default 1000). */
  timeout?: number;
  /** What a request gets when Redis is down or slow (default `"allow"`). */
  onError?: OnError;
  /** Refuse a refused key in this process until its `retryAfter` passes, without calling Redis (default false). */
  localBlock?: boolean;
}

/** Redis did not answer within `timeout`. */
export class TimeoutError extends Error {
  constructor(ms: number) {
    super(`redis-guard: no answer from Redis within ${ms} ms`);
    this.name = "TimeoutError";
  }
}

/** What a request gets: 200 (go on), 429 (limited) or 503 (Redis could not judge it, `onError: "deny"`), and its headers. */
export interface Verdict {
  status: 200 | 429 | 503;
  headers: Array<[name: string, value: string]>;
}

/** The body of a response the limiter answers itself. */
export const statusText = (status: number): string => (status === 429 ? "Too Many Requests" : "Service Unavailable");

/** express-rate-limit's `pk`: base64 of the first 12 hex digits of the key's SHA-256. */
export function partitionKey(key: string): string {
  return Buffer.from(createHash("sha256").update(key).digest("hex").slice(0, 12)).toString("base64");
}

/** `promise`, or a TimeoutError after `ms` (the late outcome is dropped). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  promise.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(ms)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

interface Block {
  until: number;
  at: number;
  results: Throttle[];
}

export class Limiter<Req> {
  readonly #options: Required<Omit<RateLimitOptions<Req>, "key">> & { key: (req: Req) => string };
  readonly #policies: Array<{ name: string; quota: number; window: number }>;
  readonly #blocked = new Map<string, Block>();

  constructor(options: RateLimitOptions<Req>, clientAddress: (req: Req) => string) {
    const { guard, limits, key = clientAddress, prefix = "rl", timeout = 1000, onError = "allow", localBlock = false } = options;
    if (!limits || limits.length === 0) throw new TypeError("redis-guard: limits: at least one { maxBurst, count, period }");
    if (!["allow", "deny", "raise"].includes(onError)) throw new TypeError(`redis-guard: onError is "allow", "deny" or "raise", not ${JSON.stringify(onError)}`);
    if (!(timeout > 0)) throw new TypeError("redis-guard: timeout: a positive number of milliseconds");
    this.#options = { guard, limits, key, prefix, timeout, onError, localBlock };
    this.#policies = limits.map(({ maxBurst, count, period }) => {
      const quota = maxBurst + 1;
      const window = Math.ceil((period * quota) / count);
      return { name: `${quota}-in-${window}s`, quota, window };
    });
  }

  /** The Redis key of each limit for `key`. */
  keys(key: string): string[] {
    return this.#options.limits.map((_, i) => `${this.#options.prefix}:${i}:${key}`);
  }

  /** Judges one request; rejects only with `onError: "raise"`. */
  async check(req: Req): Promise<Verdict> {
    const { key: keyOf, timeout, onError, localBlock } = this.#options;
    const key = keyOf(req);
    const now = performance.now();
    const blocked = this.#blocked.get(key);
    if (blocked !== undefined) {
      if (now < blocked.until) return this.#refused(key, blocked.results, now - blocked.at, (blocked.until - now) / 1000);
      this.#blocked.delete(key);
    }
    let judged: { limited: boolean; retryAfter: number; results: Throttle[] };
    try {
      judged = await within(this.#judge(key), timeout);
    } catch (error) {
      if (onError === "raise") throw error;
      return { status: onError === "allow" ? 200 : 503, headers: [] };
    }
    if (!judged.limited) return { status: 200, headers: this.#headers(key, judged.results, 0) };
    if (localBlock && judged.retryAfter > 0) this.#remember(key, { until: now + judged.retryAfter * 1000, at: now, results: judged.results });
    return this.#refused(key, judged.results, 0, judged.retryAfter);
  }

  async #judge(key: string): Promise<{ limited: boolean; retryAfter: number; results: Throttle[] }> {
    const { guard, limits } = this.#options;
    const keys = this.keys(key);
    if (keys.length === 1) {
      const one = await guard.throttle(keys[0], limits[0].maxBurst, limits[0].count, limits[0].period);
      return { limited: one.limited, retryAfter: one.retryAfter, results: [one] };
    }
    return guard.throttleAll(limits.map((l, i) => [keys[i], l.maxBurst, l.count, l.period] as const));
  }

  #refused(key: string, results: Throttle[], elapsedMs: number, retryAfter: number): Verdict {
    return { status: 429, headers: [...this.#headers(key, results, elapsedMs), ["Retry-After", String(Math.max(0, Math.ceil(retryAfter)))]] };
  }

  /** RateLimit-Policy and RateLimit, one item per limit; `elapsedMs` since `results` were given (a local block's). */
  #headers(key: string, results: Throttle[], elapsedMs: number): Array<[string, string]> {
    const pk = partitionKey(key);
    const policies = this.#policies.map(({ name, quota, window }) => `"${name}"; q=${quota}; w=${window}; pk=:${pk}:`);
    const states = this.#policies.map(({ name }, i) => {
      const { remaining, resetAfter } = results[i];
      if (elapsedMs === 0) return `"${name}"; r=${remaining}; t=${resetAfter}`;
      return `"${name}"; r=0; t=${Math.max(0, Math.ceil(resetAfter - elapsedMs / 1000))}`;
    });
    return [
      ["RateLimit-Policy", policies.join(", ")],
      ["RateLimit", states.join(", ")],
    ];
  }

  /** Keeps `block`; past 10,000 keys the expired ones go first. */
  #remember(key: string, block: Block): void {
    if (this.#blocked.size >= 10_000) {
      const now = performance.now();
      for (const [stale, b] of this.#blocked) if (b.until <= now) this.#blocked.delete(stale);
    }
    this.#blocked.set(key, block);
  }
}
