"""``Guard`` and ``AsyncGuard``: the module's commands as methods of a
client, as redis-py's ``r.json()`` and ``r.bf()`` are.

Each method is declared once (``_Commands``) from its builder in
``commands``; the descriptor gives it the return type of the object it is
read from: the value (``Guard``), an awaitable of it (``AsyncGuard``), or
the pipeline itself to chain more calls (``Pipeline``, ``AsyncPipeline``).
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable, Coroutine, Generic, List, Literal, Optional, ParamSpec, TypeVar, final, overload

from . import commands, scripts
from .backends import backend_for
from .commands import Call

#: How calls are sent: the module's commands, its Lua scripts, or the
#: module's until the server says it has no such command, then scripts.
Backend = Literal["auto", "module", "scripts"]

_log = logging.getLogger("redis_guard")

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


class _Mode:
    """A guard's backend: "auto" sends the module's commands until the
    server answers one with its unknown-command error, then scripts for
    good (logged once)."""

    def __init__(self, backend: Backend) -> None:
        if backend not in ("auto", "module", "scripts"):
            raise ValueError(f'backend must be "auto", "module" or "scripts", not {backend!r}')
        self.backend = backend
        self.scripts = backend == "scripts"

    def switch(self, error: Exception) -> bool:
        """Should the call that failed with ``error`` run as a script?"""
        if self.backend != "auto" or not scripts.is_unknown_command(error):
            return False
        if not self.scripts:
            self.scripts = True
            _log.warning("redis-guard: the server has no module (%s): running its Lua scripts from now on", error)
        return True


class _Queue:
    """What both pipelines keep: the calls queued and how to send them.
    On the scripts backend each call is its EVALSHA, and the scripts the
    batch needs are loaded first inside it (a transaction can then never
    meet NOSCRIPT at EXEC)."""

    def __init__(self, backend: Any, transaction: Optional[bool], mode: _Mode) -> None:
        self._backend = backend
        self._transaction = transaction
        self._mode = mode
        self._calls: List[Call[Any]] = []

    def _queue(self, call: Call[Any]) -> None:
        self._calls.append(call)

    def _batch(self) -> tuple[Any, int]:
        """The client's batch for the calls, and how many replies before
        theirs are the scripts' loads."""
        batch = self._backend.batch(self._transaction)
        loads = 0
        if self._mode.scripts:
            seen = set()
            for call in self._calls:
                if call.words[0] not in seen:
                    seen.add(call.words[0])
                    batch.queue(scripts.script_load(call))
                    loads += 1
        for call in self._calls:
            batch.queue(scripts.evalsha(call) if self._mode.scripts else call)
        return batch, loads

    def _parse(self, replies: List[Any], loads: int) -> List[Any]:
        return [call.parse(reply) for call, reply in zip(self._calls, replies[loads:])]

    def __len__(self) -> int:
        return len(self._calls)


@final
class Guard(_Commands):
    """The commands over a sync client: ``redis.Redis``,
    ``redis.cluster.RedisCluster``, or valkey-glide's sync ``GlideClient``
    / ``GlideClusterClient`` (package ``glide_sync``).

    >>> g = Guard(redis.Redis())
    >>> current, level = g.incrcheck("{cust:42}:orders", 1, 3600, [5, 20])
    """

    def __init__(self, client: Any, backend: Backend = "auto") -> None:
        self.client = client
        self._backend = backend_for(client, is_async=False)
        self._mode = _Mode(backend)

    def _run(self, call: Call[T]) -> T:
        if not self._mode.scripts:
            try:
                return call.parse(self._backend.execute(call))
            except Exception as error:
                if not self._mode.switch(error):
                    raise
        try:
            return call.parse(self._backend.execute(scripts.evalsha(call)))
        except Exception as error:
            if not scripts.is_noscript(error):
                raise
        self._backend.execute(scripts.script_load(call))
        return call.parse(self._backend.execute(scripts.evalsha(call)))

    def pipeline(self, transaction: Optional[bool] = None) -> Pipeline:
        """Queue calls; ``execute()`` returns their results in order. A
        transaction runs them in one MULTI/EXEC (in a cluster: one slot).
        None means what the client's own ``pipeline()`` does: a
        transaction on a standalone client, none on a cluster client."""
        return Pipeline(self._backend, transaction, self._mode)


@final
class AsyncGuard(_Commands):
    """The commands over an asyncio client: ``redis.asyncio.Redis``,
    ``redis.asyncio.cluster.RedisCluster``, or valkey-glide's
    ``GlideClient`` / ``GlideClusterClient`` (package ``glide``)."""

    def __init__(self, client: Any, backend: Backend = "auto") -> None:
        self.client = client
        self._backend = backend_for(client, is_async=True)
        self._mode = _Mode(backend)

    async def _run(self, call: Call[T]) -> T:
        if not self._mode.scripts:
            try:
                return call.parse(await self._backend.execute(call))
            except Exception as error:
                if not self._mode.switch(error):
                    raise
        try:
            return call.parse(await self._backend.execute(scripts.evalsha(call)))
        except Exception as error:
            if not scripts.is_noscript(error):
                raise
        await self._backend.execute(scripts.script_load(call))
        return call.parse(await self._backend.execute(scripts.evalsha(call)))

    def pipeline(self, transaction: Optional[bool] = None) -> AsyncPipeline:
        """As ``Guard.pipeline``; ``await execute()``."""
        return AsyncPipeline(self._backend, transaction, self._mode)


@final
class Pipeline(_Commands, _Queue):
    """Calls queued on a sync client; each method returns the pipeline."""

    def _run(self, call: Call[Any]) -> Pipeline:
        self._queue(call)
        return self

    def execute(self) -> List[Any]:
        """Sends the queued calls; their results, parsed, in order. A server
        error is raised as the client raises it."""
        batch, loads = self._batch()
        try:
            return self._parse(batch.execute(), loads)
        except Exception as error:
            # Without the module no call of the batch ran: all again.
            if self._mode.scripts or not self._mode.switch(error):
                raise
        batch, loads = self._batch()
        return self._parse(batch.execute(), loads)

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
        batch, loads = self._batch()
        try:
            return self._parse(await batch.execute(), loads)
        except Exception as error:
            if self._mode.scripts or not self._mode.switch(error):
                raise
        batch, loads = self._batch()
        return self._parse(await batch.execute(), loads)

    async def __aenter__(self) -> AsyncPipeline:
        return self

    async def __aexit__(self, *exc: Optional[object]) -> None:
        return None
