/**
 * The server's errors as the package's: the error the client library
 * rejected with (ioredis's `ReplyError`, node-redis's `ErrorReply`) is
 * kept, so `instanceof` the library's class still holds, and is marked
 * with its kind, so `instanceof CampaignExists` (and `GuardError`) holds
 * too. Its message is the server's text without `ERR `, as the Python
 * package gives it through every client.
 */

const KIND = Symbol.for("redis-guard.error-kind");

/** A server error answering one of the guard's calls. */
export class GuardError extends Error {
  /** The kind this class stands for (its name). */
  static readonly kind: string = "GuardError";

  /**
   * An error made by this class (or a subclass), or a server error the
   * package marked with this kind (any kind, for `GuardError`).
   */
  static [Symbol.hasInstance](value: unknown): boolean {
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true;
    const kind = (value as { [KIND]?: string } | null | undefined)?.[KIND];
    return kind !== undefined && (this === GuardError || kind === this.kind);
  }
}

/** COUPON.CREATE on a key that exists (`BUSYKEY`). */
export class CampaignExists extends GuardError {
  static override readonly kind: string = "CampaignExists";
}

/** A campaign command on a missing key (`no such campaign`). */
export class NoSuchCampaign extends GuardError {
  static override readonly kind: string = "NoSuchCampaign";
}

/** A key of another type (`WRONGTYPE`). */
export class WrongType extends GuardError {
  static override readonly kind: string = "WrongType";
}

/** `withLease` found no slot: `code` -1 (the user holds its PERUSER already) or -2 (every slot is taken). */
export class LeaseRefused extends Error {
  constructor(
    readonly key: string | Buffer,
    readonly code: number,
  ) {
    super(`no slot in ${String(key)}: ${code === -1 ? "the user has all its slots" : "all slots are taken"}`);
    this.name = "LeaseRefused";
  }
}

function kindOf(text: string): string {
  if (text.startsWith("BUSYKEY ")) return CampaignExists.kind;
  if (text.startsWith("WRONGTYPE ")) return WrongType.kind;
  if (text === "no such campaign") return NoSuchCampaign.kind;
  return GuardError.kind;
}

/** `error`, a server error the client rejected with, marked as the package's (once). */
export function typed(error: Error): Error {
  const marked = error as Error & { [KIND]?: string };
  if (marked[KIND] !== undefined) return error;
  const text = error.message.replace(/^ERR /, "");
  marked[KIND] = kindOf(text);
  // Own properties: ioredis's errors read `name` from a getter on their class.
  Object.defineProperty(error, "message", { value: text, writable: true, configurable: true });
  Object.defineProperty(error, "name", { value: marked[KIND], writable: true, configurable: true });
  return error;
}
