/**
 * `redis-guard/fastify`: a Fastify plugin (4 and 5) limiting every request
 * of the instance it is registered on (an `onRequest` hook; it is not
 * encapsulated, as fastify-plugin's are not).
 *
 * ```ts
 * await app.register(rateLimit, { guard: guard(redis), limits: [{ maxBurst: 9, count: 10, period: 60 }] });
 * ```
 *
 * Keys, headers and options: see `Limiter` (web.ts). `onError: "raise"`
 * throws the error from the hook (Fastify's error handler answers it).
 */
import { type RateLimitOptions } from "./web";
export { TimeoutError, type LimitOptions, type OnError, type RateLimitOptions } from "./web";
/** A Fastify request, as far as the plugin reads it. */
export interface FastifyRequestLike {
    ip: string;
    headers: Record<string, string | string[] | undefined>;
}
/** A Fastify reply, as far as the plugin writes it. */
export interface FastifyReplyLike {
    header(name: string, value: string): unknown;
    code(status: number): unknown;
    send(body?: string): unknown;
}
/** A Fastify instance, as far as the plugin uses it. */
export interface FastifyLike {
    addHook(name: "onRequest", hook: (request: any, reply: any) => Promise<unknown>): unknown;
}
declare function rateLimit<Req extends FastifyRequestLike = FastifyRequestLike>(fastify: FastifyLike, options: RateLimitOptions<Req>): Promise<void>;
export { rateLimit };
export default rateLimit;
