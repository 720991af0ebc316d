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
declare const peer: Peer;
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
export declare class RateLimiterGuard extends peer.RateLimiterCompatibleAbstract {
    #private;
    constructor(options: RateLimiterGuardOptions);
    get keyPrefix(): string;
    get points(): number;
    get duration(): number;
    /** Seconds a refused consume or penalty blocks its key (0: none). */
    get blockDuration(): number;
    set blockDuration(value: number);
    get execEvenly(): boolean;
    set execEvenly(value: boolean);
    /** The Redis key of `key`. */
    getKey(key: string | number): string;
    /** Resolves the state after consuming `points`; rejects with the refused `RateLimiterRes` (nothing consumed). */
    consume(key: string | number, points?: number): Promise<RateLimiterRes>;
    /** As `consume`, but resolves either way (a GCRA takes all `points` or none). */
    penalty(key: string | number, points?: number): Promise<RateLimiterRes>;
    /** The state without consuming anything; null for a limiter that is full (no record). */
    get(key: string | number): Promise<RateLimiterRes | null>;
    /** Deletes the key; whether there was one. */
    delete(key: string | number): Promise<boolean>;
    /** Gives `points` back (CL.REFUND; never above a full limiter); the state after. */
    reward(key: string | number, points?: number): Promise<RateLimiterRes>;
    /**
     * Blocks `key` for `secDuration` seconds from now: its next request is
     * allowed then, and the points refill from there (a block already
     * longer is kept). Resolves with the blocked state.
     */
    block(key: string | number, secDuration: number): Promise<RateLimiterRes>;
    set(): Promise<RateLimiterRes>;
}
export default RateLimiterGuard;
