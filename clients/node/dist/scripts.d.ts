import type { Spec } from "./commands";
export interface Script {
    readonly source: string;
    readonly sha: string;
    /** Its command takes `TZ zone`: the zone goes to the script as its rules (known once per command, not per call). */
    readonly zoned: boolean;
}
/** The declarations of `prelude` that `script` uses, as one text (see `usedDeclarations`). */
export declare function usedPrelude(prelude: string, script: string): string;
/**
 * What the server runs for `script`: the part of `prelude` it uses,
 * first; with a line `-- @prelude`, only the part that the lines above it
 * use goes first, the rest right after it (a call that returns above it
 * makes none of the rest's functions).
 */
export declare function assembled(prelude: string, script: string): string;
/** The script of command `name` (e.g. `MON.INCRCHECK`); throws when the package has none. */
export declare function scriptOf(name: string): Script;
/**
 * `spec` as `EVALSHA sha numkeys keys... argv...`, routed and parsed as the
 * command is. Runs on every call of the scripts backend: one pass over the
 * arguments into one array.
 */
export declare function evalsha(spec: Spec<unknown>, script: Script): Spec<unknown>;
/** `SCRIPT LOAD` of `script`, sent to the node that owns `key` (the one that will run it). */
export declare function scriptLoad(script: Script, key: Spec<unknown>["key"]): Spec<unknown>;
/** The server no longer has the script (a failover, a restart, SCRIPT FLUSH): the call did not run. */
export declare function isNoScript(reply: unknown): boolean;
/**
 * The server has no such command, and it is one of `specs`' own (the
 * module's): the module is not loaded, the calls did not run. (An
 * application's unknown command queued beside them says nothing of the
 * module.)
 */
export declare function namesModuleCommand(reply: unknown, specs: readonly Spec<unknown>[]): boolean;
