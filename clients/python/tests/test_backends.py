"""The scripts backend, on servers without the module (GUARD_PLAIN and
GUARD_PLAIN_CLUSTER), against the module (GUARD_STANDALONE and
GUARD_CLUSTER), through every client: each scripted method gives what the
same client gets from the module; pipelines and transactions too; "auto"
switches once, logged once; a NOSCRIPT is loaded again; in a cluster
every call is one EVALSHA on its key's owner, never a MOVED."""

from __future__ import annotations

import logging
import uuid
from typing import Any, Awaitable, Callable, Dict, List, Tuple

import pytest

from conftest import CLUSTER, SCRIPTED, STANDALONE, Client, address, admin, run_with, value
from redis_guard import Guard

def calls(t: str) -> List[Tuple[str, Tuple[Any, ...], Dict[str, Any]]]:
    """The methods whose command has its script, each called a few ways on
    keys tagged ``t``: (method, args, kwargs)."""
    k = f"{{{t}}}"
    return [
        ("incrcheck", (f"{k}:orders", 2, 60, [3, 5]), {}),
        ("incrcheck", (f"{k}:orders", 2, 60, [3, 5]), {"alert": f"{k}:alerts", "maxlen": 10}),
        ("incrcheck", (f"{k}:big", 9223372036854775807, 60, [3]), {}),
        ("decrclamp", (f"{k}:orders", 3), {"alert": f"{k}:alerts"}),
        ("decrclamp", (f"{k}:orders", 0), {}),
        ("throttle", (f"{k}:rate", 2, 1, 60), {}),
        ("throttle", (f"{k}:rate", 2, 1, 60, 5), {}),
        ("throttle_all", ([(f"{k}:s", 2, 1, 60), (f"{k}:d", 5, 10, 3600)],), {}),
        ("throttle_all", ([(f"{k}:s", 2, 1, 60), (f"{k}:s", 5, 10, 3600)],), {}),
        ("slidecheck", (f"{k}:win", 2, 60, [3, 5]), {}),
        ("slidecheck", (f"{k}:win", 2, 60, [3, 5]), {"alert": f"{k}:alerts"}),
        ("slidecheck", (f"{k}:win", 2, 60, [3]), {"buckets": 6}),
        ("slidecheck", (f"{k}:win", 2, 7, [3]), {"buckets": 3000}),
        ("distinct", (f"{k}:cards", "c1", 60, [2]), {}),
        ("distinct", (f"{k}:cards", "c2", 60, [2]), {"alert": f"{k}:alerts", "maxlen": 10}),
        ("distinct", (f"{k}:cards", "", 60, [2]), {}),
        ("issue", (f"{k}:coupons", "u1", 1), {}),
        ("issue", (f"{k}:coupons", "u1", 1), {}),
        ("issue", (f"{k}:coupons", "u2", 1), {}),
        ("issue", (f"{k}:coupons", "u2", 1), {"ledger": f"{k}:ledger"}),
        ("revoke", (f"{k}:coupons", "u1"), {}),
        ("revoke", (f"{k}:coupons", "u1"), {}),
        ("issue", (f"{k}:orders", "u1", 1), {}),
    ]


async def outcomes(client: Client, tag: str) -> List[Any]:
    """Each call's result, or its error's class and text."""
    results: List[Any] = []
    for method, args, kwargs in calls(tag):
        try:
            results.append(await client.call(method, *args, **kwargs))
        except Exception as error:  # noqa: BLE001 - compared, not handled
            results.append((type(error).__name__, str(error).removeprefix("ERR ")))
    return results


def pairs() -> List[Tuple[str, Callable[[], Awaitable[Client]], Callable[[], Awaitable[Client]]]]:
    modules = {**STANDALONE, **CLUSTER}
    return [(name, modules[name], scripted) for name, scripted in SCRIPTED.items()]


@pytest.mark.parametrize("name,module,scripted", pairs(), ids=[p[0] for p in pairs()])
def test_each_scripted_method_answers_as_the_module(name: str, module: Any, scripted: Any) -> None:
    tag = uuid.uuid4().hex
    got: Dict[str, List[Any]] = {}

    async def record(kind: str, client: Client) -> None:
        got[kind] = await outcomes(client, tag)

    run_with(module, lambda client: record("module", client))
    run_with(scripted, lambda client: record("scripts", client))
    assert got["scripts"] == got["module"]
    # Same data: the counter the scripts wrote is the module's layout.
    for where in ("GUARD_STANDALONE", "GUARD_PLAIN") if "cluster" not in name else ():
        (host, port), = address(where)
        assert admin(host, port).get(f"{{{tag}}}:orders") is not None


@pytest.mark.parametrize("name,scripted", list(SCRIPTED.items()), ids=list(SCRIPTED))
def test_pipelines_and_transactions_on_scripts(name: str, scripted: Any) -> None:
    tag = uuid.uuid4().hex
    for (host, port) in address("GUARD_PLAIN_CLUSTER" if "cluster" in name else "GUARD_PLAIN"):
        admin(host, port).script_flush()

    async def body(client: Client) -> None:
        for transaction in (False, True):
            key = f"{{{tag}}}:{transaction}"
            pipe = client.guard.pipeline(transaction=transaction)
            pipe.incrcheck(key, 1, 60, [2]).incrcheck(key, 1, 60, [2]).decrclamp(key, 1)
            pipe.throttle(f"{{{tag}}}:rate:{transaction}", 0, 1, 60)
            results = await value(pipe.execute())
            assert [tuple(r) if isinstance(r, tuple) else r for r in results[:3]] == [(1, 0), (2, 1), 1]
            assert results[3].limited is False and results[3].remaining == 0

    run_with(scripted, body)


def test_auto_switches_once_logged_once_and_reloads_after_noscript(caplog: pytest.LogCaptureFixture) -> None:
    import redis

    (host, port), = address("GUARD_PLAIN")
    server = admin(host, port)
    client = redis.Redis(host=host, port=port)
    g = Guard(client)
    # Connected first: what a client says on connecting (CLIENT SETINFO,
    # an error on Redis 7.0) is not counted below.
    client.ping()
    server.config_resetstat()
    with caplog.at_level(logging.WARNING, logger="redis_guard"):
        for i in range(5):
            assert g.incrcheck("auto:k", 1, 60, [3]) == (i + 1, 1 if i == 2 else 0)
    assert len([r for r in caplog.records if r.name == "redis_guard"]) == 1
    errors = str(server.info("errorstats").get("errorstat_ERR"))
    assert errors in ("count=1", "{'count': 1}"), errors
    server.script_flush()
    assert g.decrclamp("auto:k", 1) == 4
    with pytest.raises(redis.ResponseError, match="unknown command"):
        Guard(client, backend="module").incrcheck("auto:m", 1, 60, [3])
    with pytest.raises(ValueError):
        Guard(redis.Redis(host=host, port=port), backend="lua")  # type: ignore[arg-type]


def test_in_a_cluster_each_call_is_one_evalsha_on_its_owner() -> None:
    import redis.cluster

    nodes = address("GUARD_PLAIN_CLUSTER")
    client = redis.cluster.RedisCluster(startup_nodes=[redis.cluster.ClusterNode(h, p) for h, p in nodes])
    g = Guard(client, backend="scripts")
    tags = [uuid.uuid4().hex for _ in range(12)]
    for tag in tags:
        # Each node loads the scripts it runs once (a NOSCRIPT, a load).
        g.incrcheck(f"{{{tag}}}:warm", 1, 60, [3])
        g.throttle_all([(f"{{{tag}}}:warm", 1, 1, 60)])
    admins = {(host, port): admin(host, port) for host, port in nodes}
    for each in admins.values():
        each.config_resetstat()
    owners: Dict[Tuple[str, int], int] = {}
    for tag in tags:
        g.incrcheck(f"{{{tag}}}:k", 1, 60, [3])
        g.throttle_all([(f"{{{tag}}}:a", 1, 1, 60), (f"{{{tag}}}:b", 1, 1, 60)])
        node = client.get_node_from_key(f"{{{tag}}}:k")
        owners[(node.host, node.port)] = owners.get((node.host, node.port), 0) + 2
    for (host, port), each in admins.items():
        info = each.info("commandstats")
        calls = {name: stats["calls"] for name, stats in info.items()}
        expected = owners.get((host, port), 0)
        assert calls.get("cmdstat_evalsha", 0) == expected, (host, port, calls)
        assert "cmdstat_command" not in calls and "cmdstat_script" not in calls, calls
        assert not each.info("errorstats"), "no MOVED, no error"
    client.close()
