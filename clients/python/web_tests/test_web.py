"""redis_guard.asgi and redis_guard.fastapi against real servers started by
tests/web.rs: GUARD_STANDALONE (with the module), GUARD_PLAIN (without:
the package runs its scripts), GUARD_DOWN (a server that was stopped).
A server that accepts connections and never answers is made here.

Expected header values are worked out here from SPEC's GCRA: a limit
``(max_burst, count, period)`` lets ``q = max_burst + 1`` requests through
at once, each taking ``T = period / count`` seconds of the burst back:
after the i-th request of a burst ``r = q - i`` and ``t = ceil(i * T)``;
the refused one gets ``r = 0``, ``t = ceil(q * T)`` and ``Retry-After =
ceil(T)`` (the times hold while the burst takes well under a second).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import math
import os
import time
import uuid
from typing import Any, Dict, List, Tuple

import httpx
import pytest
import redis
import redis.asyncio
from fastapi import Depends, FastAPI

from redis_guard import AsyncGuard, Guard
from redis_guard.asgi import Limit, RateLimitMiddleware
from redis_guard.fastapi import rate_limit

SERVERS = {"module": "GUARD_STANDALONE", "scripts": "GUARD_PLAIN"}
BURST: Limit = (2, 3, 60)  # q 3, T 20 s
WIDE: Limit = (9, 10, 60)  # q 10, T 6 s


def address(variable: str) -> Tuple[str, int]:
    value = os.environ.get(variable)
    if not value:
        pytest.fail(f"{variable} is not set: run these tests through `cargo test --test web`")
    host, port = value.rsplit(":", 1)
    return host, int(port)


def admin(variable: str) -> redis.Redis:
    host, port = address(variable)
    return redis.Redis(host=host, port=port, decode_responses=True)


def async_guard(variable: str) -> AsyncGuard:
    host, port = address(variable)
    return AsyncGuard(redis.asyncio.Redis(host=host, port=port))


def policy(limit: Limit) -> Tuple[str, int, int]:
    max_burst, count, period = limit
    q = max_burst + 1
    w = math.ceil(period * q / count)
    return f"{q}-in-{w}s", q, w


def pk(key: str) -> str:
    return base64.b64encode(hashlib.sha256(key.encode()).hexdigest()[:12].encode()).decode()


def headers_after(limits: List[Limit], key: str, states: List[Tuple[int, int]]) -> Dict[str, str]:
    """The RateLimit headers for ``states`` (r, t) of ``limits``."""
    names = [policy(limit) for limit in limits]
    return {
        "ratelimit-policy": ", ".join(f'"{n}"; q={q}; w={w}; pk=:{pk(key)}:' for n, q, w in names),
        "ratelimit": ", ".join(f'"{n}"; r={r}; t={t}' for (n, _, _), (r, t) in zip(names, states)),
    }


def gcra(limit: Limit, i: int) -> Tuple[int, int]:
    """(r, t) after the i-th request of a burst on a fresh key (i <= q)."""
    max_burst, count, period = limit
    return max_burst + 1 - i, math.ceil(i * period / count)


def refused(limit: Limit) -> Tuple[int, int]:
    max_burst, count, period = limit
    return 0, math.ceil((max_burst + 1) * period / count)


def ours(response: httpx.Response) -> Dict[str, str]:
    return {name: response.headers[name] for name in ("ratelimit-policy", "ratelimit") if name in response.headers}


def hello_app() -> FastAPI:
    app = FastAPI()

    @app.get("/")
    async def hello() -> Dict[str, str]:
        return {"hello": "world"}

    return app


def client(app: Any, ip: str = "127.0.0.1") -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=(ip, 4321)), base_url="http://test")


def fresh_ip() -> str:
    n = uuid.uuid4().int
    return f"10.{n % 250}.{(n >> 8) % 250}.{(n >> 16) % 250 + 1}"


def guard_calls(con: redis.Redis) -> int:
    """Calls of the guard's commands so far, the module's or their scripts'."""
    stats: Dict[str, Dict[str, int]] = con.info("commandstats")
    names = ("cmdstat_cl.throttle", "cmdstat_cl.throttleall", "cmdstat_evalsha", "cmdstat_eval")
    return sum(stats.get(name, {}).get("calls", 0) for name in names)


@pytest.mark.parametrize("backend", SERVERS)
def test_middleware_allows_the_burst_then_429_with_headers(backend: str) -> None:
    variable = SERVERS[backend]
    ip = fresh_ip()
    app = hello_app()
    app.add_middleware(RateLimitMiddleware, guard=async_guard(variable), limits=[BURST])

    async def main() -> None:
        async with client(app, ip) as http:
            for i in (1, 2, 3):
                response = await http.get("/")
                assert response.status_code == 200, response.text
                assert response.json() == {"hello": "world"}
                assert ours(response) == headers_after([BURST], ip, [gcra(BURST, i)]), i
                assert "retry-after" not in response.headers
            response = await http.get("/")
            assert response.status_code == 429
            assert response.headers["retry-after"] == "20"
            assert ours(response) == headers_after([BURST], ip, [refused(BURST)])

    asyncio.run(main())
    ttl = admin(variable).pttl(f"rl:0:{ip}")
    assert 59_000 < ttl <= 60_001, ttl  # rounded up to the ms, as above


@pytest.mark.parametrize("backend", SERVERS)
def test_dependency_several_limits_all_or_nothing_custom_key_and_prefix(backend: str) -> None:
    variable = SERVERS[backend]
    con = admin(variable)
    user = f"user-{uuid.uuid4().hex[:8]}"
    limits = [BURST, WIDE]
    limited = rate_limit(async_guard(variable), limits=limits, key=lambda request: request.headers["x-user"], prefix="api")
    app = FastAPI()

    @app.get("/orders", dependencies=[Depends(limited)])
    async def orders() -> List[str]:
        return ["one"]

    async def main() -> None:
        async with client(app) as http:
            for i in (1, 2, 3):
                response = await http.get("/orders", headers={"x-user": user})
                assert response.status_code == 200
                assert ours(response) == headers_after(limits, user, [gcra(BURST, i), gcra(WIDE, i)])
            before = [con.get(f"api:{i}:{user}") for i in (0, 1)]
            response = await http.get("/orders", headers={"x-user": user})
            assert response.status_code == 429
            assert response.headers["retry-after"] == "20"
            # The wide limit is told unconsumed: still 7 left, 18 s to full.
            assert ours(response) == headers_after(limits, user, [refused(BURST), gcra(WIDE, 3)])
            # Refused by the burst, nothing consumed from the other limit.
            assert [con.get(f"api:{i}:{user}") for i in (0, 1)] == before
            assert all(before)

    asyncio.run(main())
    # The keys are prefix:i:key, with the cell's PXAT expiry.
    # A cell expires at the first ms at or after its arrival time (ns):
    # PTTL, read at a later ms rounded down, may say one ms more.
    assert 59_000 < con.pttl(f"api:0:{user}") <= 60_001
    assert 17_000 < con.pttl(f"api:1:{user}") <= 18_001
    assert con.exists(f"rl:0:{user}") == 0


async def silent_server() -> Tuple[asyncio.base_events.Server, List[asyncio.StreamWriter]]:
    """A TCP server that accepts connections and never answers."""
    held: List[asyncio.StreamWriter] = []

    async def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    return await asyncio.start_server(accept, "127.0.0.1", 0), held


TIMEOUT_MS = 300
#: Beyond the timeout: a loaded 2-core machine's scheduling, not a retry.
MARGIN_S = 0.15


@pytest.mark.parametrize("trouble", ["down", "slow"])
@pytest.mark.parametrize("on_error", ["allow", "deny", "raise"])
def test_redis_down_or_slow_is_answered_within_the_timeout(trouble: str, on_error: Any) -> None:
    async def main() -> None:
        silent, held = await silent_server()
        if trouble == "down":
            host, port = address("GUARD_DOWN")
        else:
            host, port = silent.sockets[0].getsockname()[:2]
        guard = AsyncGuard(redis.asyncio.Redis(host=host, port=port))
        app = hello_app()
        app.add_middleware(RateLimitMiddleware, guard=guard, limits=[BURST], timeout=TIMEOUT_MS, on_error=on_error)
        async with client(app) as http:
            started = time.monotonic()
            if on_error == "raise":
                # Down: the client's own error, or the timeout when its
                # retries (redis-py's backoff) outlast it.
                expected = (TimeoutError,) if trouble == "slow" else (TimeoutError, redis.ConnectionError)
                with pytest.raises(expected):
                    await http.get("/")
                response = None
            else:
                response = await http.get("/")
            elapsed = time.monotonic() - started
        assert elapsed <= TIMEOUT_MS / 1000 + MARGIN_S, elapsed
        if trouble == "slow":
            assert elapsed >= TIMEOUT_MS / 1000 - 0.01, elapsed
            assert held, "the client never reached the silent server"
        if response is not None:
            assert response.status_code == (200 if on_error == "allow" else 503)
            assert ours(response) == {}
        silent.close()
        for writer in held:
            writer.close()

    asyncio.run(main())


@pytest.mark.parametrize("backend", SERVERS)
@pytest.mark.parametrize("local_block", [True, False])
def test_local_block_refuses_without_a_server_call(backend: str, local_block: bool) -> None:
    variable = SERVERS[backend]
    con = admin(variable)
    ip = fresh_ip()
    one: Limit = (0, 1, 60)
    app = hello_app()
    app.add_middleware(RateLimitMiddleware, guard=async_guard(variable), limits=[one], local_block=local_block)

    async def main() -> None:
        async with client(app, ip) as http:
            assert (await http.get("/")).status_code == 200
            calls = guard_calls(con)
            response = await http.get("/")
            assert response.status_code == 429 and response.headers["retry-after"] == "60"
            assert guard_calls(con) == calls + 1
            for _ in range(5):
                again = await http.get("/")
                assert again.status_code == 429
                assert 0 < int(again.headers["retry-after"]) <= 60
                assert ours(again) == headers_after([one], ip, [(0, 60)])
            assert guard_calls(con) == calls + 1 + (0 if local_block else 5)

    asyncio.run(main())


def test_a_sync_guard_runs_in_a_thread() -> None:
    host, port = address("GUARD_STANDALONE")
    ip = fresh_ip()
    app = hello_app()
    app.add_middleware(RateLimitMiddleware, guard=Guard(redis.Redis(host=host, port=port)), limits=[BURST, WIDE])

    async def main() -> None:
        async with client(app, ip) as http:
            response = await http.get("/")
            assert response.status_code == 200
            assert ours(response) == headers_after([BURST, WIDE], ip, [gcra(BURST, 1), gcra(WIDE, 1)])

    asyncio.run(main())


def test_the_guide_recipe_runs_as_shown() -> None:
    """docs/guide.md's FastAPI recipe (web_tests/recipe_fastapi.py), as shown."""
    import recipe_fastapi

    async def main() -> None:
        api_key = uuid.uuid4().hex
        async with client(recipe_fastapi.app) as http:
            statuses = [(await http.get("/orders", headers={"x-api-key": api_key})).status_code for _ in range(11)]
            assert statuses == [200] * 10 + [429]

    asyncio.run(main())
