import express from "express";
import Redis from "ioredis";
import { guard } from "redis-guard";
import { rateLimit } from "redis-guard/express";

export const redis = new Redis(process.env.REDIS_URL ?? "redis://localhost:6379");
export const app = express();
// 10 requests a minute per API key, refused at once beyond; when Redis is
// down or slower than 200 ms, let the request through.
app.use(
  rateLimit({
    guard: guard(redis),
    limits: [{ maxBurst: 9, count: 10, period: 60 }],
    key: (req) => String(req.headers["x-api-key"] ?? ""),
    timeout: 200,
    onError: "allow",
  }),
);
app.get("/orders", (req, res) => {
  res.json(["order-1"]);
});
