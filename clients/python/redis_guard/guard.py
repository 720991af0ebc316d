"""``Guard`` and ``AsyncGuard``: the module's commands as methods of a
client, as redis-py's ``r.json()`` and ``r.bf()`` are.

Each method is declared once (``_Commands``) from its builder in
``commands``; the descriptor gives it the return type of the object it is
read from: the value (``Guard``), an awaitable of it (``AsyncGuard``), or
the pipeline itself to chain more calls (``Pipeline``, ``AsyncPipeline``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Coroutine, Generic, List, Optional, ParamSpec, TypeVar, final, overload

from . import commands
from .backends import backend_for
from .commands import Call

P = ParamSpec("P")
T = TypeVar("T")


class _Method(Generic[P, T]):
    def __init__(self, build: Callable[P, Call[T]]) -> None:
        self._build = build

    @overload
    def __get__(self, owner: None, cls: type) -> _Method[P, T]: ...
    @overload
    def __get__(self, owner: Guard, cls: type) -> Callable[P, T]: ...
    @overload
    def __get__(self, owner: AsyncGuard, cls: type) -> Callable[P, Coroutine[Any, Any, T]]: ...
    @overload
    def __get__(self, owner: Pipeline, cls: type) -> Callable[P, Pipeline]: ...
    @overload
    def __get__(self, owner: AsyncPipeline, cls: type) -> Callable[P, AsyncPipeline]: ...
    def __get__(self, owner: Any, cls: type) -> Any:
        if owner is None:
            return self
        build = self._build

        @functools.wraps(build)
        def method(*args: Any, **kwargs: Any) -> Any:
            return owner._run(build(*args, **kwargs))

        return method


class _Commands:
    """The methods, with the signatures and docs of their builders."""

    incrcheck = _Method(commands.incrcheck)
    slidecheck = _Method(commands.slidecheck)
    distinct = _Method(commands.distinct)
    decrclamp = _Method(commands.decrclamp)
    issue = _Method(commands.issue)
    revoke = _Method(commands.revoke)
    throttle = _Method(commands.throttle)
    throttle_all = _Method(commands.throttle_all)
    create = _Method(commands.create)
    reserve = _Method(commands.reserve)
    confirm = _Method(commands.confirm)
    release = _Method(commands.release)
    alter = _Method(commands.alter)
    reclaim = _Method(commands.reclaim)
    reserve_all = _Method(commands.reserve_all)
    campaign_info = _Method(commands.campaign_info)
    claims = _Method(commands.claims)


class _Queue:
    """What both pipelines keep: the client's batch and each call's parser."""

    def __init__(self, batch: Any) -> None:
        self._batch = batch
        self._parsers: List[Callable[[Any], Any]] = []

    def _queue(self, call: Call[Any]) -> None:
        self._batch.queue(call)
        self._parsers.append(call.parse)

    def _parse(self, replies: List[Any]) -> List[Any]:
        return [parse(reply) for parse, reply in zip(self._parsers, replies)]

    def __len__(self) -> int:
        return len(self._parsers)


@final
class Guard(_Commands):
    """The commands over a sync client: ``redis.Redis``,
    ``redis.cluster.RedisCluster``, or valkey-glide's sync ``GlideClient``
    / ``GlideClusterClient`` (package ``glide_sync``).

    >>> g = Guard(redis.Redis())
    >>> current, level = g.incrcheck("{cust:42}:orders", 1, 3600, [5, 20])
    """

    def __init__(self, client: Any) -> None:
        self.client = client
        self._backend = backend_for(client, is_async=False)

    def _run(self, call: Call[T]) -> T:
        return call.parse(self._backend.execute(call))

    def pipeline(self, transaction: Optional[bool] = None) -> Pipeline:
        """Queue calls; ``execute()`` returns their results in order. A
        transaction runs them in one MULTI/EXEC (in a cluster: one slot).
        None means what the client's own ``pipeline()`` does: a
        transaction on a standalone client, none on a cluster client."""
        return Pipeline(self._backend.batch(transaction))


@final
class AsyncGuard(_Commands):
    """The commands over an asyncio client: ``redis.asyncio.Redis``,
    ``redis.asyncio.cluster.RedisCluster``, or valkey-glide's
    ``GlideClient`` / ``GlideClusterClient`` (package ``glide``)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._backend = backend_for(client, is_async=True)

    async def _run(self, call: Call[T]) -> T:
        return call.parse(await self._backend.execute(call))

    def pipeline(self, transaction: Optional[bool] = None) -> AsyncPipeline:
        """As ``Guard.pipeline``; ``await execute()``."""
        return AsyncPipeline(self._backend.batch(transaction))


@final
class Pipeline(_Commands, _Queue):
    """Calls queued on a sync client; each method returns the pipeline."""

    def _run(self, call: Call[Any]) -> Pipeline:
        self._queue(call)
        return self

    def execute(self) -> List[Any]:
        """Sends the queued calls; their results, parsed, in order. A server
        error is raised as the client raises it."""
        return self._parse(self._batch.execute())

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: Optional[object]) -> None:
        return None


@final
class AsyncPipeline(_Commands, _Queue):
    """Calls queued on an asyncio client; each method returns the pipeline."""

    def _run(self, call: Call[Any]) -> AsyncPipeline:
        self._queue(call)
        return self

    async def execute(self) -> List[Any]:
        """As ``Pipeline.execute``."""
        return self._parse(await self._batch.execute())

    async def __aenter__(self) -> AsyncPipeline:
        return self

    async def __aexit__(self, *exc: Optional[object]) -> None:
        return None
