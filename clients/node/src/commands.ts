/**
 * One definition per command: the arguments it sends, the key that routes
 * it and the parser of its reply. Every client adapter and every pipeline
 * uses these, so a command is written down once.
 */

import { CampaignExists } from "./errors";

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
export const ALREADY_WON = -1;
/** COUPON.ISSUE / COUPON.RESERVE: no place left. */
export const SOLD_OUT = -2;

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

function int(value: Int): string {
  return typeof value === "bigint" ? value.toString() : String(value);
}

function num(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "bigint" || typeof value === "string") return Number(value);
  if (Buffer.isBuffer(value)) return Number(value.toString());
  throw new TypeError(`redis-guard: expected an integer reply, got ${describe(value)}`);
}

function str(value: unknown): string {
  if (typeof value === "string") return value;
  if (Buffer.isBuffer(value)) return value.toString();
  if (typeof value === "number" || typeof value === "bigint") return String(value);
  throw new TypeError(`redis-guard: expected a string reply, got ${describe(value)}`);
}

function list(value: unknown, length?: number): unknown[] {
  if (!Array.isArray(value) || (length !== undefined && value.length !== length)) {
    throw new TypeError(`redis-guard: expected an array reply${length ? ` of ${length}` : ""}, got ${describe(value)}`);
  }
  return value;
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** `[option, value]` words for the options that were given, in order. */
function windowWord(window: Window): string {
  return typeof window === "string" ? window : int(window);
}

function options(pairs: ReadonlyArray<readonly [string, Int | Bytes | undefined]>): Bytes[] {
  const words: Bytes[] = [];
  for (const [name, value] of pairs) {
    if (value === undefined) continue;
    words.push(name, typeof value === "number" || typeof value === "bigint" ? int(value) : value);
  }
  return words;
}

/**
 * A command with its keys at `keyIndexes` (the first routes it), then the
 * options that were given; an option of `KEY_OPTIONS` names a key too.
 */
function keyed<T>(
  head: Bytes[],
  keyIndexes: number[],
  pairs: ReadonlyArray<readonly [string, Int | Bytes | undefined]>,
  parse: (reply: unknown) => T,
  readonly = false,
): Spec<T> {
  const args = [...head];
  const keys = [...keyIndexes];
  for (const [name, value] of pairs) {
    if (value === undefined) continue;
    if (KEY_OPTIONS.has(name)) keys.push(args.length + 1);
    args.push(...options([[name, value]]));
  }
  return { args, key: args[keys[0]], keyIndexes: keys, readonly, parse };
}

const KEY_OPTIONS = new Set(["ALERT", "LEDGER"]);

function thresholdWords(thresholds: Int | readonly Int[]): string[] {
  return (Array.isArray(thresholds) ? (thresholds as readonly Int[]) : [thresholds as Int]).map(int);
}

/**
 * A command whose key is `args[1]`, and for CL.THROTTLEALL every 4th from
 * `args[2]`; an `ALERT stream` option (at or after `optionsFrom`) adds one.
 */
function spec<T>(args: Bytes[], parse: (reply: unknown) => T, optionsFrom?: number, readonly = false): Spec<T> {
  const keyIndexes: number[] = [1];
  if (optionsFrom !== undefined) {
    const alert = args.indexOf("ALERT", optionsFrom);
    if (alert > 0 && alert + 1 < args.length) keyIndexes.push(alert + 1);
  }
  return { args, key: args[1], keyIndexes, readonly, parse };
}

export function parseCheck(reply: unknown): Check {
  const [current, level] = list(reply, 2);
  return { current: num(current), level: num(level) };
}

export function parseInteger(reply: unknown): number {
  return num(reply);
}

export function parseThrottle(reply: unknown): Throttle {
  const [limited, limit, remaining, retryAfter, resetAfter] = list(reply, 5);
  return {
    limited: num(limited) === 1,
    limit: num(limit),
    remaining: num(remaining),
    retryAfter: num(retryAfter),
    resetAfter: num(resetAfter),
  };
}

export function parseThrottleAll(reply: unknown): ThrottleAll {
  const [limited, retryAfter, ...results] = list(reply);
  return { limited: num(limited) === 1, retryAfter: num(retryAfter), results: results.map(parseThrottle) };
}

const CONFIRMATIONS: Record<string, Confirmation> = { "1": "confirmed", "0": "already", "-2": "over_limit", "-3": "no_claim" };

export function parseConfirmation(reply: unknown): Confirmation {
  const answer = CONFIRMATIONS[String(num(reply))];
  if (answer === undefined) throw new TypeError(`redis-guard: expected a COUPON.CONFIRM reply, got ${describe(reply)}`);
  return answer;
}

/** `create`'s `existOk`: the key exists, nothing changed. */
function existing(error: Error): boolean {
  if (error instanceof CampaignExists) return false;
  throw error;
}

export function parseOk(reply: unknown): true {
  if (str(reply) !== "OK") throw new TypeError(`redis-guard: expected OK, got ${describe(reply)}`);
  return true;
}

export function parseReservation(reply: unknown): Reservation {
  const [claim, expiresAtMs] = list(reply, 2);
  return { claim: num(claim), expiresAtMs: num(expiresAtMs) };
}

export function parseCart(reply: unknown): Cart {
  const values = list(reply).map(num);
  if (values.length < 2 || values.length % 2 !== 0) {
    throw new TypeError(`redis-guard: expected a COUPON.RESERVEALL reply, got ${describe(reply)}`);
  }
  if (values[0] < 0) return { reserved: false, reservations: [], refused: values[0], at: values[1] };
  const reservations: Reservation[] = [];
  for (let i = 0; i < values.length; i += 2) reservations.push({ claim: values[i], expiresAtMs: values[i + 1] });
  return { reserved: true, reservations, refused: 0, at: null };
}

/** A flat field/value array (RESP2) or a map (RESP3: object or Map). */
const INFO_FIELDS = ["limit", "peruser", "hold", "confirmed", "held", "available", "claims", "expired", "released"] as const;
/** INFO's fields of two words, by their camelCase names. */
const UNIT_FIELDS = [["heldUnits", "held_units", "held"], ["confirmedUnits", "confirmed_units", "confirmed"]] as const;

export function parseInfo(reply: unknown): CampaignInfo {
  const info: Record<string, number> = {};
  if (reply instanceof Map) {
    for (const [field, value] of reply) info[str(field)] = num(value);
  } else if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) info[str(reply[i])] = num(reply[i + 1]);
  } else if (reply !== null && typeof reply === "object" && !Buffer.isBuffer(reply)) {
    for (const [field, value] of Object.entries(reply)) info[field] = num(value);
  } else {
    throw new TypeError(`redis-guard: expected a map reply, got ${describe(reply)}`);
  }
  // Only the fields of CampaignInfo: one a newer module adds is left out.
  const fields = {} as CampaignInfo;
  for (const field of INFO_FIELDS) {
    if (info[field] === undefined) throw new TypeError(`redis-guard: COUPON.INFO without ${field}: ${describe(reply)}`);
    fields[field] = info[field];
  }
  // A module older than units has none: a unit a claim.
  for (const [name, field, claims] of UNIT_FIELDS) fields[name] = info[field] ?? info[claims];
  return fields;
}

export function parseClaims(reply: unknown): Claim[] {
  return list(reply).map((entry) => {
    // A module older than units sends 5 (a unit each).
    const fields = list(entry);
    if (fields.length !== 5 && fields.length !== 6) list(entry, 6);
    const [claim, user, state, expiresAtMs, requestId, units] = fields;
    return {
      claim: num(claim),
      user: str(user),
      state: str(state) as Claim["state"],
      expiresAtMs: num(expiresAtMs),
      requestId: requestId === null || requestId === undefined ? null : str(requestId),
      units: units === undefined ? 1 : num(units),
    };
  });
}

/**
 * The commands, by method name. Each returns the command to send; the
 * methods of `Guard` and `GuardPipeline` are made from these.
 */
export const commands = {
  /** MON.INCRCHECK: add to a fixed-window counter, report the threshold crossed. */
  incrcheck(key: Bytes, increment: Int, window: Window, thresholds: Int | readonly Int[], opts: IncrCheckOptions = {}): Spec<Check> {
    return spec(
      [
        "MON.INCRCHECK", key, int(increment), windowWord(window), ...thresholdWords(thresholds),
        ...options([["TZ", opts.tz], ["ALERT", opts.alert], ["MAXLEN", opts.maxlen]]),
      ],
      parseCheck,
      4,
    );
  },
  /** MON.SLIDECHECK: the same over a sliding window. */
  slidecheck(key: Bytes, increment: Int, window: Int, thresholds: Int | readonly Int[], opts: SlideOptions = {}): Spec<Check> {
    return spec(
      [
        "MON.SLIDECHECK", key, int(increment), int(window), ...thresholdWords(thresholds),
        ...options([["BUCKETS", opts.buckets], ["ALERT", opts.alert], ["MAXLEN", opts.maxlen]]),
      ],
      parseCheck,
      4,
    );
  },
  /** MON.DISTINCT: distinct members seen in the window. */
  distinct(key: Bytes, member: Bytes, window: Int, thresholds: Int | readonly Int[], opts: AlertOptions = {}): Spec<Check> {
    return spec(
      ["MON.DISTINCT", key, member, int(window), ...thresholdWords(thresholds), ...options([["ALERT", opts.alert], ["MAXLEN", opts.maxlen]])],
      parseCheck,
      4,
    );
  },
  /** MON.DECRCLAMP: subtract, never below 0; the new value. */
  decrclamp(key: Bytes, amount: Int, opts: AlertOptions = {}): Spec<number> {
    return spec(["MON.DECRCLAMP", key, int(amount), ...options([["ALERT", opts.alert], ["MAXLEN", opts.maxlen]])], parseInteger, 3);
  },
  /** COUPON.ISSUE: rank >= 1, ALREADY_WON or SOLD_OUT. */
  issue(key: Bytes, user: Bytes, limit: Int, opts: LedgerOptions = {}): Spec<number> {
    return keyed(["COUPON.ISSUE", key, user, int(limit)], [1], [["LEDGER", opts.ledger]], parseInteger);
  },
  /** COUPON.REVOKE: places taken back. */
  revoke(key: Bytes, user: Bytes, opts: LedgerOptions = {}): Spec<number> {
    return keyed(["COUPON.REVOKE", key, user], [1], [["LEDGER", opts.ledger]], parseInteger);
  },
  /**
   * CL.THROTTLE: a GCRA rate limit. The fifth argument is the options
   * (`quantity`, and `block`: seconds a refused request blocks the
   * limiter), or the quantity alone as before.
   */
  throttle(key: Bytes, maxBurst: Int, count: Int, period: Int, opts: Int | ThrottleOptions = {}): Spec<Throttle> {
    const { quantity, block } = typeof opts === "object" ? opts : { quantity: opts, block: undefined };
    const args: Bytes[] = ["CL.THROTTLE", key, int(maxBurst), int(count), int(period)];
    if (quantity !== undefined) args.push(int(quantity));
    args.push(...options([["BLOCK", block]]));
    return spec(args, parseThrottle);
  },
  /** CL.THROTTLEALL: several limits, all or nothing; routed by the first limiter's key. */
  throttleAll(limits: readonly Limit[], opts: ThrottleOptions = {}): Spec<ThrottleAll> {
    const args: Bytes[] = ["CL.THROTTLEALL", String(limits.length)];
    for (const [key, maxBurst, count, period] of limits) args.push(key, int(maxBurst), int(count), int(period));
    args.push(...options([["QUANTITY", opts.quantity], ["BLOCK", opts.block]]));
    return { args, key: limits[0]?.[0], keyIndexes: limits.map((_, i) => 2 + 4 * i), readonly: false, parse: parseThrottleAll };
  },
  /** CL.REFUND: gives `quantity` back to a limiter (never above its burst); its state after. */
  refund(key: Bytes, maxBurst: Int, count: Int, period: Int, quantity: Int): Spec<Throttle> {
    return spec(["CL.REFUND", key, int(maxBurst), int(count), int(period), int(quantity)], parseThrottle);
  },
  /** Deletes a limiter's key (`DEL`, on either backend): full again. 1 when there was one, else 0, as DEL answers. */
  reset(key: Bytes): Spec<number> {
    return { args: ["DEL", key], key, keyIndexes: [1], readonly: false, parse: parseInteger, raw: true };
  },
  /**
   * CL.QUOTA: at most `limit` units per window (seconds, or a calendar
   * period of the zone `tz`); what does not fit is refused and takes nothing.
   */
  quota(key: Bytes, limit: Int, window: Window, opts: QuotaOptions = {}): Spec<Throttle> {
    const args: Bytes[] = ["CL.QUOTA", key, int(limit), windowWord(window)];
    if (opts.quantity !== undefined) args.push(int(opts.quantity));
    args.push(...options([["TZ", opts.tz]]));
    return spec(args, parseThrottle);
  },
  /**
   * COUPON.CREATE: a campaign (with `ledger`, one that appends every change
   * of a claim to it); resolves `true`, or `false` with `existOk` when the
   * key exists (else `CampaignExists`).
   */
  create(key: Bytes, limit: Int, opts: CreateOptions = {}): Spec<boolean> {
    const call: Spec<boolean> = keyed(
      ["COUPON.CREATE", key, int(limit)],
      [1],
      [["PERUSER", opts.peruser], ["HOLD", opts.hold], ["LEDGER", opts.ledger], ["MAXLEN", opts.maxlen]],
      parseOk,
    );
    return opts.existOk ? { ...call, onError: existing } : call;
  },
  /** COUPON.RESERVE: hold a place (`qty` units of it). */
  reserve(key: Bytes, user: Bytes, opts: ReserveOptions = {}): Spec<Reservation> {
    return keyed(
      ["COUPON.RESERVE", key, user],
      [1],
      [["HOLD", opts.hold], ["ID", opts.id], ["QTY", opts.qty], ["LEDGER", opts.ledger]],
      parseReservation,
    );
  },
  /** COUPON.CONFIRM (`qty` of the hold's units): "confirmed", "already", "over_limit" (released: refund) or "no_claim". */
  confirm(key: Bytes, claim: Int, opts: ConfirmOptions = {}): Spec<Confirmation> {
    return keyed(["COUPON.CONFIRM", key, int(claim)], [1], [["QTY", opts.qty], ["LEDGER", opts.ledger]], parseConfirmation);
  },
  /** COUPON.RENEW: a live hold ends `hold` from now; its new expiresAtMs, 0 when confirmed, -3 when there is no live claim. */
  renew(key: Bytes, claim: Int, opts: RenewOptions = {}): Spec<number> {
    return keyed(["COUPON.RENEW", key, int(claim)], [1], [["HOLD", opts.hold], ["LEDGER", opts.ledger]], parseInteger);
  },
  /** COUPON.RELEASE: 1 or 0. */
  release(key: Bytes, claim: Int, opts: LedgerOptions = {}): Spec<number> {
    return keyed(["COUPON.RELEASE", key, int(claim)], [1], [["LEDGER", opts.ledger]], parseInteger);
  },
  /** COUPON.ALTER: change the settings now (restock, lower a limit); resolves `true`. */
  alter(key: Bytes, opts: AlterOptions): Spec<true> {
    return keyed(
      ["COUPON.ALTER", key],
      [1],
      [["LIMIT", opts.limit], ["PERUSER", opts.peruser], ["HOLD", opts.hold], ["LEDGER", opts.ledger]],
      parseOk,
    );
  },
  /** COUPON.RECLAIM: reclaim expired holds now, oldest first; how many. */
  reclaim(key: Bytes, opts: ReclaimOptions = {}): Spec<number> {
    return keyed(["COUPON.RECLAIM", key], [1], [["COUNT", opts.count], ["LEDGER", opts.ledger]], parseInteger);
  },
  /** COUPON.RESERVEALL: one hold in each campaign, all or none; routed by the first key. */
  reserveAll(keys: readonly Bytes[], user: Bytes, opts: ReserveAllOptions = {}): Spec<Cart> {
    const head: Bytes[] = ["COUPON.RESERVEALL", String(keys.length), ...keys, user];
    const call = keyed(head, keys.map((_, i) => 2 + i), [["HOLD", opts.hold], ["ID", opts.id]], parseCart);
    // QTY's values, one per key, then the ledger (a key).
    const units: Bytes[] = opts.qty === undefined ? [] : ["QTY", ...opts.qty.map(int)];
    return keyed([...call.args, ...units], [...call.keyIndexes], [["LEDGER", opts.ledger]], parseCart);
  },
  /** COUPON.INFO: limit, peruser, hold, confirmed, held, available, claims, expired, released, heldUnits, confirmedUnits. */
  campaignInfo(key: Bytes): Spec<CampaignInfo> {
    return spec(["COUPON.INFO", key], parseInfo, undefined, true);
  },
  /** COUPON.CLAIMS: live claims in claim order. */
  claims(key: Bytes, opts: ClaimsOptions = {}): Spec<Claim[]> {
    return spec(["COUPON.CLAIMS", key, ...options([["FROM", opts.from], ["COUNT", opts.count]])], parseClaims, undefined, true);
  },
};

export type Commands = typeof commands;
export type CommandName = keyof Commands;
/** What a method of command `K` resolves to. */
export type ResultOf<K extends CommandName> = ReturnType<Commands[K]> extends Spec<infer T> ? T : never;
