"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.TimeoutError = void 0;
exports.rateLimit = rateLimit;
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
const web_1 = require("./web");
var web_2 = require("./web");
Object.defineProperty(exports, "TimeoutError", { enumerable: true, get: function () { return web_2.TimeoutError; } });
async function rateLimit(fastify, options) {
    const limiter = new web_1.Limiter(options, (request) => request.ip);
    fastify.addHook("onRequest", async (request, reply) => {
        const verdict = await limiter.check(request);
        for (const [name, value] of verdict.headers)
            reply.header(name, value);
        if (verdict.status === 200)
            return;
        reply.code(verdict.status);
        reply.header("content-type", "text/plain; charset=utf-8");
        reply.send((0, web_1.statusText)(verdict.status));
        return reply;
    });
}
// Not encapsulated: the hook applies to the instance registering it (what
// fastify-plugin marks, without depending on it).
Object.assign(rateLimit, { [Symbol.for("skip-override")]: true, [Symbol.for("fastify.display-name")]: "redis-guard" });
exports.default = rateLimit;
