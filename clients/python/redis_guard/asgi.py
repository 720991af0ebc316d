"""Rate limiting for web applications: ``RateLimitMiddleware`` for any
ASGI application (FastAPI, Starlette, Quart, a bare ASGI callable), and
``Limiter``, the judge it shares with ``redis_guard.fastapi``.

Each request is judged by one call: ``throttle`` (CL.THROTTLE) for one
limit, ``throttle_all`` (CL.THROTTLEALL, all or nothing) for several. The
key of limit ``i`` is ``f"{prefix}:{i}:{key}"``, so an application can
read or delete it. Every judged response carries the IETF RateLimit
headers in the form express-rate-limit calls draft-8, one list item per
limit, named ``"{q}-in-{w}s"``:

    RateLimit-Policy: "3-in-60s"; q=3; w=60; pk=:<partition key>:
    RateLimit: "3-in-60s"; r=2; t=20

``q`` is the limit's burst (``max_burst + 1``), ``w`` the seconds a full
burst takes to come back (``period * q / count``, rounded up), ``r`` the
requests left now, ``t`` the seconds until the limit is full again
(``reset_after``), and ``pk`` express-rate-limit's partition key (the
base64 of the first 12 hex digits of the key's SHA-256). A refused request
gets 429 with ``Retry-After`` (seconds).

Redis down or slower than ``timeout`` (ms, default 1000): ``on_error``
decides. ``"allow"`` (default) passes the request on without the headers,
``"deny"`` answers 503, ``"raise"`` raises the error (``TimeoutError`` for
a slow server) to the application's server. ``local_block=True`` refuses
a refused key in this process until its ``retry_after`` passes, without a
call to Redis.

The guard is an ``AsyncGuard``; a sync ``Guard`` also works, each call
then running in a worker thread (``asyncio.to_thread``): the answer still
comes within ``timeout``, but a call to a hung server holds its thread
until the client's own socket timeout.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import math
import time
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, Generic, List, Literal, MutableMapping, Optional, Sequence, Tuple, TypeVar, Union

from .guard import AsyncGuard, Guard
from .results import Throttle, ThrottleAll

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: One limit: ``(max_burst, count, period)``, as CL.THROTTLE takes them.
Limit = Tuple[int, int, int]
#: What a request gets when Redis is down or slow.
OnError = Literal["allow", "deny", "raise"]

R = TypeVar("R")

#: Status of a request refused because Redis could not judge it (``"deny"``).
UNAVAILABLE = 503
#: Status of a request a limit refused.
TOO_MANY = 429


@dataclass(frozen=True)
class Verdict:
    """What a request gets: ``status`` 200 (go on), 429 (limited) or 503
    (Redis could not judge it, ``on_error="deny"``), and the headers to add
    to its response (lower-case names)."""

    status: int
    headers: List[Tuple[str, str]] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return self.status == 200


def partition_key(key: str) -> str:
    """express-rate-limit's ``pk``: base64 of the first 12 hex digits of
    the key's SHA-256."""
    return base64.b64encode(hashlib.sha256(key.encode()).hexdigest()[:12].encode()).decode()


def _policy(limit: Limit) -> Tuple[str, int, int]:
    """A limit's name, quota ``q`` and window ``w`` (seconds)."""
    max_burst, count, period = limit
    quota = max_burst + 1
    window = math.ceil(period * quota / count)
    return f"{quota}-in-{window}s", quota, window


def client_host(scope: Scope) -> str:
    """The client's IP address as the ASGI server gives it ("" when none)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


@dataclass
class _Block:
    """A key refused in this process: until when (monotonic seconds), and
    each limit's reply with the instant it was given."""

    until: float
    at: float
    results: List[Throttle]


class Limiter(Generic[R]):
    """Judges requests for one set of limits; ``key`` maps a request
    (whatever the framework hands over: an ASGI scope, a FastAPI
    ``Request``) to the string it is limited by."""

    def __init__(
        self,
        guard: Union[AsyncGuard, Guard],
        limits: Sequence[Limit],
        key: Callable[[R], str],
        *,
        prefix: str = "rl",
        timeout: float = 1000,
        on_error: OnError = "allow",
        local_block: bool = False,
    ) -> None:
        if not limits:
            raise ValueError("limits: at least one (max_burst, count, period)")
        if on_error not in ("allow", "deny", "raise"):
            raise ValueError(f'on_error must be "allow", "deny" or "raise", not {on_error!r}')
        if timeout <= 0:
            raise ValueError("timeout: a positive number of milliseconds")
        self.guard = guard
        self.limits = [(int(b), int(c), int(p)) for b, c, p in limits]
        self.key = key
        self.prefix = prefix
        self.timeout = timeout
        self.on_error = on_error
        self.local_block = local_block
        self._policies = [_policy(limit) for limit in self.limits]
        self._blocked: Dict[str, _Block] = {}

    def keys(self, key: str) -> List[str]:
        """The Redis key of each limit for ``key``."""
        return [f"{self.prefix}:{i}:{key}" for i in range(len(self.limits))]

    async def check(self, request: R) -> Verdict:
        """Judges one request: one call to Redis (none for a key blocked
        in this process), answered within ``timeout``."""
        key = self.key(request)
        blocked = self._blocked.get(key)
        now = time.monotonic()
        if blocked is not None:
            if now < blocked.until:
                return self._refused(key, blocked.results, now - blocked.at, blocked.until - now)
            del self._blocked[key]
        try:
            limited, retry_after, results = await asyncio.wait_for(self._judge(key), self.timeout / 1000)
        except Exception:
            if self.on_error == "raise":
                raise
            return Verdict(200 if self.on_error == "allow" else UNAVAILABLE)
        if not limited:
            return Verdict(200, self._headers(key, results, 0))
        if self.local_block and retry_after > 0:
            self._remember(key, _Block(now + retry_after, now, results))
        return self._refused(key, results, 0, retry_after)

    def _refused(self, key: str, results: List[Throttle], elapsed: float, retry_after: float) -> Verdict:
        headers = self._headers(key, results, elapsed)
        return Verdict(TOO_MANY, headers + [("retry-after", str(max(0, math.ceil(retry_after))))])

    async def _judge(self, key: str) -> Tuple[bool, int, List[Throttle]]:
        keys = self.keys(key)
        guard: Any = self.guard
        call: Callable[[], Any]
        if len(keys) == 1:
            call = functools.partial(guard.throttle, keys[0], *self.limits[0])
        else:
            call = functools.partial(guard.throttle_all, [(k, *limit) for k, limit in zip(keys, self.limits)])
        reply: Union[Throttle, ThrottleAll] = await (asyncio.to_thread(call) if isinstance(guard, Guard) else call())
        if isinstance(reply, Throttle):
            return reply.limited, reply.retry_after, [reply]
        return reply.limited, reply.retry_after, reply.results

    def _headers(self, key: str, results: List[Throttle], elapsed: float) -> List[Tuple[str, str]]:
        """RateLimit-Policy and RateLimit, one item per limit; ``elapsed``
        seconds since ``results`` were given (a local block's)."""
        pk = partition_key(key)
        policies, states = [], []
        for (name, quota, window), result in zip(self._policies, results):
            reset = max(0, math.ceil(result.reset_after - elapsed)) if elapsed else result.reset_after
            remaining = 0 if elapsed else result.remaining
            policies.append(f'"{name}"; q={quota}; w={window}; pk=:{pk}:')
            states.append(f'"{name}"; r={remaining}; t={reset}')
        return [("ratelimit-policy", ", ".join(policies)), ("ratelimit", ", ".join(states))]

    def _remember(self, key: str, block: _Block) -> None:
        """Keeps ``block``; past 10,000 keys, the expired ones go first."""
        if len(self._blocked) >= 10_000:
            now = time.monotonic()
            for stale in [k for k, b in self._blocked.items() if b.until <= now]:
                del self._blocked[stale]
        self._blocked[key] = block


class RateLimitMiddleware:
    """ASGI middleware limiting every HTTP request (websockets and
    lifespan pass through untouched).

    >>> app.add_middleware(RateLimitMiddleware, guard=AsyncGuard(r), limits=[(9, 10, 60)])

    ``key`` takes the request's ASGI scope (default: the client's IP).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        guard: Union[AsyncGuard, Guard],
        limits: Sequence[Limit],
        key: Optional[Callable[[Scope], str]] = None,
        prefix: str = "rl",
        timeout: float = 1000,
        on_error: OnError = "allow",
        local_block: bool = False,
    ) -> None:
        self.app = app
        self.limiter: Limiter[Scope] = Limiter(
            guard, limits, key or client_host,
            prefix=prefix, timeout=timeout, on_error=on_error, local_block=local_block,
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        verdict = await self.limiter.check(scope)
        headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in verdict.headers]
        if not verdict.allowed:
            body = b"Too Many Requests" if verdict.status == TOO_MANY else b"Service Unavailable"
            headers += [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
            await send({"type": "http.response.start", "status": verdict.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start" and headers:
                message = {**message, "headers": [*message.get("headers", []), *headers]}
            await send(message)

        await self.app(scope, receive, send_with_headers)
