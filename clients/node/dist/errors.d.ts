/**
 * The server's errors as the package's: the error the client library
 * rejected with (ioredis's `ReplyError`, node-redis's `ErrorReply`) is
 * kept, so `instanceof` the library's class still holds, and is marked
 * with its kind, so `instanceof CampaignExists` (and `GuardError`) holds
 * too. Its message is the server's text without `ERR `, as the Python
 * package gives it through every client.
 */
/** A server error answering one of the guard's calls. */
export declare class GuardError extends Error {
    /** The kind this class stands for (its name). */
    static readonly kind: string;
    /**
     * An error made by this class (or a subclass), or a server error the
     * package marked with this kind (any kind, for `GuardError`).
     */
    static [Symbol.hasInstance](value: unknown): boolean;
}
/** COUPON.CREATE on a key that exists (`BUSYKEY`). */
export declare class CampaignExists extends GuardError {
    static readonly kind: string;
}
/** A campaign command on a missing key (`no such campaign`). */
export declare class NoSuchCampaign extends GuardError {
    static readonly kind: string;
}
/** A key of another type (`WRONGTYPE`). */
export declare class WrongType extends GuardError {
    static readonly kind: string;
}
/** `withLease` found no slot: `code` -1 (the user holds its PERUSER already) or -2 (every slot is taken). */
export declare class LeaseRefused extends Error {
    readonly key: string | Buffer;
    readonly code: number;
    constructor(key: string | Buffer, code: number);
}
/** `error`, a server error the client rejected with, marked as the package's (once). */
export declare function typed(error: Error): Error;
