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
export declare class TimeoutError extends Error {
    constructor(ms: number);
}
/** What a request gets: 200 (go on), 429 (limited) or 503 (Redis could not judge it, `onError: "deny"`), and its headers. */
export interface Verdict {
    status: 200 | 429 | 503;
    headers: Array<[name: string, value: string]>;
}
/** The body of a response the limiter answers itself. */
export declare const statusText: (status: number) => string;
/** express-rate-limit's `pk`: base64 of the first 12 hex digits of the key's SHA-256. */
export declare function partitionKey(key: string): string;
export declare class Limiter<Req> {
    #private;
    constructor(options: RateLimitOptions<Req>, clientAddress: (req: Req) => string);
    /** The Redis key of each limit for `key`. */
    keys(key: string): string[];
    /** Judges one request; rejects only with `onError: "raise"`. */
    check(req: Req): Promise<Verdict>;
}
