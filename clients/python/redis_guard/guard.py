"""``Guard`` and ``AsyncGuard``: the module's commands as methods of a
client, as redis-py's ``r.json()`` and ``r.bf()`` are.

Each method is declared once (``_Commands``) from its builder in
``commands``; the descriptor gives it the return type of the object it is
read from: the value (``Guard``), an awaitable of it (``AsyncGuard``), or
the pipeline itself to chain more calls (``Pipeline``, ``AsyncPipeline``).
"""

from __future__ import annotations

import functools
import inspect
import logging
from types import MethodType
from typing import Any, AsyncContextManager, Callable, ContextManager, Coroutine, Generic, List, Literal, NoReturn, Optional, ParamSpec, Set, TypeVar, final, overload

from . import commands, errors, lease, scripts
from .backends import backend_for
from .commands import Call
from .results import EncodableT, Reservation

#: How calls are sent: the module's commands, its Lua scripts, or the
#: module's until the server says it has no such command, then scripts.
Backend = Literal["auto", "module", "scripts"]

_log = logging.getLogger("redis_guard")

P = ParamSpec("P")
T = TypeVar("T")


class _Method(Generic[P, T]):
    def __init__(self, build: Callable[P, Call[T]]) -> None:
        # The method is made once: a call binds it as Python binds any
        # function (making one per attribute read cost a call ~2 µs).
        @functools.wraps(build)
        def method(owner: Any, *args: Any, **kwargs: Any) -> Any:
            return owner._run(build(*args, **kwargs))

        # As the builder's signature, with the owner first: help() and
        # inspect show a guard's method as its builder.
        signature = inspect.signature(build)
        owner = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
        setattr(method, "__signature__", signature.replace(parameters=[owner, *signature.parameters.values()]))
        self._method = method

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
        return MethodType(self._method, owner)


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
    quota = _Method(commands.quota)
    refund = _Method(commands.refund)
    reset = _Method(commands.reset)
    create = _Method(commands.create)
    reserve = _Method(commands.reserve)
    confirm = _Method(commands.confirm)
    release = _Method(commands.release)
    renew = _Method(commands.renew)
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
        #: The commands whose scripts this guard's pipelines have loaded
        #: (on some node: another may still answer NOSCRIPT).
        self.loaded: Set[EncodableT] = set()

    def switch(self, error: BaseException, calls: List[Call[Any]]) -> bool:
        """Should ``calls``, one of which failed with ``error``, run as
        scripts? Only the server's unknown-command error naming one of the
        guard's own commands says so (not an application's command queued
        beside them)."""
        if self.backend != "auto" or not scripts.names_a_module_command(error, calls):
            return False
        if not self.scripts:
            self.scripts = True
            _log.warning("redis-guard: the server has no module (%s): running its Lua scripts from now on", error)
        return True


def _raise(error: BaseException, backend: Any) -> NoReturn:
    """Raises ``error``: a server error as the package's (see ``errors``),
    anything else as it is."""
    if not backend.is_server_error(error):
        raise error
    raise errors.typed(error).with_traceback(error.__traceback__) from None


def _answer(call: Call[T], error: BaseException, backend: Any) -> T:
    """What ``call`` gives for ``error``: the value the call expects for
    that server error, or the error raised (``_raise``)."""
    if call.on_error is not None and backend.is_server_error(error):
        return call.on_error(errors.typed(error))
    _raise(error, backend)


class _Queue:
    """What both pipelines keep: the calls queued and how to send them.
    On the scripts backend each call is its EVALSHA. A transaction loads
    every script it runs first, inside its MULTI: EXEC can then never meet
    NOSCRIPT, which would leave the other calls applied. A pipeline loads
    first every script it runs when this guard has not loaded one of
    them yet or the application's own commands share it, none otherwise;
    its calls answered NOSCRIPT (a failover, a restart, SCRIPT FLUSH: they
    did not run, nor did the pipeline's others on that server) load theirs
    and are sent again, once. The application's own commands
    (``execute_command``) go as they are, on either backend."""

    def __init__(self, backend: Any, transaction: Optional[bool], mode: _Mode) -> None:
        self._backend = backend
        self._transaction = transaction
        self._mode = mode
        self._calls: List[Call[Any]] = []

    def _queue(self, call: Call[Any]) -> None:
        self._calls.append(call)

    def _atomic(self) -> bool:
        # None is the client's own default: a transaction unless on a cluster.
        return bool(self._transaction) or (self._transaction is None and not self._backend.cluster)

    def _batch(self, calls: List[Call[Any]]) -> tuple[Any, int]:
        """The client's batch for ``calls``, and how many replies before
        theirs are the scripts' loads."""
        batch = self._backend.batch(self._transaction)
        loads = 0
        if self._mode.scripts:
            mine = [call for call in calls if not call.raw]
            # All or none: loading only the missing ones would let the
            # others run while a call whose script the server lost answers
            # NOSCRIPT and runs again after them, out of the order queued;
            # so would the application's own commands beside them.
            every = (self._atomic() or len(mine) < len(calls)
                     or any(call.words[0] not in self._mode.loaded for call in mine))
            seen: Set[EncodableT] = set()
            for call in mine if every else ():
                command = call.words[0]
                if command not in seen:
                    seen.add(command)
                    batch.queue(scripts.script_load(call))
                    loads += 1
            self._mode.loaded |= seen
        for call in calls:
            batch.queue(scripts.evalsha(call) if self._mode.scripts and not call.raw else call)
        return batch, loads

    def _again(self, replies: List[Any]) -> List[int]:
        """Where the guard's calls to send again are: all of them when the
        server answered one with its unknown-command error ("auto", the
        module absent: none of them ran; the application's own commands
        did, and keep their replies); on scripts, those answered NOSCRIPT."""
        calls = self._calls
        if self._mode.scripts:
            missing = [i for i, reply in enumerate(replies)
                       if not calls[i].raw and isinstance(reply, BaseException) and scripts.is_noscript(reply)]
            self._mode.loaded -= {calls[i].words[0] for i in missing}
            return missing
        for call, reply in zip(calls, replies):
            if not call.raw and isinstance(reply, BaseException) and self._mode.switch(reply, [call]):
                return [i for i, call in enumerate(calls) if not call.raw]
        return []

    def _parse(self, replies: List[Any]) -> List[Any]:
        """The results in order."""
        results = []
        for call, reply in zip(self._calls, replies):
            if isinstance(reply, BaseException):
                results.append(_answer(call, reply, self._backend))
            else:
                results.append(call.parse(reply))
        return results

    def _aborted(self, error: BaseException) -> None:
        """A batch the server refused whole (a transaction with an unknown
        command: nothing ran): returns if it is to be sent again as
        scripts, raises otherwise."""
        if self._mode.scripts or not self._mode.switch(error, self._calls):
            _raise(error, self._backend)

    def _raw(self, *words: EncodableT) -> Call[Any]:
        return Call(tuple(words), None, lambda reply: reply, raw=True)

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
        try:
            reply = self._send(call)
        except Exception as error:
            return _answer(call, error, self._backend)
        return call.parse(reply)

    def _send(self, call: Call[Any]) -> Any:
        if not self._mode.scripts:
            try:
                return self._backend.execute(call)
            except Exception as error:
                if not self._mode.switch(error, [call]):
                    raise
        try:
            return self._backend.execute(scripts.evalsha(call))
        except Exception as error:
            if not scripts.is_noscript(error):
                raise
        self._backend.execute(scripts.script_load(call))
        return self._backend.execute(scripts.evalsha(call))

    def pipeline(self, transaction: Optional[bool] = None) -> Pipeline:
        """Queue calls; ``execute()`` returns their results in order. A
        transaction runs them in one MULTI/EXEC (in a cluster: one slot).
        None means what the client's own ``pipeline()`` does: a
        transaction on a standalone client, none on a cluster client."""
        return Pipeline(self._backend, transaction, self._mode)

    def lease(
        self, key: EncodableT, user: EncodableT, *, hold: commands.Seconds = 30, ledger: Optional[EncodableT] = None,
    ) -> ContextManager[Reservation]:
        """Holds a slot of the campaign ``key`` while the block runs:
        ``with g.lease("workers", "host-7", hold=30) as held:``. Reserves
        with a fresh request id, renews every ``hold / 3`` seconds, releases
        at the end (also on an exception); ``LeaseRefused`` (nothing run)
        when there is no slot."""
        return lease.hold_lease(self, key, user, hold, ledger)

    def close(self) -> None:
        """Releases what the guard opened itself (nothing over a sync
        client: its calls use the client's connections). The client is
        the application's to close."""
        self._backend.close()


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
        try:
            reply = await self._send(call)
        except Exception as error:
            return _answer(call, error, self._backend)
        return call.parse(reply)

    async def _send(self, call: Call[Any]) -> Any:
        if not self._mode.scripts:
            try:
                return await self._backend.execute(call)
            except Exception as error:
                if not self._mode.switch(error, [call]):
                    raise
        try:
            return await self._backend.execute(scripts.evalsha(call))
        except Exception as error:
            if not scripts.is_noscript(error):
                raise
        await self._backend.execute(scripts.script_load(call))
        return await self._backend.execute(scripts.evalsha(call))

    def pipeline(self, transaction: Optional[bool] = None) -> AsyncPipeline:
        """As ``Guard.pipeline``; ``await execute()``."""
        return AsyncPipeline(self._backend, transaction, self._mode)

    def lease(
        self, key: EncodableT, user: EncodableT, *, hold: commands.Seconds = 30, ledger: Optional[EncodableT] = None,
    ) -> AsyncContextManager[Reservation]:
        """As ``Guard.lease``: ``async with g.lease(...) as held:``; the
        renewals run as a task."""
        return lease.hold_lease_async(self, key, user, hold, ledger)

    async def aclose(self) -> None:
        """Closes what the guard opened itself: over an asyncio cluster
        client, the connections of its transactions (one client per node
        that served one). The client is the application's to close."""
        closing = self._backend.close()
        if closing is not None:
            await closing


@final
class Pipeline(_Commands, _Queue):
    """Calls queued on a sync client; each method returns the pipeline."""

    def _run(self, call: Call[Any]) -> Pipeline:
        self._queue(call)
        return self

    def execute_command(self, *words: EncodableT) -> Pipeline:
        """Queues one of the application's own commands (``SET``,
        ``XADD``...), sent as it is; its reply is its result, unparsed.
        In a transaction it shares the MULTI (in a cluster: the slot)."""
        self._queue(self._raw(*words))
        return self

    def execute(self) -> List[Any]:
        """Sends the queued calls; their results, parsed, in order. The
        first server error a call does not expect is raised, as the
        package's error (see ``errors``)."""
        batch, loads = self._batch(self._calls)
        try:
            replies = batch.execute()[loads:]
        except Exception as error:
            self._aborted(error)
            batch, loads = self._batch(self._calls)
            replies = batch.execute()[loads:]
        again = self._again(replies)
        if again:
            batch, loads = self._batch([self._calls[i] for i in again])
            for i, reply in zip(again, batch.execute()[loads:]):
                replies[i] = reply
        return self._parse(replies)

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

    def execute_command(self, *words: EncodableT) -> AsyncPipeline:
        """As ``Pipeline.execute_command``."""
        self._queue(self._raw(*words))
        return self

    async def execute(self) -> List[Any]:
        """As ``Pipeline.execute``."""
        batch, loads = self._batch(self._calls)
        try:
            replies = (await batch.execute())[loads:]
        except Exception as error:
            self._aborted(error)
            batch, loads = self._batch(self._calls)
            replies = (await batch.execute())[loads:]
        again = self._again(replies)
        if again:
            batch, loads = self._batch([self._calls[i] for i in again])
            for i, reply in zip(again, (await batch.execute())[loads:]):
                replies[i] = reply
        return self._parse(replies)

    async def __aenter__(self) -> AsyncPipeline:
        return self

    async def __aexit__(self, *exc: Optional[object]) -> None:
        return None
