"""The scripts backend, on servers without the module (GUARD_PLAIN and
GUARD_PLAIN_CLUSTER), against the module (GUARD_STANDALONE and
GUARD_CLUSTER), through every client: each scripted method gives what the
same client gets from the module; pipelines and transactions too; "auto"
switches once, logged once; a NOSCRIPT is loaded again; in a cluster
every call is one EVALSHA on its key's owner, never a MOVED."""

from __future__ import annotations

import functools
import logging
import os
import socket
import subprocess
import time
import uuid
from pathlib import Path
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
        ("throttle", (f"{k}:rate", 2, 1, 60), {"block": 30}),
        ("throttle", (f"{k}:rate", 2, 1, 60), {"block": 0}),
        ("refund", (f"{k}:rate", 2, 1, 60, 1), {}),
        ("refund", (f"{k}:rate", 2, 1, 60, 9), {}),
        ("refund", (f"{k}:rate", 2, 1, 60, 0), {}),
        ("throttle_all", ([(f"{k}:s", 0, 1, 60), (f"{k}:d", 5, 10, 3600)],), {"block": 60}),
        ("throttle_all", ([(f"{k}:s", 2, 1, 60), (f"{k}:d", 5, 10, 3600)],), {}),
        ("throttle_all", ([(f"{k}:s", 2, 1, 60), (f"{k}:s", 5, 10, 3600)],), {}),
        ("quota", (f"{k}:quota", 3, 60, 2), {}),
        ("quota", (f"{k}:quota", 3, 60, 2), {}),
        ("quota", (f"{k}:quota", 3, 60, 0), {}),
        ("quota", (f"{k}:q2", 3, "day"), {"tz": "Nowhere/City"}),
        ("quota", (f"{k}:q2", 3, 60), {"tz": "UTC"}),
        # A caller's text that looks like the rules a script gets.
        ("quota", (f"{k}:q3", 2, "day"), {"tz": "Fake|0|99999999999|0|1:86400"}),
        ("quota", (f"{k}:q3", 2, "day"), {"tz": "X|0|99999999999|nan"}),
        ("incrcheck", (f"{k}:daily", 1, "day", [1]), {"tz": "posixrules"}),
        ("incrcheck", (f"{k}:daily", 1, "day", [1]), {"tz": "Asia/Kolkata"}),
        ("incrcheck", (f"{k}:daily", 1, "DAY", [1, 2]), {"tz": "asia/kolkata"}),
        ("incrcheck", (f"{k}:daily", 1, "day", [1]), {"tz": "Nowhere/City"}),
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
        # Campaigns (the scripts keep them in their own layout).
        ("create", (f"{k}:sale", 2), {"peruser": 2, "ledger": f"{k}:ledger"}),
        ("create", (f"{k}:sale", 2), {}),
        ("reserve", (f"{k}:sale", "u1"), {"request_id": "r1", "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u1"), {"request_id": "r1", "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u2"), {"request_id": "r1", "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u1"), {"hold": 30, "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u1"), {"ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u2"), {}),
        ("confirm", (f"{k}:sale", 1), {"ledger": f"{k}:ledger"}),
        ("confirm", (f"{k}:sale", 1), {"ledger": f"{k}:ledger"}),
        ("confirm", (f"{k}:sale", 9), {"ledger": f"{k}:ledger"}),
        ("campaign_info", (f"{k}:sale",), {}),
        ("claims", (f"{k}:sale",), {"start": 2, "count": 5}),
        ("alter", (f"{k}:sale",), {"limit": 3, "ledger": f"{k}:ledger"}),
        ("alter", (f"{k}:sale",), {"limit": 0, "ledger": f"{k}:ledger"}),
        ("reclaim", (f"{k}:sale",), {"count": 5, "ledger": f"{k}:ledger"}),
        ("release", (f"{k}:sale", 2), {"ledger": f"{k}:ledger"}),
        ("release", (f"{k}:sale", 2), {"ledger": f"{k}:ledger"}),
        # Units: 2 held (r2), the same again, then with another qty; 1 of 2
        # confirmed (the other free at once); a cart of 1 and 2.
        ("alter", (f"{k}:sale",), {"limit": 6, "peruser": 3, "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u6"), {"qty": 2, "request_id": "r2", "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u6"), {"qty": 2, "request_id": "r2", "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u6"), {"qty": 1, "request_id": "r2", "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u6"), {"qty": 2, "ledger": f"{k}:ledger"}),
        ("reserve", (f"{k}:sale", "u7"), {"qty": 0, "ledger": f"{k}:ledger"}),
        ("claims", (f"{k}:sale",), {}),
        ("confirm", (f"{k}:sale", 5), {"qty": 3, "ledger": f"{k}:ledger"}),
        ("confirm", (f"{k}:sale", 5), {"qty": 1, "ledger": f"{k}:ledger"}),
        ("confirm", (f"{k}:sale", 5), {"qty": 2, "ledger": f"{k}:ledger"}),
        ("campaign_info", (f"{k}:sale",), {}),
        ("create", (f"{k}:sale-units", 4), {"peruser": 4}),
        ("reserve_all", ([f"{k}:sale-units", f"{k}:sale"], "u8"), {"qty": [3, 1], "ledger": f"{k}:ledger"}),
        ("reserve_all", ([f"{k}:sale-units", f"{k}:sale"], "u9"), {"qty": [2, 1], "ledger": f"{k}:ledger"}),
        ("reserve_all", ([f"{k}:sale-units", f"{k}:sale"], "u9"), {"qty": [1], "ledger": f"{k}:ledger"}),
        ("reserve_all", ([f"{k}:sale-units", f"{k}:sale"], "u9"), {"qty": [1, 1, 1], "ledger": f"{k}:ledger"}),
        ("campaign_info", (f"{k}:sale-units",), {}),
        ("create", (f"{k}:cart", 1), {}),
        ("reserve_all", ([f"{k}:cart", f"{k}:sale"], "u3"), {"ledger": f"{k}:ledger"}),
        ("reserve_all", ([f"{k}:cart", f"{k}:sale"], "u4"), {"ledger": f"{k}:ledger"}),
        ("issue", (f"{k}:sale", "u5", 3), {"ledger": f"{k}:ledger"}),
        ("issue", (f"{k}:sale", "u5", 2), {"ledger": f"{k}:ledger"}),
        ("revoke", (f"{k}:sale", "u1"), {"ledger": f"{k}:ledger"}),
        ("campaign_info", (f"{k}:sale",), {}),
        ("campaign_info", (f"{k}:nothing",), {}),
        ("campaign_info", (f"{k}:coupons",), {}),
        ("reserve", (f"{k}:coupons", "u1"), {}),
    ]


def timeless(result: Any) -> Any:
    """A result with its times in ms (a hold's end, made at each backend's
    own instant) replaced by a word."""
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*map(timeless, result))
    if isinstance(result, (list, tuple)):
        return type(result)(map(timeless, result))
    if isinstance(result, int) and not isinstance(result, bool) and result > 10**12:
        return "a time in ms"
    return result


async def outcomes(client: Client, tag: str) -> List[Any]:
    """Each call's result, or its error's class and text."""
    results: List[Any] = []
    for method, args, kwargs in calls(tag):
        try:
            results.append(timeless(await client.call(method, *args, **kwargs)))
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


@pytest.mark.parametrize("name,scripted", list(SCRIPTED.items()), ids=list(SCRIPTED))
def test_a_pipeline_loads_a_script_once_and_again_after_noscript(name: str, scripted: Any) -> None:
    """A guard's pipelines load a script the first time only; after SCRIPT
    FLUSH their calls answered NOSCRIPT (none of them ran) load it and run
    once more: each call counted once."""
    tag = uuid.uuid4().hex
    nodes = address("GUARD_PLAIN_CLUSTER" if "cluster" in name else "GUARD_PLAIN")

    def loads() -> int:
        stats = [admin(host, port).info("commandstats") for host, port in nodes]
        return sum(int(s.get("cmdstat_script|load", s.get("cmdstat_script", {})).get("calls", 0)) for s in stats)

    async def body(client: Client) -> None:
        key = f"{{{tag}}}:n"
        for round, flushed in enumerate((False, False, True)):
            if flushed:
                for host, port in nodes:
                    admin(host, port).script_flush()
            before = loads()
            pipe = client.guard.pipeline(transaction=False)
            results = await value(pipe.incrcheck(key, 1, 60, [100]).incrcheck(key, 1, 60, [100]).execute())
            assert [tuple(r) for r in results] == [(2 * round + 1, 0), (2 * round + 2, 0)], (name, round)
            assert loads() - before == (0 if round == 1 else 1), (name, round)

    run_with(scripted, body)


@pytest.mark.parametrize("name,scripted", list(SCRIPTED.items()), ids=list(SCRIPTED))
def test_a_pipeline_after_noscript_keeps_its_calls_in_order(name: str, scripted: Any) -> None:
    """After SCRIPT FLUSH, a pipeline whose guard believes CL.THROTTLE
    loaded but has yet to load CL.REFUND: the throttle then the refund of
    one key, as queued. The module (and a pipeline that loads every
    script first) consumes, then gives back: the cell is empty after.
    Sending the NOSCRIPT'd throttle again after the others runs the
    refund first (on nothing) and leaves the request consumed."""
    tag = uuid.uuid4().hex
    nodes = address("GUARD_PLAIN_CLUSTER" if "cluster" in name else "GUARD_PLAIN")

    async def body(client: Client) -> None:
        key = f"{{{tag}}}:cell"
        await value(client.guard.pipeline(transaction=False).throttle(f"{{{tag}}}:warm", 0, 1, 60).execute())
        for host, port in nodes:
            admin(host, port).script_flush()
        pipe = client.guard.pipeline(transaction=False)
        taken, given = await value(pipe.throttle(key, 0, 1, 60).refund(key, 0, 1, 60, 1).execute())
        assert (taken.limited, taken.remaining) == (False, 0), name
        assert given.remaining == 1, name
        # A peek (quantity 0): the refund gave the request back.
        peek = await value(client.guard.throttle(key, 0, 1, 60, 0))
        assert peek.remaining == 1, (name, "the refund ran before the throttle")

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
    # GUARD_PLAIN is locked down as managed services are (COMMAND, MODULE
    # and CONFIG renamed away): the figures are differences, not reset.
    errors_before = error_count(server)
    with caplog.at_level(logging.WARNING, logger="redis_guard"):
        for i in range(5):
            assert g.incrcheck("auto:k", 1, 60, [3]) == (i + 1, 1 if i == 2 else 0)
    assert len([r for r in caplog.records if r.name == "redis_guard"]) == 1
    assert error_count(server) - errors_before == 1
    server.script_flush()
    assert g.decrclamp("auto:k", 1) == 4
    with pytest.raises(redis.ResponseError, match="unknown command"):
        Guard(client, backend="module").incrcheck("auto:m", 1, 60, [3])
    with pytest.raises(ValueError):
        Guard(redis.Redis(host=host, port=port), backend="lua")  # type: ignore[arg-type]


def error_count(server: Any) -> int:
    """The error replies the server has given (INFO errorstats), but
    NOSCRIPT: a script's first run on a server whose cache lacks it."""
    # redis-py parses an INFO line's fields, or (older) leaves "count=N".
    return sum(int(stat["count"]) if isinstance(stat, dict) else int(str(stat).split("=")[1])
               for name, stat in server.info("errorstats").items() if name != "errorstat_NOSCRIPT")


def test_keys_move_between_the_module_and_the_scripts_both_ways() -> None:
    """On a server with the module, a guard on each backend: the calls go
    to one then the other on the same keys (each key written by one, read
    by the other, both ways) and answer what the module alone answers.
    Sliding windows and campaigns, kept in another layout, are refused as
    WRONGTYPE."""
    import redis

    (host, port), = address("GUARD_STANDALONE")
    client = redis.Redis(host=host, port=port)
    backends = {"module": Guard(client, backend="module"), "scripts": Guard(client, backend="scripts")}

    def moving(tag: str) -> List[Tuple[str, Tuple[Any, ...], Dict[str, Any]]]:
        """The calls on the module's plain values (windows and campaigns
        are module types the scripts keep in their own layout: checked
        below)."""
        return [call for call in calls(tag)
                if call[0] != "slidecheck" and ":sale" not in str(call[1][0]) and ":cart" not in str(call[1][0])]

    def run(tag: str, order: List[str]) -> List[Any]:
        results: List[Any] = []
        for i, (method, args, kwargs) in enumerate(moving(tag) + moving(tag)):
            try:
                results.append(getattr(backends[order[i % len(order)]], method)(*args, **kwargs))
            except redis.ResponseError as error:
                results.append(str(error))
        return results

    def alerts(tag: str) -> List[Dict[bytes, bytes]]:
        """The alert entries' fields, the tag left out of the key named."""
        return [{name: data.replace(tag.encode(), b"T") for name, data in fields.items()}
                for _, fields in client.xrange(f"{{{tag}}}:alerts")]

    reference = uuid.uuid4().hex
    alone = run(reference, ["module"])
    assert alerts(reference), "the calls raise alerts"
    for order in (["module", "scripts"], ["scripts", "module"]):
        tag = uuid.uuid4().hex
        assert run(tag, order) == alone, order
        assert alerts(tag) == alerts(reference), order
    # A window does not move: the other backend refuses it, both ways.
    for maker, other in (("module", "scripts"), ("scripts", "module")):
        window = f"{{{uuid.uuid4().hex}}}:win"
        assert backends[maker].slidecheck(window, 1, 60, [3]) == (1, 0)
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE "):
            backends[other].slidecheck(window, 1, 60, [3])
        # Nor does a campaign.
        campaign = f"{{{uuid.uuid4().hex}}}:sale"
        assert backends[maker].create(campaign, 5) is True
        with pytest.raises(redis.ResponseError, match="^WRONGTYPE "):
            backends[other].reserve(campaign, "u1")
    client.close()


def test_a_server_without_command_module_and_config() -> None:
    """GUARD_PLAIN has COMMAND, MODULE and CONFIG renamed away, as Aiven
    and others block them: every client's "auto" guard answers there what
    it answers on the module, and the server counted no error but the one
    module command that switched it and the calls' own (and the NOSCRIPT
    of a script's first run)."""
    import redis

    (host, port), = address("GUARD_PLAIN")
    server = admin(host, port)
    for blocked in (["COMMAND", "COUNT"], ["MODULE", "LIST"], ["CONFIG", "GET", "port"]):
        with pytest.raises(redis.ResponseError, match="unknown command"):
            server.execute_command(*blocked)
    for name, make in STANDALONE.items():
        tag = uuid.uuid4().hex
        got: Dict[str, List[Any]] = {}

        async def on_module(client: Client) -> None:
            got["module"] = await outcomes(client, tag)

        async def on_plain(client: Client) -> None:
            await value(client.raw("PING"))
            errors_before = error_count(server)
            got["auto"] = await outcomes(client, tag)
            refused = [r for r in got["auto"] if type(r) is tuple]  # (class, text), not a result
            # The one module command that switched it, and the calls' own errors.
            assert error_count(server) - errors_before == 1 + len(refused), (name, got["auto"])

        run_with(make, on_module)
        run_with(functools.partial(make, where="GUARD_PLAIN"), on_plain)
        assert got["auto"] == got["module"], name


def test_noscript_after_a_restart_loads_again_and_runs_once_more(tmp_path: Path) -> None:
    """A restart empties the script cache while the client's guard lives
    on: its next call gets NOSCRIPT, loads the script, runs it once more,
    and continues the counter the AOF kept."""
    import redis

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    def start() -> "subprocess.Popen[bytes]":
        server = subprocess.Popen(
            [os.environ.get("GUARD_SERVER", "redis-server"), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path),
             "--appendonly", "yes", "--save", "", "--rename-command", "MODULE", "", "--rename-command", "COMMAND", ""],
            stdout=subprocess.DEVNULL)
        for _ in range(200):
            try:
                redis.Redis(port=port).ping()
                return server
            except redis.ConnectionError:
                time.sleep(0.02)
        server.kill()
        raise AssertionError("the server did not start")

    server = start()
    try:
        client = redis.Redis(port=port)
        g = Guard(client, backend="scripts")
        assert [g.incrcheck("restart:k", 1, 60, [5]) for _ in range(3)] == [(1, 0), (2, 0), (3, 0)]
        redis.Redis(port=port).shutdown()
        server.wait(10)
        server = start()
        assert g.incrcheck("restart:k", 1, 60, [5]) == (4, 0)
        stats = admin("127.0.0.1", port).info("commandstats")
        evalsha = stats["cmdstat_evalsha"]
        loads = stats.get("cmdstat_script|load", stats.get("cmdstat_script", {})).get("calls")
        refused = int(evalsha.get("failed_calls", 0)) + int(evalsha.get("rejected_calls", 0))
        assert (evalsha["calls"], refused, loads) == (2, 1, 1), stats
        client.close()
    finally:
        server.kill()
        server.wait(10)


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
