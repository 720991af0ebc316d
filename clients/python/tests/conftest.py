"""The clients under test, each against the real servers that the Rust
harness started (tests/client_python.rs): GUARD_STANDALONE is one
``host:port`` with the module, GUARD_CLUSTER the primaries of a 3-node
cluster with it.

Every test body is a coroutine taking a ``Client``; a sync client's
results are plain values, which ``value`` passes through, so one body
checks sync and asyncio clients alike.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import os
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Dict, List, Tuple

import pytest

import glide
import glide_sync
import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster
from redis_guard import AsyncGuard, Backend, Guard


def address(variable: str) -> List[Tuple[str, int]]:
    value = os.environ.get(variable)
    if not value:
        pytest.fail(f"{variable} is not set: run these tests through `cargo test --test client_python`")
    hosts = []
    for each in value.split(","):
        host, port = each.rsplit(":", 1)
        hosts.append((host, int(port)))
    return hosts


async def value(result: Any) -> Any:
    return await result if inspect.isawaitable(result) else result


@dataclass
class Client:
    """A guard over one client library, plus that client's raw calls."""

    name: str
    guard: Any
    raw: Callable[..., Any]
    error: type
    closers: List[Callable[[], Any]] = field(default_factory=list)

    async def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        return await value(getattr(self.guard, method)(*args, **kwargs))

    async def close(self) -> None:
        for close in self.closers:
            await value(close())


def _glide_nodes(module: Any, variable: str) -> List[Any]:
    return [module.NodeAddress(host, port) for host, port in address(variable)]


async def _redis_py(protocol: int, decode: bool, where: str = "GUARD_STANDALONE", backend: Backend = "auto") -> Client:
    (host, port), = address(where)
    client = redis.Redis(host=host, port=port, protocol=protocol, decode_responses=decode)
    return Client(f"redis-py RESP{protocol}{' decoded' if decode else ''}", Guard(client, backend),
                  client.execute_command, redis.ResponseError, [client.close])


async def _redis_py_async(where: str = "GUARD_STANDALONE", backend: Backend = "auto") -> Client:
    (host, port), = address(where)
    client = redis.asyncio.Redis(host=host, port=port)
    return Client("redis-py asyncio", AsyncGuard(client, backend), client.execute_command,
                  redis.ResponseError, [client.aclose if hasattr(client, "aclose") else client.close])


async def _glide_sync(where: str = "GUARD_STANDALONE", backend: Backend = "auto") -> Client:
    config = glide_sync.GlideClientConfiguration(_glide_nodes(glide_sync, where))
    client = glide_sync.GlideClient.create(config)
    return Client("glide sync", Guard(client, backend), lambda *words: client.custom_command(list(words)),
                  glide_sync.RequestError, [client.close])


async def _glide_async(where: str = "GUARD_STANDALONE", backend: Backend = "auto") -> Client:
    config = glide.GlideClientConfiguration(_glide_nodes(glide, where))
    client = await glide.GlideClient.create(config)
    return Client("glide asyncio", AsyncGuard(client, backend), lambda *words: client.custom_command(list(words)),
                  glide.RequestError, [client.close])


async def _redis_py_cluster(where: str = "GUARD_CLUSTER", backend: Backend = "auto") -> Client:
    nodes = [redis.cluster.ClusterNode(host, port) for host, port in address(where)]
    client = redis.cluster.RedisCluster(startup_nodes=nodes)
    return Client("redis-py cluster", Guard(client, backend), client.execute_command,
                  redis.ResponseError, [client.close])


async def _redis_py_async_cluster(where: str = "GUARD_CLUSTER", backend: Backend = "auto") -> Client:
    nodes = [redis.asyncio.cluster.ClusterNode(host, port) for host, port in address(where)]
    client = redis.asyncio.cluster.RedisCluster(startup_nodes=nodes)
    return Client("redis-py asyncio cluster", AsyncGuard(client, backend), client.execute_command,
                  redis.ResponseError, [client.aclose if hasattr(client, "aclose") else client.close])


async def _glide_sync_cluster(where: str = "GUARD_CLUSTER", backend: Backend = "auto") -> Client:
    config = glide_sync.GlideClusterClientConfiguration(_glide_nodes(glide_sync, where))
    client = glide_sync.GlideClusterClient.create(config)
    return Client("glide sync cluster", Guard(client, backend), lambda *words: client.custom_command(list(words)),
                  glide_sync.RequestError, [client.close])


async def _glide_async_cluster(where: str = "GUARD_CLUSTER", backend: Backend = "auto") -> Client:
    config = glide.GlideClusterClientConfiguration(_glide_nodes(glide, where))
    client = await glide.GlideClusterClient.create(config)
    return Client("glide asyncio cluster", AsyncGuard(client, backend), lambda *words: client.custom_command(list(words)),
                  glide.RequestError, [client.close])


#: Each takes ``where`` (the variable naming its server) and ``backend``.
STANDALONE: Dict[str, Callable[..., Awaitable[Client]]] = {
    "redis-py-resp2": functools.partial(_redis_py, 2, False),
    "redis-py-resp3": functools.partial(_redis_py, 3, False),
    "redis-py-resp3-decoded": functools.partial(_redis_py, 3, True),
    "redis-py-asyncio": _redis_py_async,
    "glide-sync": _glide_sync,
    "glide-asyncio": _glide_async,
}

CLUSTER: Dict[str, Callable[[], Awaitable[Client]]] = {
    "redis-py-cluster": _redis_py_cluster,
    "redis-py-asyncio-cluster": _redis_py_async_cluster,
    "glide-sync-cluster": _glide_sync_cluster,
    "glide-asyncio-cluster": _glide_async_cluster,
}


#: The same clients on the scripts backend, over servers without the
#: module: GUARD_PLAIN (standalone) and GUARD_PLAIN_CLUSTER.
SCRIPTED: Dict[str, Callable[[], Awaitable[Client]]] = {
    "redis-py-resp2": functools.partial(_redis_py, 2, False, "GUARD_PLAIN", "scripts"),
    "redis-py-resp3": functools.partial(_redis_py, 3, False, "GUARD_PLAIN", "scripts"),
    "redis-py-asyncio": functools.partial(_redis_py_async, "GUARD_PLAIN", "scripts"),
    "glide-sync": functools.partial(_glide_sync, "GUARD_PLAIN", "scripts"),
    "glide-asyncio": functools.partial(_glide_async, "GUARD_PLAIN", "scripts"),
    "redis-py-cluster": functools.partial(_redis_py_cluster, "GUARD_PLAIN_CLUSTER", "scripts"),
    "redis-py-asyncio-cluster": functools.partial(_redis_py_async_cluster, "GUARD_PLAIN_CLUSTER", "scripts"),
    "glide-sync-cluster": functools.partial(_glide_sync_cluster, "GUARD_PLAIN_CLUSTER", "scripts"),
    "glide-asyncio-cluster": functools.partial(_glide_async_cluster, "GUARD_PLAIN_CLUSTER", "scripts"),
}


@pytest.fixture(scope="session", autouse=True)
def empty_servers() -> None:
    """Every run starts from empty servers, whatever ran before."""
    for variable in ("GUARD_STANDALONE", "GUARD_CLUSTER", "GUARD_PLAIN", "GUARD_PLAIN_CLUSTER"):
        for host, port in address(variable):
            admin(host, port).flushall()


def run_with(make: Callable[[], Awaitable[Client]], body: Callable[[Client], Awaitable[None]]) -> None:
    """Runs ``body`` on a fresh client in its own event loop, closed after."""

    async def main() -> None:
        client = await make()
        try:
            await body(client)
        finally:
            await client.close()

    asyncio.run(main())


def admin(host: str, port: int) -> redis.Redis:
    """A plain connection to one node, for the checks around the client."""
    return redis.Redis(host=host, port=port, decode_responses=True)
