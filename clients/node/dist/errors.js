"use strict";
/**
 * The server's errors as the package's: the error the client library
 * rejected with (ioredis's `ReplyError`, node-redis's `ErrorReply`) is
 * kept, so `instanceof` the library's class still holds, and is marked
 * with its kind, so `instanceof CampaignExists` (and `GuardError`) holds
 * too. Its message is the server's text without `ERR `, as the Python
 * package gives it through every client.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.LeaseRefused = exports.WrongType = exports.NoSuchCampaign = exports.CampaignExists = exports.GuardError = void 0;
exports.typed = typed;
const KIND = Symbol.for("redis-guard.error-kind");
/** A server error answering one of the guard's calls. */
class GuardError extends Error {
    /**
     * An error made by this class (or a subclass), or a server error the
     * package marked with this kind (any kind, for `GuardError`).
     */
    static [Symbol.hasInstance](value) {
        if (Function.prototype[Symbol.hasInstance].call(this, value))
            return true;
        const kind = value?.[KIND];
        return kind !== undefined && (this === GuardError || kind === this.kind);
    }
}
exports.GuardError = GuardError;
/** The kind this class stands for (its name). */
GuardError.kind = "GuardError";
/** COUPON.CREATE on a key that exists (`BUSYKEY`). */
class CampaignExists extends GuardError {
}
exports.CampaignExists = CampaignExists;
CampaignExists.kind = "CampaignExists";
/** A campaign command on a missing key (`no such campaign`). */
class NoSuchCampaign extends GuardError {
}
exports.NoSuchCampaign = NoSuchCampaign;
NoSuchCampaign.kind = "NoSuchCampaign";
/** A key of another type (`WRONGTYPE`). */
class WrongType extends GuardError {
}
exports.WrongType = WrongType;
WrongType.kind = "WrongType";
/** `withLease` found no slot: `code` -1 (the user holds its PERUSER already) or -2 (every slot is taken). */
class LeaseRefused extends Error {
    constructor(key, code) {
        super(`no slot in ${String(key)}: ${code === -1 ? "the user has all its slots" : "all slots are taken"}`);
        this.key = key;
        this.code = code;
        this.name = "LeaseRefused";
    }
}
exports.LeaseRefused = LeaseRefused;
function kindOf(text) {
    if (text.startsWith("BUSYKEY "))
        return CampaignExists.kind;
    if (text.startsWith("WRONGTYPE "))
        return WrongType.kind;
    if (text === "no such campaign")
        return NoSuchCampaign.kind;
    return GuardError.kind;
}
/** `error`, a server error the client rejected with, marked as the package's (once). */
function typed(error) {
    const marked = error;
    if (marked[KIND] !== undefined)
        return error;
    const text = error.message.replace(/^ERR /, "");
    marked[KIND] = kindOf(text);
    // Own properties: ioredis's errors read `name` from a getter on their class.
    Object.defineProperty(error, "message", { value: text, writable: true, configurable: true });
    Object.defineProperty(error, "name", { value: marked[KIND], writable: true, configurable: true });
    return error;
}
