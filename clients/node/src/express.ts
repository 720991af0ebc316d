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
import { Limiter, statusText, type RateLimitOptions } from "./web";

export { TimeoutError, type LimitOptions, type OnError, type RateLimitOptions } from "./web";

/** The request, as far as the middleware reads it. */
export interface RequestLike {
  ip?: string;
  socket?: { remoteAddress?: string };
  headers: Record<string, string | string[] | undefined>;
}

/** Node's `ServerResponse`, as far as the middleware writes it. */
export interface ResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

export type Middleware<Req> = (req: Req, res: ResponseLike, next: (error?: unknown) => void) => void;

/** The client's address: Express's `req.ip` (which honours `trust proxy`), else the socket's. */
export const clientAddress = (req: RequestLike): string => req.ip ?? req.socket?.remoteAddress ?? "";

export function rateLimit<Req extends RequestLike = RequestLike>(options: RateLimitOptions<Req>): Middleware<Req> {
  const limiter = new Limiter<Req>(options, clientAddress);
  return (req, res, next) => {
    limiter.check(req).then((verdict) => {
      for (const [name, value] of verdict.headers) res.setHeader(name, value);
      if (verdict.status === 200) return next();
      res.statusCode = verdict.status;
      res.setHeader("Content-Type", "text/plain; charset=utf-8");
      res.end(statusText(verdict.status));
    }, next);
  };
}

export default rateLimit;
