"""A FastAPI dependency that rate limits the routes it guards (needs
``fastapi``; the rest of the package does not). The same judge, keys,
headers and options as ``redis_guard.asgi.RateLimitMiddleware``; ``key``
takes the ``fastapi.Request`` (default: the client's IP).

>>> limited = rate_limit(AsyncGuard(r), limits=[(9, 10, 60)])
>>> @app.get("/orders", dependencies=[Depends(limited)])
... async def orders() -> list[str]: ...

A refused request raises ``HTTPException`` 429 with ``Retry-After`` and
the RateLimit headers (503 with ``on_error="deny"`` when Redis cannot
judge it); an allowed one gets the headers on its response.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Optional, Sequence, Union

from fastapi import HTTPException, Request, Response

from .asgi import Limit, Limiter, OnError
from .guard import AsyncGuard, Guard


def _client_host(request: Request) -> str:
    return request.client.host if request.client else ""


def rate_limit(
    guard: Union[AsyncGuard, Guard],
    *,
    limits: Sequence[Limit],
    key: Optional[Callable[[Request], str]] = None,
    prefix: str = "rl",
    timeout: float = 1000,
    on_error: OnError = "allow",
    local_block: bool = False,
) -> Callable[[Request, Response], Awaitable[None]]:
    """A dependency (``Depends(rate_limit(...))``) judging each request."""
    limiter: Limiter[Request] = Limiter(
        guard, limits, key or _client_host,
        prefix=prefix, timeout=timeout, on_error=on_error, local_block=local_block,
    )

    async def dependency(request: Request, response: Response) -> None:
        verdict = await limiter.check(request)
        if not verdict.allowed:
            detail = "Too Many Requests" if verdict.status == 429 else "Service Unavailable"
            raise HTTPException(verdict.status, detail, headers=dict(verdict.headers))
        for name, value in verdict.headers:
            response.headers[name] = value

    return dependency
