"""Routing, counted by the servers: through every cluster client, plain and
pipelined, each method's call is one command on the node that owns its
key's slot — no COMMAND GETKEYS, no MOVED — and after its slot moves to
another node, the calls follow it."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Tuple

import pytest
import redis

from cases import CASES, Case, first_key
from conftest import CLUSTER, Client, address, admin, run_with, value
from redis_guard.slot import key_slot

Node = Tuple[str, int]
#: Calls of each method per run.
N = 5


def nodes() -> List[Node]:
    return address("GUARD_CLUSTER")


def owner(slot: int) -> Node:
    for start, end, (host, port, *_), *_ in admin(*nodes()[0]).execute_command("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return (host if isinstance(host, str) else host.decode(), port)
    raise AssertionError(f"no node serves slot {slot}")


def reset() -> None:
    for node in nodes():
        admin(*node).config_resetstat()


def fields(stat: Any) -> Dict[str, int]:
    """``calls=3,usec=9`` as redis-py parses it (a dict; before 5.0.1 a
    str for errorstats)."""
    if isinstance(stat, dict):
        return {name: int(n) for name, n in stat.items() if str(n).lstrip("-").isdigit()}
    return {name: int(n) for name, n in (part.split("=") for part in str(stat).split(",")) if n.isdigit()}


def counts() -> Dict[Node, Dict[str, int]]:
    """Per node: calls of each command (rejected ones too) and errors by code."""
    seen: Dict[Node, Dict[str, int]] = {}
    for node in nodes():
        server = admin(*node)
        here: Dict[str, int] = {}
        for name, stat in server.info("commandstats").items():
            stat = fields(stat)
            here[name.removeprefix("cmdstat_")] = stat["calls"] + stat.get("rejected_calls", 0)
        for name, stat in server.info("errorstats").items():
            here[name] = fields(stat)["count"]
        seen[node] = here
    return seen


def routed(case: Case) -> Tuple[str, Node]:
    """The module command a case sends and the node that must serve it."""
    return case.words[0].lower(), owner(key_slot(first_key(case.words)))


def prepare(cases: List[Case]) -> None:
    for case in cases:
        for words in case.setup:
            admin(*owner(key_slot(words[1]))).execute_command(*words)
    time.sleep(max((case.wait for case in cases), default=0))  # holds of 1 s expire


def assert_one_command_each(cases: List[Case]) -> None:
    seen = counts()
    wanted: Dict[Tuple[str, Node], int] = {}
    for case in cases:
        command, node = routed(case)
        wanted[(command, node)] = wanted.get((command, node), 0) + 1
    for node, here in seen.items():
        for command in {routed(case)[0] for case in cases}:
            assert here.get(command, 0) == wanted.get((command, node), 0), (command, node, here)
        redirects = {name: n for name, n in here.items() if name in ("errorstat_MOVED", "errorstat_ASK")}
        assert not redirects, (node, redirects)
        assert here.get("command|getkeys", 0) == 0 and here.get("command|getkeysandflags", 0) == 0, node


def bound(flavour: str, round_: str) -> List[Case]:
    return [case.bind(f"{{r:{flavour}:{round_}:{n}:{i}}}:k", f"{{r:{flavour}:{round_}:{n}:{i}}}:k2")
            for i in range(N) for n, case in enumerate(CASES)]


async def _routing(flavour: str, client: Client) -> None:
    cases = bound(flavour, "plain")
    prepare(cases)
    reset()
    for case in cases:
        await client.call(case.method, *case.args, **case.kwargs)
    assert_one_command_each(cases)

    cases = bound(flavour, "pipelined")
    prepare(cases)
    reset()
    pipe = client.guard.pipeline(transaction=False)
    for case in cases:
        getattr(pipe, case.method)(*case.args, **case.kwargs)
    assert len(await value(pipe.execute())) == len(cases)
    assert_one_command_each(cases)

    # A transaction: one slot, one MULTI/EXEC on its owner, no GETKEYS (on
    # every cluster client the package runs it on the owner's own
    # connection: redis-py's cluster transaction would ask for the keys of
    # every command flagged movablekeys, and 8.1's asyncio one then fails).
    tag = f"{{r:{flavour}:multi}}"
    pipe = client.guard.pipeline(transaction=True)
    pipe.incrcheck(f"{tag}:a", 1, 60, 1).throttle_all([(f"{tag}:b", 1, 1, 60)]).issue(f"{tag}:c", "u", 1)
    # The campaign commands of a sale with a ledger, and a cart.
    ledger = f"{tag}:ledger"
    pipe.create(f"{tag}:d", 2, ledger=ledger).create(f"{tag}:e", 1)
    pipe.reserve_all([f"{tag}:d", f"{tag}:e"], "u", ledger=ledger)
    pipe.alter(f"{tag}:d", limit=3, ledger=ledger).reclaim(f"{tag}:d", ledger=ledger)
    commands = {"mon.incrcheck": 1, "cl.throttleall": 1, "coupon.issue": 1, "coupon.create": 2,
                "coupon.reserveall": 1, "coupon.alter": 1, "coupon.reclaim": 1}
    reset()
    results = await value(pipe.execute())
    assert (tuple(results[0]), results[1].limited, results[2]) == ((1, 1), False, 1)
    created, created2, cart, altered, reclaimed = results[3:]
    assert (created, created2, cart.reserved, [r.claim for r in cart.reservations], altered, reclaimed) == (
        True, True, True, [1, 1], True, 0)
    seen = counts()
    here = seen[owner(key_slot(tag))]
    assert here.get("exec") == 1, here
    assert {name: here.get(name) for name in commands} == commands, here
    assert all(stats.get("command|getkeys", 0) == 0 for stats in seen.values()), seen


@pytest.mark.parametrize("flavour", list(CLUSTER))
def test_one_command_per_call_on_the_owner(flavour: str) -> None:
    run_with(CLUSTER[flavour], lambda client: _routing(flavour, client))


def move_slot(slot: int, target: Node) -> None:
    """Moves ``slot`` and its keys to ``target`` the classic way."""
    source = owner(slot)
    src, dst = admin(*source), admin(*target)
    src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    if keys:
        src.execute_command("MIGRATE", target[0], target[1], "", 0, 5000, "KEYS", *keys)
    for node in nodes():
        admin(*node).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)


async def _follows_a_moved_slot(flavour: str, client: Client) -> None:
    key = f"{{m:{flavour}}}:orders"
    slot = key_slot(key)
    await client.call("incrcheck", key, 1, 60, 100)
    target = next(node for node in nodes() if node != owner(slot))
    move_slot(slot, target)
    assert owner(slot) == target
    # The first call after the move may be redirected; it is still answered.
    assert tuple(await client.call("incrcheck", key, 1, 60, 100)) == (2, 0)
    reset()
    for n in range(N):
        assert tuple(await client.call("incrcheck", key, 1, 60, 100)) == (3 + n, 0)
    seen = counts()
    assert seen[target].get("mon.incrcheck") == N, seen[target]
    for node, here in seen.items():
        assert "errorstat_MOVED" not in here and "errorstat_ASK" not in here, (node, here)
        assert here.get("command|getkeys", 0) == 0


@pytest.mark.parametrize("flavour", list(CLUSTER))
def test_calls_follow_a_moved_slot(flavour: str) -> None:
    run_with(CLUSTER[flavour], lambda client: _follows_a_moved_slot(flavour, client))


async def _raw_cost(client: Client, words: List[Any]) -> Dict[str, int]:
    reset()
    for _ in range(N):
        await value(client.raw(*words))
    total: Dict[str, int] = {}
    for here in counts().values():
        for name in ("command|getkeys", "errorstat_MOVED"):
            total[name] = total.get(name, 0) + here.get(name, 0)
    return total


def test_the_check_sees_what_a_raw_call_costs() -> None:
    """Without the package, redis-py asks the server for a movablekeys
    command's keys and glide sends CL.THROTTLEALL by its numkeys: the same
    counters see both, so the checks above can fail."""

    async def redis_py(client: Client) -> None:
        cost = await _raw_cost(client, ["MON.INCRCHECK", "{raw}:k", 1, 60, 3])
        assert cost["command|getkeys"] >= N, cost

    async def glide(client: Client) -> None:
        # "2" hashes to slot 5649; the keys' tag to another node's slot.
        tag = next(t for t in (f"{{raw{n}}}" for n in range(100)) if owner(key_slot(t)) != owner(key_slot("2")))
        cost = await _raw_cost(client, ["CL.THROTTLEALL", "2", f"{tag}a", "1", "1", "60", f"{tag}b", "1", "1", "60"])
        assert cost["errorstat_MOVED"] >= N, cost

    run_with(CLUSTER["redis-py-cluster"], redis_py)
    run_with(CLUSTER["glide-sync-cluster"], glide)


async def _pipelines_run_in_order(flavour: str, client: Client) -> None:
    """CL.THROTTLEALL queued between other calls across slots runs where it
    was queued: the limiter it used up limits the CL.THROTTLE after it."""
    limiter = f"{{o:{flavour}}}:lim"
    pipe = client.guard.pipeline(transaction=False)
    pipe.throttle_all([(limiter, 0, 1, 60)]).throttle(limiter, 0, 1, 60)
    pipe.incrcheck(f"{{o:{flavour}}}:elsewhere-{key_slot(limiter)}", 1, 60, [5])
    pipe.throttle_all([(limiter + "2", 0, 1, 60)]).incrcheck(f"{{p:{flavour}}}:x", 1, 60, [5])
    first, second, check, third, other = await value(pipe.execute())
    assert (first.limited, second.limited, third.limited) == (False, True, False)
    assert (tuple(check), tuple(other)) == ((1, 0), (1, 0))


@pytest.mark.parametrize("flavour", list(CLUSTER))
def test_pipelined_calls_run_in_the_order_queued(flavour: str) -> None:
    run_with(CLUSTER[flavour], lambda client: _pipelines_run_in_order(flavour, client))
