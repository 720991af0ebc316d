/**
 * One definition per command: the arguments it sends, the key that routes
 * it and the parser of its reply. Every client adapter and every pipeline
 * uses these, so a command is written down once.
 */
/** A key, member, user or request id: sent as given. */
export type Bytes = string | Buffer;
/** An integer argument: sent in decimal. */
export type Int = number | bigint;
/** A command ready to send: `args[0]` is its name, `key` routes it. */
export interface Spec<T> {
    readonly args: readonly Bytes[];
    /** The key whose slot owns the command (CL.THROTTLEALL: the first limiter's). */
    readonly key: Bytes | undefined;
    /**
     * Where the keys are in `args`, in order (for a client's key prefix, and
     * a script's KEYS): the first is `key`, or none for a call that only
     * goes to `key`'s node (SCRIPT LOAD).
     */
    readonly keyIndexes: readonly number[];
    readonly readonly: boolean;
    readonly parse: (reply: unknown) => T;
    /**
     * What the call resolves for a server error it expects (`create`'s
     * `existOk`), given the package's error; it throws any other.
     */
    readonly onError?: (error: Error) => T;
    /** An application's own command queued in a pipeline: sent as it is on either backend, its reply unparsed. */
    readonly raw?: boolean;
}
/** MON.INCRCHECK, MON.SLIDECHECK, MON.DISTINCT. */
export interface Check {
    /** The counter (MON.DISTINCT: distinct members) after the call. */
    current: number;
    /** 1-based index of the threshold crossed now, 0 when none. */
    level: number;
}
/** CL.THROTTLE, and each limiter of CL.THROTTLEALL. */
export interface Throttle {
    limited: boolean;
    limit: number;
    remaining: number;
    /** Seconds until this request would be allowed; -1 when allowed. */
    retryAfter: number;
    /** Seconds until the limiter is full again. */
    resetAfter: number;
}
/** CL.THROTTLEALL. */
/** `throttle` and `throttleAll` options. */
export interface ThrottleOptions {
    /** How many places the request takes (default 1; 0 peeks). */
    quantity?: Int;
    /** Seconds a refused request blocks each refusing limiter (a penalty box). */
    block?: Int;
}
export interface ThrottleAll {
    limited: boolean;
    retryAfter: number;
    /** One per limiter, in the order given. */
    results: Throttle[];
}
/** COUPON.RESERVE: a claim number (or ALREADY_WON / SOLD_OUT) and its expiry. */
export interface Reservation {
    claim: number;
    /** Absolute server time in ms; -1 once confirmed; 0 when refused. */
    expiresAtMs: number;
}
/** COUPON.CONFIRM: confirmed now (1), confirmed before (0), no place for it, released: refund (-2), no live claim with that number (-3). */
export type Confirmation = "confirmed" | "already" | "over_limit" | "no_claim";
/** COUPON.INFO: the settings and the totals as of now (`confirmed`, `held`, `claims`, `expired`, `released` count claims). */
export interface CampaignInfo {
    limit: number;
    peruser: number;
    hold: number;
    confirmed: number;
    held: number;
    /** max(0, limit - heldUnits - confirmedUnits). */
    available: number;
    /** Claims ever made: confirmed + held + released + expired. */
    claims: number;
    expired: number;
    released: number;
    /** Units of the live holds. */
    heldUnits: number;
    /** Units of the confirmed claims. */
    confirmedUnits: number;
}
/** One live claim of COUPON.CLAIMS. */
export interface Claim {
    claim: number;
    user: string;
    state: "held" | "confirmed";
    expiresAtMs: number;
    requestId: string | null;
    /** The units it holds (confirmed: those confirmed). */
    units: number;
}
/** COUPON.ISSUE / COUPON.RESERVE: the user already has their places. */
export declare const ALREADY_WON = -1;
/** COUPON.ISSUE / COUPON.RESERVE: no place left. */
export declare const SOLD_OUT = -2;
/** `ALERT stream [MAXLEN n]` of the MON commands. */
export interface AlertOptions {
    /** The stream that receives an entry per crossing (same hash tag as the key). */
    alert?: Bytes;
    /** Approximate trim of the stream (only with `alert`). */
    maxlen?: Int;
}
/** A calendar period, in the zone `tz` names (default UTC). */
export type CalendarUnit = "minute" | "hour" | "day" | "week" | "month";
/** A window: whole seconds, or a calendar period. */
export type Window = Int | CalendarUnit;
export interface IncrCheckOptions extends AlertOptions {
    /** The IANA zone whose calendar a calendar window follows ("Asia/Seoul"). */
    tz?: string;
}
export interface QuotaOptions {
    /** Units this call asks (default 1; 0 peeks). */
    quantity?: Int;
    /** The IANA zone whose calendar a calendar window follows. */
    tz?: string;
}
export interface SlideOptions extends AlertOptions {
    buckets?: Int;
}
/** `LEDGER stream`: required by every write of a campaign that keeps a ledger. */
export interface LedgerOptions {
    /** The campaign's ledger stream, as given at `create` (same hash tag as the key). */
    ledger?: Bytes;
}
export interface CreateOptions extends LedgerOptions {
    peruser?: Int;
    hold?: Int;
    /** Resolve `false` instead of rejecting with `CampaignExists` when the key exists (an application's restart; the campaign is left as it is). */
    existOk?: boolean;
    /** Approximate trim of the ledger stream (only with `ledger`). */
    maxlen?: Int;
}
export interface ReserveOptions extends LedgerOptions {
    /** Seconds; the campaign's default hold when left out. */
    hold?: Int;
    /** Request id: a retry with the same id (and qty) repeats the claim. */
    id?: Bytes;
    /** Units the claim holds (default 1). */
    qty?: Int;
}
export interface ConfirmOptions extends LedgerOptions {
    /** Units of the hold confirmed (default all); the others are free at once. */
    qty?: Int;
}
export interface RenewOptions extends LedgerOptions {
    /** Seconds from now; the campaign's hold when left out. */
    hold?: Int;
}
/** COUPON.ALTER: at least one of `limit`, `peruser`, `hold`. */
export interface AlterOptions extends LedgerOptions {
    limit?: Int;
    peruser?: Int;
    hold?: Int;
}
export interface ReclaimOptions extends LedgerOptions {
    /** At most this many expired holds (server default 100). */
    count?: Int;
}
/** COUPON.RESERVEALL: the hold defaults to the campaigns' smallest default. */
export interface ReserveAllOptions extends LedgerOptions {
    hold?: Int;
    id?: Bytes;
    /** Units in each campaign, one per key in key order (default 1 each). */
    qty?: readonly Int[];
}
/** COUPON.RESERVEALL: one hold in every campaign, or none. */
export interface Cart {
    /** Every campaign holds a place: `reservations`, one per key, in key order. */
    reserved: boolean;
    /** Empty when refused. */
    reservations: Reservation[];
    /** 0 when reserved; else ALREADY_WON (-1) or SOLD_OUT (-2). */
    refused: number;
    /** 1-based index of the first campaign that refused; null when reserved. */
    at: number | null;
}
export interface ClaimsOptions {
    from?: Int;
    count?: Int;
}
/** A limiter of CL.THROTTLEALL: `[key, maxBurst, count, period]`. */
export type Limit = readonly [key: Bytes, maxBurst: Int, count: Int, period: Int];
export declare function parseCheck(reply: unknown): Check;
export declare function parseInteger(reply: unknown): number;
export declare function parseThrottle(reply: unknown): Throttle;
export declare function parseThrottleAll(reply: unknown): ThrottleAll;
export declare function parseConfirmation(reply: unknown): Confirmation;
export declare function parseOk(reply: unknown): true;
export declare function parseReservation(reply: unknown): Reservation;
export declare function parseCart(reply: unknown): Cart;
export declare function parseInfo(reply: unknown): CampaignInfo;
export declare function parseClaims(reply: unknown): Claim[];
/**
 * The commands, by method name. Each returns the command to send; the
 * methods of `Guard` and `GuardPipeline` are made from these.
 */
export declare const commands: {
    /** MON.INCRCHECK: add to a fixed-window counter, report the threshold crossed. */
    incrcheck(key: Bytes, increment: Int, window: Window, thresholds: Int | readonly Int[], opts?: IncrCheckOptions): Spec<Check>;
    /** MON.SLIDECHECK: the same over a sliding window. */
    slidecheck(key: Bytes, increment: Int, window: Int, thresholds: Int | readonly Int[], opts?: SlideOptions): Spec<Check>;
    /** MON.DISTINCT: distinct members seen in the window. */
    distinct(key: Bytes, member: Bytes, window: Int, thresholds: Int | readonly Int[], opts?: AlertOptions): Spec<Check>;
    /** MON.DECRCLAMP: subtract, never below 0; the new value. */
    decrclamp(key: Bytes, amount: Int, opts?: AlertOptions): Spec<number>;
    /** COUPON.ISSUE: rank >= 1, ALREADY_WON or SOLD_OUT. */
    issue(key: Bytes, user: Bytes, limit: Int, opts?: LedgerOptions): Spec<number>;
    /** COUPON.REVOKE: places taken back. */
    revoke(key: Bytes, user: Bytes, opts?: LedgerOptions): Spec<number>;
    /**
     * CL.THROTTLE: a GCRA rate limit. The fifth argument is the options
     * (`quantity`, and `block`: seconds a refused request blocks the
     * limiter), or the quantity alone as before.
     */
    throttle(key: Bytes, maxBurst: Int, count: Int, period: Int, opts?: Int | ThrottleOptions): Spec<Throttle>;
    /** CL.THROTTLEALL: several limits, all or nothing; routed by the first limiter's key. */
    throttleAll(limits: readonly Limit[], opts?: ThrottleOptions): Spec<ThrottleAll>;
    /** CL.REFUND: gives `quantity` back to a limiter (never above its burst); its state after. */
    refund(key: Bytes, maxBurst: Int, count: Int, period: Int, quantity: Int): Spec<Throttle>;
    /** Deletes a limiter's key (`DEL`, on either backend): full again. 1 when there was one, else 0, as DEL answers. */
    reset(key: Bytes): Spec<number>;
    /**
     * CL.QUOTA: at most `limit` units per window (seconds, or a calendar
     * period of the zone `tz`); what does not fit is refused and takes nothing.
     */
    quota(key: Bytes, limit: Int, window: Window, opts?: QuotaOptions): Spec<Throttle>;
    /**
     * COUPON.CREATE: a campaign (with `ledger`, one that appends every change
     * of a claim to it); resolves `true`, or `false` with `existOk` when the
     * key exists (else `CampaignExists`).
     */
    create(key: Bytes, limit: Int, opts?: CreateOptions): Spec<boolean>;
    /** COUPON.RESERVE: hold a place (`qty` units of it). */
    reserve(key: Bytes, user: Bytes, opts?: ReserveOptions): Spec<Reservation>;
    /** COUPON.CONFIRM (`qty` of the hold's units): "confirmed", "already", "over_limit" (released: refund) or "no_claim". */
    confirm(key: Bytes, claim: Int, opts?: ConfirmOptions): Spec<Confirmation>;
    /** COUPON.RENEW: a live hold ends `hold` from now; its new expiresAtMs, 0 when confirmed, -3 when there is no live claim. */
    renew(key: Bytes, claim: Int, opts?: RenewOptions): Spec<number>;
    /** COUPON.RELEASE: 1 or 0. */
    release(key: Bytes, claim: Int, opts?: LedgerOptions): Spec<number>;
    /** COUPON.ALTER: change the settings now (restock, lower a limit); resolves `true`. */
    alter(key: Bytes, opts: AlterOptions): Spec<true>;
    /** COUPON.RECLAIM: reclaim expired holds now, oldest first; how many. */
    reclaim(key: Bytes, opts?: ReclaimOptions): Spec<number>;
    /** COUPON.RESERVEALL: one hold in each campaign, all or none; routed by the first key. */
    reserveAll(keys: readonly Bytes[], user: Bytes, opts?: ReserveAllOptions): Spec<Cart>;
    /** COUPON.INFO: limit, peruser, hold, confirmed, held, available, claims, expired, released, heldUnits, confirmedUnits. */
    campaignInfo(key: Bytes): Spec<CampaignInfo>;
    /** COUPON.CLAIMS: live claims in claim order. */
    claims(key: Bytes, opts?: ClaimsOptions): Spec<Claim[]>;
};
export type Commands = typeof commands;
export type CommandName = keyof Commands;
/** What a method of command `K` resolves to. */
export type ResultOf<K extends CommandName> = ReturnType<Commands[K]> extends Spec<infer T> ? T : never;
