import { type Bytes, type CommandName, type Commands, type Int, type Reservation, type ResultOf } from "./commands";
export * from "./commands";
export { CampaignExists, GuardError, LeaseRefused, NoSuchCampaign, WrongType } from "./errors";
/** `withLease`'s options: the lease time (seconds, default 30) and the campaign's ledger. */
export interface LeaseOptions {
    hold?: Int;
    ledger?: Bytes;
}
/** An ioredis `Redis` or `Cluster` (5.x, 6.x), as far as redis-guard uses it. */
export interface IoredisClient {
    readonly isCluster: boolean;
    pipeline(...args: any[]): unknown;
    multi(...args: any[]): unknown;
    sendCommand(...args: any[]): unknown;
}
/** A node-redis client or cluster (4.x to 6.x), as far as redis-guard uses it. */
export interface NodeRedisClient {
    sendCommand(...args: any[]): unknown;
    multi(...args: any[]): unknown;
}
export type GuardClient = IoredisClient | NodeRedisClient;
export type Backend = "auto" | "module" | "scripts";
export interface GuardOptions {
    /**
     * `"module"`: the module's commands. `"scripts"`: each command's Lua
     * script (EVALSHA), for servers that cannot load the module (managed
     * services). `"auto"` (default): the module's commands until the server
     * answers that it has no such command, then scripts for good (one
     * warning). Nothing else is asked of the server to decide.
     */
    backend?: Backend;
}
type Method<K extends CommandName> = (...args: Parameters<Commands[K]>) => Promise<ResultOf<K>>;
type Queued<K extends CommandName, R extends unknown[]> = (...args: Parameters<Commands[K]>) => GuardPipeline<[...R, ResultOf<K>]>;
/** Every command as a method that resolves its parsed reply. */
export type GuardMethods = {
    [K in CommandName]: Method<K>;
};
/** Every command as a method that queues it; the result type grows per call. */
export type PipelineMethods<R extends unknown[]> = {
    [K in CommandName]: Queued<K, R>;
};
export interface PipelineOptions {
    /** MULTI/EXEC around the queued commands (default false: a plain pipeline). */
    transaction?: boolean;
}
export interface Guard extends GuardMethods {
}
/** The commands over one client. Make it with `guard(client)`. */
export declare class Guard {
    #private;
    constructor(client: GuardClient, options?: GuardOptions);
    /** Queues commands; `exec()` sends them at once and resolves their parsed results in order. */
    pipeline(options?: PipelineOptions): GuardPipeline<[]>;
    /**
     * Releases what the guard opened itself: nothing (its calls use the
     * client's connections), so the client stays the application's to quit.
     * Here for the symmetry with the Python package's `close()`.
     */
    quit(): Promise<void>;
    /**
     * Holds a slot of the campaign `key` while `work` runs: reserves with a
     * fresh request id, renews every `hold / 3` seconds, releases when
     * `work` settles (also when it throws), and resolves what it resolved.
     * Rejects with `LeaseRefused` (without running `work`) when there is no
     * slot.
     */
    withLease<T>(key: Bytes, user: Bytes, opts: LeaseOptions, work: (lease: Reservation) => Promise<T>): Promise<T>;
}
export interface GuardPipeline<R extends unknown[]> extends PipelineMethods<R> {
}
/**
 * Queued commands. In a cluster they go to one node (the first key's):
 * give their keys one hash tag. `exec()` rejects with the first command's
 * error (the client library's own) when any command failed.
 */
export declare class GuardPipeline<R extends unknown[] = []> {
    #private;
    /** How many commands are queued. */
    get length(): number;
    /**
     * Queues one of the application's own commands (`SET`, `XADD`...), sent
     * as it is on either backend; its reply is its result, unparsed. Its
     * first argument after the name is taken as its key (routing, ioredis's
     * `keyPrefix`). In a transaction it shares the MULTI (in a cluster, the
     * slot of the transaction's first key: give the keys one hash tag).
     */
    call(...args: Bytes[]): GuardPipeline<[...R, unknown]>;
    exec(): Promise<R>;
}
/** The module's commands over an ioredis or node-redis client (standalone or cluster). */
export declare function guard(client: GuardClient, options?: GuardOptions): Guard;
export default guard;
