"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.clientAddress = exports.TimeoutError = void 0;
exports.rateLimit = rateLimit;
/**
 * `redis-guard/express`: rate limiting middleware for Express (4 and 5) or
 * any `(req, res, next)` stack on Node's http server.
 *
 * ```ts
 * app.use(rateLimit({ guard: guard(redis), limits: [{ maxBurst: 9, count: 10, period: 60 }] }));
 * ```
 *
 * Keys, headers and options: see `Limiter` (`redis-guard`'s web.ts). A
 * refused request is answered 429 here; `onError: "raise"` passes the
 * error to `next(error)`.
 */
const web_1 = require("./web");
var web_2 = require("./web");
Object.defineProperty(exports, "TimeoutError", { enumerable: true, get: function () { return web_2.TimeoutError; } });
/** The client's address: Express's `req.ip` (which honours `trust proxy`), else the socket's. */
const clientAddress = (req) => req.ip ?? req.socket?.remoteAddress ?? "";
exports.clientAddress = clientAddress;
function rateLimit(options) {
    const limiter = new web_1.Limiter(options, exports.clientAddress);
    return (req, res, next) => {
        limiter.check(req).then((verdict) => {
            for (const [name, value] of verdict.headers)
                res.setHeader(name, value);
            if (verdict.status === 200)
                return next();
            res.statusCode = verdict.status;
            res.setHeader("Content-Type", "text/plain; charset=utf-8");
            res.end((0, web_1.statusText)(verdict.status));
        }, next);
    };
}
exports.default = rateLimit;
