"use strict";
/**
 * One definition per command: the arguments it sends, the key that routes
 * it and the parser of its reply. Every client adapter and every pipeline
 * uses these, so a command is written down once.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.commands = exports.SOLD_OUT = exports.ALREADY_WON = void 0;
exports.parseCheck = parseCheck;
exports.parseInteger = parseInteger;
exports.parseThrottle = parseThrottle;
exports.parseThrottleAll = parseThrottleAll;
exports.parseConfirmation = parseConfirmation;
exports.parseOk = parseOk;
exports.parseReservation = parseReservation;
exports.parseCart = parseCart;
exports.parseInfo = parseInfo;
exports.parseClaims = parseClaims;
const errors_1 = require("./errors");
/** COUPON.ISSUE / COUPON.RESERVE: the user already has their places. */
exports.ALREADY_WON = -1;
/** COUPON.ISSUE / COUPON.RESERVE: no place left. */
exports.SOLD_OUT = -2;
function int(value) {
    return typeof value === "bigint" ? value.toString() : String(value);
}
function num(value) {
    if (typeof value === "number")
        return value;
    if (typeof value === "bigint" || typeof value === "string")
        return Number(value);
    if (Buffer.isBuffer(value))
        return Number(value.toString());
    throw new TypeError(`redis-guard: expected an integer reply, got ${describe(value)}`);
}
function str(value) {
    if (typeof value === "string")
        return value;
    if (Buffer.isBuffer(value))
        return value.toString();
    if (typeof value === "number" || typeof value === "bigint")
        return String(value);
    throw new TypeError(`redis-guard: expected a string reply, got ${describe(value)}`);
}
function list(value, length) {
    if (!Array.isArray(value) || (length !== undefined && value.length !== length)) {
        throw new TypeError(`redis-guard: expected an array reply${length ? ` of ${length}` : ""}, got ${describe(value)}`);
    }
    return value;
}
function describe(value) {
    try {
        return JSON.stringify(value) ?? String(value);
    }
    catch {
        return String(value);
    }
}
/** `[option, value]` words for the options that were given, in order. */
function windowWord(window) {
    return typeof window === "string" ? window : int(window);
}
function options(pairs) {
    const words = [];
    for (const [name, value] of pairs) {
        if (value === undefined)
            continue;
        words.push(name, typeof value === "number" || typeof value === "bigint" ? int(value) : value);
    }
    return words;
}
/**
 * A command with its keys at `keyIndexes` (the first routes it), then the
 * options that were given; an option of `KEY_OPTIONS` names a key too.
 */
function keyed(head, keyIndexes, pairs, parse, readonly = false) {
    const args = [...head];
    const keys = [...keyIndexes];
    for (const [name, value] of pairs) {
        if (value === undefined)
            continue;
        if (KEY_OPTIONS.has(name))
            keys.push(args.length + 1);
        args.push(...options([[name, value]]));
    }
    return { args, key: args[keys[0]], keyIndexes: keys, readonly, parse };
}
const KEY_OPTIONS = new Set(["ALERT", "LEDGER"]);
function thresholdWords(thresholds) {
    return (Array.isArray(thresholds) ? thresholds : [thresholds]).map(int);
}
/**
 * A command whose key is `args[1]`, and for CL.THROTTLEALL every 4th from
 * `args[2]`; an `ALERT stream` option (at or after `optionsFrom`) adds one.
 */
function spec(args, parse, optionsFrom, readonly = false) {
    const keyIndexes = [1];
    if (optionsFrom !== undefined) {
        const alert = args.indexOf("ALERT", optionsFrom);
        if (alert > 0 && alert + 1 < args.length)
            keyIndexes.push(alert + 1);
    }
    return { args, key: args[1], keyIndexes, readonly, parse };
}
function parseCheck(reply) {
    const [current, level] = list(reply, 2);
    return { current: num(current), level: num(level) };
}
function parseInteger(reply) {
    return num(reply);
}
function parseThrottle(reply) {
    const [limited, limit, remaining, retryAfter, resetAfter] = list(reply, 5);
    return {
        limited: num(limited) === 1,
        limit: num(limit),
        remaining: num(remaining),
        retryAfter: num(retryAfter),
        resetAfter: num(resetAfter),
    };
}
function parseThrottleAll(reply) {
    const [limited, retryAfter, ...results] = list(reply);
    return { limited: num(limited) === 1, retryAfter: num(retryAfter), results: results.map(parseThrottle) };
}
const CONFIRMATIONS = { "1": "confirmed", "0": "already", "-2": "over_limit", "-3": "no_claim" };
function parseConfirmation(reply) {
    const answer = CONFIRMATIONS[String(num(reply))];
    if (answer === undefined)
        throw new TypeError(`redis-guard: expected a COUPON.CONFIRM reply, got ${describe(reply)}`);
    return answer;
}
/** `create`'s `existOk`: the key exists, nothing changed. */
function existing(error) {
    if (error instanceof errors_1.CampaignExists)
        return false;
    throw error;
}
function parseOk(reply) {
    if (str(reply) !== "OK")
        throw new TypeError(`redis-guard: expected OK, got ${describe(reply)}`);
    return true;
}
function parseReservation(reply) {
    const [claim, expiresAtMs] = list(reply, 2);
    return { claim: num(claim), expiresAtMs: num(expiresAtMs) };
}
function parseCart(reply) {
    const values = list(reply).map(num);
    if (values.length < 2 || values.length % 2 !== 0) {
        throw new TypeError(`redis-guard: expected a COUPON.RESERVEALL reply, got ${describe(reply)}`);
    }
    if (values[0] < 0)
        return { reserved: false, reservations: [], refused: values[0], at: values[1] };
    const reservations = [];
    for (let i = 0; i < values.length; i += 2)
        reservations.push({ claim: values[i], expiresAtMs: values[i + 1] });
    return { reserved: true, reservations, refused: 0, at: null };
}
/** A flat field/value array (RESP2) or a map (RESP3: object or Map). */
const INFO_FIELDS = ["limit", "peruser", "hold", "confirmed", "held", "available", "claims", "expired", "released"];
/** INFO's fields of two words, by their camelCase names. */
const UNIT_FIELDS = [["heldUnits", "held_units", "held"], ["confirmedUnits", "confirmed_units", "confirmed"]];
function parseInfo(reply) {
    const info = {};
    if (reply instanceof Map) {
        for (const [field, value] of reply)
            info[str(field)] = num(value);
    }
    else if (Array.isArray(reply)) {
        for (let i = 0; i + 1 < reply.length; i += 2)
            info[str(reply[i])] = num(reply[i + 1]);
    }
    else if (reply !== null && typeof reply === "object" && !Buffer.isBuffer(reply)) {
        for (const [field, value] of Object.entries(reply))
            info[field] = num(value);
    }
    else {
        throw new TypeError(`redis-guard: expected a map reply, got ${describe(reply)}`);
    }
    // Only the fields of CampaignInfo: one a newer module adds is left out.
    const fields = {};
    for (const field of INFO_FIELDS) {
        if (info[field] === undefined)
            throw new TypeError(`redis-guard: COUPON.INFO without ${field}: ${describe(reply)}`);
        fields[field] = info[field];
    }
    // A module older than units has none: a unit a claim.
    for (const [name, field, claims] of UNIT_FIELDS)
        fields[name] = info[field] ?? info[claims];
    return fields;
}
function parseClaims(reply) {
    return list(reply).map((entry) => {
        // A module older than units sends 5 (a unit each).
        const fields = list(entry);
        if (fields.length !== 5 && fields.length !== 6)
            list(entry, 6);
        const [claim, user, state, expiresAtMs, requestId, units] = fields;
        return {
            claim: num(claim),
            user: str(user),
            state: str(state),
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
exports.commands = {
    /** MON.INCRCHECK: add to a fixed-window counter, report the threshold crossed. */
    incrcheck(key, increment, window, thresholds, opts = {}) {
        return spec([
            "MON.INCRCHECK", key, int(increment), windowWord(window), ...thresholdWords(thresholds),
            ...options([["TZ", opts.tz], ["ALERT", opts.alert], ["MAXLEN", opts.maxlen]]),
        ], parseCheck, 4);
    },
    /** MON.SLIDECHECK: the same over a sliding window. */
    slidecheck(key, increment, window, thresholds, opts = {}) {
        return spec([
            "MON.SLIDECHECK", key, int(increment), int(window), ...thresholdWords(thresholds),
            ...options([["BUCKETS", opts.buckets], ["ALERT", opts.alert], ["MAXLEN", opts.maxlen]]),
        ], parseCheck, 4);
    },
    /** MON.DISTINCT: distinct members seen in the window. */
    distinct(key, member, window, thresholds, opts = {}) {
        return spec(["MON.DISTINCT", key, member, int(window), ...thresholdWords(thresholds), ...options([["ALERT", opts.alert], ["MAXLEN", opts.maxlen]])], parseCheck, 4);
    },
    /** MON.DECRCLAMP: subtract, never below 0; the new value. */
    decrclamp(key, amount, opts = {}) {
        return spec(["MON.DECRCLAMP", key, int(amount), ...options([["ALERT", opts.alert], ["MAXLEN", opts.maxlen]])], parseInteger, 3);
    },
    /** COUPON.ISSUE: rank >= 1, ALREADY_WON or SOLD_OUT. */
    issue(key, user, limit, opts = {}) {
        return keyed(["COUPON.ISSUE", key, user, int(limit)], [1], [["LEDGER", opts.ledger]], parseInteger);
    },
    /** COUPON.REVOKE: places taken back. */
    revoke(key, user, opts = {}) {
        return keyed(["COUPON.REVOKE", key, user], [1], [["LEDGER", opts.ledger]], parseInteger);
    },
    /**
     * CL.THROTTLE: a GCRA rate limit. The fifth argument is the options
     * (`quantity`, and `block`: seconds a refused request blocks the
     * limiter), or the quantity alone as before.
     */
    throttle(key, maxBurst, count, period, opts = {}) {
        const { quantity, block } = typeof opts === "object" ? opts : { quantity: opts, block: undefined };
        const args = ["CL.THROTTLE", key, int(maxBurst), int(count), int(period)];
        if (quantity !== undefined)
            args.push(int(quantity));
        args.push(...options([["BLOCK", block]]));
        return spec(args, parseThrottle);
    },
    /** CL.THROTTLEALL: several limits, all or nothing; routed by the first limiter's key. */
    throttleAll(limits, opts = {}) {
        const args = ["CL.THROTTLEALL", String(limits.length)];
        for (const [key, maxBurst, count, period] of limits)
            args.push(key, int(maxBurst), int(count), int(period));
        args.push(...options([["QUANTITY", opts.quantity], ["BLOCK", opts.block]]));
        return { args, key: limits[0]?.[0], keyIndexes: limits.map((_, i) => 2 + 4 * i), readonly: false, parse: parseThrottleAll };
    },
    /** CL.REFUND: gives `quantity` back to a limiter (never above its burst); its state after. */
    refund(key, maxBurst, count, period, quantity) {
        return spec(["CL.REFUND", key, int(maxBurst), int(count), int(period), int(quantity)], parseThrottle);
    },
    /** Deletes a limiter's key (`DEL`, on either backend): full again. 1 when there was one, else 0, as DEL answers. */
    reset(key) {
        return { args: ["DEL", key], key, keyIndexes: [1], readonly: false, parse: parseInteger, raw: true };
    },
    /**
     * CL.QUOTA: at most `limit` units per window (seconds, or a calendar
     * period of the zone `tz`); what does not fit is refused and takes nothing.
     */
    quota(key, limit, window, opts = {}) {
        const args = ["CL.QUOTA", key, int(limit), windowWord(window)];
        if (opts.quantity !== undefined)
            args.push(int(opts.quantity));
        args.push(...options([["TZ", opts.tz]]));
        return spec(args, parseThrottle);
    },
    /**
     * COUPON.CREATE: a campaign (with `ledger`, one that appends every change
     * of a claim to it); resolves `true`, or `false` with `existOk` when the
     * key exists (else `CampaignExists`).
     */
    create(key, limit, opts = {}) {
        const call = keyed(["COUPON.CREATE", key, int(limit)], [1], [["PERUSER", opts.peruser], ["HOLD", opts.hold], ["LEDGER", opts.ledger], ["MAXLEN", opts.maxlen]], parseOk);
        return opts.existOk ? { ...call, onError: existing } : call;
    },
    /** COUPON.RESERVE: hold a place (`qty` units of it). */
    reserve(key, user, opts = {}) {
        return keyed(["COUPON.RESERVE", key, user], [1], [["HOLD", opts.hold], ["ID", opts.id], ["QTY", opts.qty], ["LEDGER", opts.ledger]], parseReservation);
    },
    /** COUPON.CONFIRM (`qty` of the hold's units): "confirmed", "already", "over_limit" (released: refund) or "no_claim". */
    confirm(key, claim, opts = {}) {
        return keyed(["COUPON.CONFIRM", key, int(claim)], [1], [["QTY", opts.qty], ["LEDGER", opts.ledger]], parseConfirmation);
    },
    /** COUPON.RENEW: a live hold ends `hold` from now; its new expiresAtMs, 0 when confirmed, -3 when there is no live claim. */
    renew(key, claim, opts = {}) {
        return keyed(["COUPON.RENEW", key, int(claim)], [1], [["HOLD", opts.hold], ["LEDGER", opts.ledger]], parseInteger);
    },
    /** COUPON.RELEASE: 1 or 0. */
    release(key, claim, opts = {}) {
        return keyed(["COUPON.RELEASE", key, int(claim)], [1], [["LEDGER", opts.ledger]], parseInteger);
    },
    /** COUPON.ALTER: change the settings now (restock, lower a limit); resolves `true`. */
    alter(key, opts) {
        return keyed(["COUPON.ALTER", key], [1], [["LIMIT", opts.limit], ["PERUSER", opts.peruser], ["HOLD", opts.hold], ["LEDGER", opts.ledger]], parseOk);
    },
    /** COUPON.RECLAIM: reclaim expired holds now, oldest first; how many. */
    reclaim(key, opts = {}) {
        return keyed(["COUPON.RECLAIM", key], [1], [["COUNT", opts.count], ["LEDGER", opts.ledger]], parseInteger);
    },
    /** COUPON.RESERVEALL: one hold in each campaign, all or none; routed by the first key. */
    reserveAll(keys, user, opts = {}) {
        const head = ["COUPON.RESERVEALL", String(keys.length), ...keys, user];
        const call = keyed(head, keys.map((_, i) => 2 + i), [["HOLD", opts.hold], ["ID", opts.id]], parseCart);
        // QTY's values, one per key, then the ledger (a key).
        const units = opts.qty === undefined ? [] : ["QTY", ...opts.qty.map(int)];
        return keyed([...call.args, ...units], [...call.keyIndexes], [["LEDGER", opts.ledger]], parseCart);
    },
    /** COUPON.INFO: limit, peruser, hold, confirmed, held, available, claims, expired, released, heldUnits, confirmedUnits. */
    campaignInfo(key) {
        return spec(["COUPON.INFO", key], parseInfo, undefined, true);
    },
    /** COUPON.CLAIMS: live claims in claim order. */
    claims(key, opts = {}) {
        return spec(["COUPON.CLAIMS", key, ...options([["FROM", opts.from], ["COUNT", opts.count]])], parseClaims, undefined, true);
    },
};
