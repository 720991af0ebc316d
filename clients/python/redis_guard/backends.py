"""How each client library sends one call or a batch of them.

A cluster client is told the node (redis-py) or slot (valkey-glide) of
the call's key, so it sends one command straight to the key's owner: no
``COMMAND GETKEYS`` (redis-py asks the server for the keys of a command
flagged ``movablekeys``) and no ``MOVED`` (valkey-glide routes a command it
does not know by its first argument, CL.THROTTLEALL's ``numkeys``).
Replies come back raw: the call's parser makes them values.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from .commands import Call
from .slot import key_slot


def _class_of(module: str, name: str) -> Optional[type]:
    # Only a library the application has imported can have made its client.
    return getattr(sys.modules.get(module), name, None)


def _is(client: Any, module: str, name: str) -> bool:
    cls = _class_of(module, name)
    return cls is not None and isinstance(client, cls)


# --- redis-py -------------------------------------------------------------


class _RedisPyBatch:
    """A redis-py pipeline; on a cluster each command names its node. The
    pipeline is made at ``execute()``, when an asyncio cluster client has
    read its slot map."""

    def __init__(self, redis_py: RedisPy, transaction: Optional[bool]) -> None:
        self._redis_py = redis_py
        self._transaction = transaction
        self._calls: List[Call[Any]] = []

    def queue(self, call: Call[Any]) -> None:
        self._calls.append(call)

    def _pipeline(self) -> Any:
        redis_py = self._redis_py
        client = redis_py.client
        if redis_py.cluster and self._transaction and self._calls:
            # redis-py's cluster transaction finds each command's slot itself
            # (COMMAND GETKEYS for every command flagged movablekeys, which
            # fails on redis-py 8.1's asyncio client; none before 6.0):
            # MULTI/EXEC on the owner's own connection instead (a MOVED, if
            # the slot has just moved, is raised, not followed).
            key = next((call.key for call in self._calls if call.key is not None), None)
            if key is not None:
                pipe = redis_py.owner(key).pipeline(transaction=True)
                for call in self._calls:
                    pipe.execute_command(*call.words)
                return pipe
        # A raw call (key None) is routed by redis-py itself.
        pipe = client.pipeline() if self._transaction is None else client.pipeline(transaction=self._transaction)
        for call in self._calls:
            pipe.execute_command(*call.words, **redis_py.target(call))
        return pipe

    def execute(self) -> Any:
        # Each call's error in its place: the guard raises the first one
        # its call does not expect (create's exist_ok).
        if not self._redis_py.is_async:
            return self._pipeline().execute(raise_on_error=False)
        return self._execute_async()

    async def _execute_async(self) -> Any:
        await self._redis_py.ready()
        return await self._pipeline().execute(raise_on_error=False)


class RedisPy:
    """redis-py, sync or asyncio, standalone or cluster: the same calls,
    which return a value or an awaitable as the client does."""

    def __init__(self, client: Any, cluster: bool, is_async: bool) -> None:
        self.client = client
        self.cluster = cluster
        self.is_async = is_async
        self._owners: Dict[str, Any] = {}

    def owner(self, key: Any) -> Any:
        """A plain client of the node that owns ``key``'s slot: the sync
        client's own; for asyncio, one made once per node with the
        cluster's connection settings."""
        node = self.client.get_node_from_key(key)
        if not self.is_async:
            return node.redis_connection
        if node.name not in self._owners:
            from redis.asyncio import ConnectionPool, Redis

            pool = ConnectionPool(connection_class=node.connection_class, **node.connection_kwargs)
            self._owners[node.name] = Redis(connection_pool=pool)
        return self._owners[node.name]

    def target(self, call: Call[Any]) -> Dict[str, Any]:
        if not self.cluster or call.key is None:
            return {}
        return {"target_nodes": self.client.get_node_from_key(call.key)}

    async def ready(self) -> None:
        # An asyncio cluster client reads its slot map on first use.
        if self.cluster:
            await self.client.initialize()

    def execute(self, call: Call[Any]) -> Any:
        if not self.is_async:
            return self.client.execute_command(*call.words, **self.target(call))
        return self._execute_async(call)

    async def _execute_async(self, call: Call[Any]) -> Any:
        await self.ready()
        return await self.client.execute_command(*call.words, **self.target(call))

    def batch(self, transaction: Optional[bool]) -> _RedisPyBatch:
        return _RedisPyBatch(self, transaction)

    def is_server_error(self, error: BaseException) -> bool:
        """An error reply of the server (redis-py's ResponseError and its
        subclasses), not a connection's or the client's own."""
        response_error = _class_of("redis.exceptions", "ResponseError")
        return response_error is not None and isinstance(error, response_error)

    def close(self) -> Any:
        """Closes the clients the backend made itself (asyncio cluster
        transactions: one per node); an awaitable for asyncio."""
        owners, self._owners = list(self._owners.values()), {}
        if not self.is_async:
            return None
        return _close_all(owners)


async def _close_all(clients: List[Any]) -> None:
    for client in clients:
        await (client.aclose() if hasattr(client, "aclose") else client.close())
        # A client given its pool leaves the pool's connections open.
        await client.connection_pool.disconnect()


# --- valkey-glide -----------------------------------------------------------


def _glide_route(routes: Any, call: Call[Any]) -> Any:
    if call.key is None:
        return None
    if isinstance(call.key, str):
        # glide hashes a str key itself (in Rust, faster than here).
        return routes.SlotKeyRoute(routes.SlotType.PRIMARY, call.key)
    return routes.SlotIdRoute(routes.SlotType.PRIMARY, key_slot(call.key))


class _GlideBatch:
    """A valkey-glide Batch. On a cluster a transaction goes to its first
    key's slot. In a pipeline glide routes EVALSHA by its first key and
    each other command by its first
    argument: the key for every command but CL.THROTTLEALL. A pipeline
    whose calls share one slot is sent there whole; otherwise each
    CL.THROTTLEALL is sent alone, routed, between the batches of the calls
    before and after it, so the calls still run in the order queued."""

    def __init__(self, glide: _Glide, transaction: Optional[bool]) -> None:
        self._glide = glide
        # As redis-py's default: a transaction unless on a cluster.
        self._transaction = not glide.cluster if transaction is None else transaction
        self._calls: List[Call[Any]] = []

    def queue(self, call: Call[Any]) -> None:
        self._calls.append(call)

    def _routed_apart(self, call: Call[Any]) -> bool:
        # glide routes EVALSHA by its first key (after numkeys), a command
        # it does not know by its first argument.
        routed_by = call.words[3] if call.words[0] == "EVALSHA" and call.words[2] != "0" else call.words[1]
        return call.key is not None and routed_by != call.key

    def _one_slot(self) -> bool:
        """Must the batch go to its first key's slot: a cluster transaction,
        or a pipeline with a call glide would misroute whose calls all
        share one slot (computed only then)."""
        if not self._glide.cluster:
            return False
        if self._transaction:
            return True
        if not any(self._routed_apart(call) for call in self._calls):
            return False
        return len({key_slot(call.key) for call in self._calls if call.key is not None}) == 1

    def _whole(self) -> bool:
        return not self._glide.cluster or self._one_slot() or not any(map(self._routed_apart, self._calls))

    def _segments(self) -> List[Tuple[bool, List[Call[Any]]]]:
        """(sent alone, calls) in queue order."""
        if self._whole():
            return [(False, self._calls)]
        segments: List[Tuple[bool, List[Call[Any]]]] = []
        for call in self._calls:
            if self._routed_apart(call):
                segments.append((True, [call]))
            elif segments and not segments[-1][0]:
                segments[-1][1].append(call)
            else:
                segments.append((False, [call]))
        return segments

    def _batch(self, calls: List[Call[Any]]) -> Tuple[Any, Any]:
        """A glide batch of `calls` and its options."""
        module, cluster = self._glide.module, self._glide.cluster
        batch = getattr(module, "ClusterBatch" if cluster else "Batch")(is_atomic=self._transaction)
        for call in calls:
            batch.custom_command(list(call.words))
        options = None
        if self._one_slot() and calls and calls[0].key is not None:
            options = module.ClusterBatchOptions(route=_glide_route(module, calls[0]))
        return batch, options

    def execute(self) -> Any:
        # Each call's error in its place (raise_on_error False), as redis-py.
        if self._glide.is_async:
            return self._execute_async()
        client, replies = self._glide.client, []
        for alone, calls in self._segments():
            if alone:
                try:
                    replies.append(self._glide.execute(calls[0]))
                except Exception as error:
                    if not self._glide.is_server_error(error):
                        raise
                    replies.append(error)
                continue
            batch, options = self._batch(calls)
            replies += list((client.exec(batch, False, options) if options else client.exec(batch, False)) or [])
        return replies

    async def _execute_async(self) -> List[Any]:
        client, replies = self._glide.client, []
        for alone, calls in self._segments():
            if alone:
                try:
                    replies.append(await self._glide.execute(calls[0]))
                except Exception as error:
                    if not self._glide.is_server_error(error):
                        raise
                    replies.append(error)
                continue
            batch, options = self._batch(calls)
            replies += list(await (client.exec(batch, False, options) if options else client.exec(batch, False)) or [])
        return replies


class _Glide:
    """valkey-glide's clients: ``glide_sync`` (sync) or ``glide`` (asyncio),
    standalone or cluster."""

    def __init__(self, client: Any, module: str, cluster: bool) -> None:
        self.client = client
        self.module = sys.modules[module]
        self.cluster = cluster
        self.is_async = module == "glide"

    def execute(self, call: Call[Any]) -> Any:
        if not self.cluster:
            return self.client.custom_command(list(call.words))
        return self.client.custom_command(list(call.words), _glide_route(self.module, call))

    def batch(self, transaction: Optional[bool]) -> _GlideBatch:
        return _GlideBatch(self, transaction)

    def is_server_error(self, error: BaseException) -> bool:
        """An error reply of the server: glide's RequestError, but not its
        subclasses for a timeout, a lost connection or a closed client."""
        module = self.module
        local = tuple(getattr(module, name) for name in ("TimeoutError", "ConnectionError", "ClosingError")
                      if hasattr(module, name))
        return isinstance(error, module.RequestError) and not isinstance(error, local)

    def close(self) -> None:
        """Nothing to close: glide's batches use the client's connections."""
        return None


def backend_for(client: Any, is_async: bool) -> Any:
    """The backend that drives ``client``; TypeError for anything else."""
    kinds: List[Tuple[str, str, Callable[[], Any]]] = (
        [
            ("redis.asyncio.cluster", "RedisCluster", lambda: RedisPy(client, True, True)),
            ("redis.asyncio.client", "Redis", lambda: RedisPy(client, False, True)),
            ("glide", "GlideClusterClient", lambda: _Glide(client, "glide", True)),
            ("glide", "GlideClient", lambda: _Glide(client, "glide", False)),
        ]
        if is_async
        else [
            ("redis.cluster", "RedisCluster", lambda: RedisPy(client, True, False)),
            ("redis.client", "Redis", lambda: RedisPy(client, False, False)),
            ("glide_sync", "GlideClusterClient", lambda: _Glide(client, "glide_sync", True)),
            ("glide_sync", "GlideClient", lambda: _Glide(client, "glide_sync", False)),
        ]
    )
    for module, name, make in kinds:
        if _is(client, module, name):
            return make()
    this, other = ("AsyncGuard", "Guard") if is_async else ("Guard", "AsyncGuard")
    raise TypeError(
        f"{this} drives redis-py's and valkey-glide's "
        f"{'asyncio' if is_async else 'sync'} clients, not "
        f"{type(client).__module__}.{type(client).__name__} (see {other})"
    )
