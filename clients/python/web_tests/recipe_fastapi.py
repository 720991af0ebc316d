import os

import redis.asyncio
from fastapi import Depends, FastAPI, Request

from redis_guard import AsyncGuard
from redis_guard.fastapi import rate_limit

guard = AsyncGuard(redis.asyncio.Redis.from_url(os.environ.get("REDIS_URL", "redis://localhost:6379")))
# 10 requests a minute per API key, refused at once beyond; when Redis is
# down or slower than 200 ms, let the request through.
per_key = rate_limit(
    guard,
    limits=[(9, 10, 60)],
    key=lambda request: request.headers.get("x-api-key", ""),
    timeout=200,
    on_error="allow",
)
app = FastAPI()


@app.get("/orders", dependencies=[Depends(per_key)])
async def orders(request: Request) -> list[str]:
    return ["order-1"]
