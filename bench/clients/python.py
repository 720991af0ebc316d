"""`make bench-clients`, the Python half: through redis-py's and
valkey-glide's cluster clients, sequential and pipelined, the package's
MON.INCRCHECK, CL.THROTTLE and COUPON.RESERVE against INCRBY and the Lua
twins through the same client, and the server commands each call cost
(INFO commandstats and errorstats of every primary); and the package's
MON.INCRCHECK, CL.THROTTLE and COUPON.RESERVE on its scripts backend. Prints one JSON
object a row; bench/bench_clients.rs makes the table. GUARD_CLUSTER names the
primaries, GUARD_BENCH_SECONDS the time a row runs."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import glide_sync
import redis
import redis.cluster
from redis_guard import Guard

SECONDS = float(os.environ.get("GUARD_BENCH_SECONDS", "1.5"))
BATCH = 16
SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
NODES = [(h, int(p)) for h, p in (a.rsplit(":", 1) for a in os.environ["GUARD_CLUSTER"].split(","))]
TWINS = {name: (SCRIPTS / f"{name}.lua").read_text() for name in ("incrcheck", "throttle", "campaign_reserve")}
CAMPAIGNS = [f"{{cpn{n}}}" for n in range(12)]
# The module's commands and the twins' EVALSHA, and what routing costs.
COUNTED = ("mon.incrcheck", "cl.throttle", "coupon.reserve", "incrby", "evalsha", "command|getkeys")


def admins() -> List[redis.Redis]:
    return [redis.Redis(host=h, port=p) for h, p in NODES]


def server_cost() -> Dict[str, int]:
    total: Dict[str, int] = {}
    for node in admins():
        for name, stat in node.info("commandstats").items():
            name = name.removeprefix("cmdstat_")
            if name in COUNTED:
                total[name] = total.get(name, 0) + int(stat["calls"]) + int(stat.get("rejected_calls", 0))
        for name, stat in node.info("errorstats").items():
            total[name] = total.get(name, 0) + int(stat["count"])
    return total


def reset() -> None:
    for node in admins():
        node.config_resetstat()


def prepare() -> Dict[str, str]:
    shas = {}
    for node in admins():
        for name, body in TWINS.items():
            shas[name] = node.script_load(body)
    setup = redis.cluster.RedisCluster(startup_nodes=[redis.cluster.ClusterNode(h, p) for h, p in NODES])
    guard, scripted = Guard(setup), Guard(setup, backend="scripts")
    for tag in CAMPAIGNS:
        if not setup.exists(f"{tag}:cpn"):
            guard.create(f"{tag}:cpn", 10**9, hold=3600)
            # The scripts keep a campaign in their own layout (WRONGTYPE to the module's).
            scripted.create(f"{tag}:scpn", 10**9, hold=3600)
            setup.hset(f"{tag}:meta", mapping={"limit": 10**9, "peruser": 1, "confirmed": 0})
    setup.close()
    return shas


class Row:
    """One operation: how to make its i-th call, alone or in a batch."""

    def __init__(self, name: str, one: Callable[[int], Any], batch: Optional[Callable[[List[int]], Any]]) -> None:
        self.name, self.one, self.batch = name, one, batch


def measure(row: Row, pipelined: bool) -> Optional[Tuple[float, Dict[str, int], int]]:
    if pipelined and row.batch is None:
        return None
    reset()
    calls, i = 0, 0
    deadline = time.perf_counter() + SECONDS
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        if pipelined:
            assert row.batch is not None
            row.batch(list(range(i, i + BATCH)))
            i += BATCH
            calls += BATCH
        else:
            row.one(i)
            i += 1
            calls += 1
    elapsed = time.perf_counter() - start
    return calls / elapsed, server_cost(), calls


def counter(i: int) -> str:
    return f"{{k{i % 1000}}}:n"


def campaign(i: int) -> str:
    return CAMPAIGNS[i % len(CAMPAIGNS)]


Queue = Callable[[Any, int], Any]


def batches(new: Callable[[], Any], send: Callable[[Any], Any]) -> Callable[[Queue], Callable[[List[int]], Any]]:
    """A row's pipelined sender: a fresh batch from `new`, the calls of
    `indexes` queued on it, `send` runs it."""

    def of(queue: Queue) -> Callable[[List[int]], Any]:
        def run(indexes: List[int]) -> Any:
            batch = new()
            for i in indexes:
                queue(batch, i)
            return send(batch)

        return run

    return of


def redis_py_rows(shas: Dict[str, str], run: str) -> List[Row]:
    client = redis.cluster.RedisCluster(startup_nodes=[redis.cluster.ClusterNode(h, p) for h, p in NODES])
    g = Guard(client)

    pipelined = batches(client.pipeline, lambda pipe: pipe.execute())

    guard_pipelined = batches(lambda: g.pipeline(transaction=False), lambda pipe: pipe.execute())

    def user(i: int) -> str:
        return f"{run}:py:{i}"

    return [
        Row("INCRBY", lambda i: client.incrby(counter(i), 1), pipelined(lambda p, i: p.incrby(counter(i), 1))),
        Row("MON.INCRCHECK (package)", lambda i: g.incrcheck(counter(i), 1, 3600, [10**9]),
            guard_pipelined(lambda p, i: p.incrcheck(counter(i), 1, 3600, [10**9]))),
        Row("MON.INCRCHECK (raw call)", lambda i: client.execute_command("MON.INCRCHECK", counter(i), 1, 3600, 10**9), None),
        Row("incrcheck.lua (EVALSHA)", lambda i: client.evalsha(shas["incrcheck"], 1, counter(i), 1, 3600, 10**9),
            pipelined(lambda p, i: p.execute_command("EVALSHA", shas["incrcheck"], 1, counter(i), 1, 3600, 10**9))),
        Row("CL.THROTTLE (package)", lambda i: g.throttle(counter(i) + "t", 10**6, 10**6, 1),
            guard_pipelined(lambda p, i: p.throttle(counter(i) + "t", 10**6, 10**6, 1))),
        Row("throttle.lua (EVALSHA)", lambda i: client.evalsha(shas["throttle"], 1, counter(i) + "l", 10**6, 10**6, 1, 1),
            pipelined(lambda p, i: p.execute_command("EVALSHA", shas["throttle"], 1, counter(i) + "l", 10**6, 10**6, 1, 1))),
        *scripts_rows(client, user),
        Row("COUPON.RESERVE (package)", lambda i: g.reserve(f"{campaign(i)}:cpn", user(i)),
            guard_pipelined(lambda p, i: p.reserve(f"{campaign(i)}:cpn", user(i) + "p"))),
        Row("campaign_reserve.lua (EVALSHA)",
            lambda i: client.evalsha(shas["campaign_reserve"], 4, *twin_keys(campaign(i)), user(i), 3600),
            pipelined(lambda p, i: p.execute_command("EVALSHA", shas["campaign_reserve"], 4, *twin_keys(campaign(i)), user(i) + "p", 3600))),
    ]


def scripts_rows(client: Any, user: Callable[[int], str]) -> List[Row]:
    """The package's MON.INCRCHECK, CL.THROTTLE and COUPON.RESERVE on its
    scripts backend through ``client`` (the module loaded or not, the
    package sends EVALSHA)."""
    g = Guard(client, backend="scripts")
    pipelined = batches(lambda: g.pipeline(transaction=False), lambda pipe: pipe.execute())
    return [
        Row("MON.INCRCHECK (scripts)", lambda i: g.incrcheck(counter(i), 1, 3600, [10**9]),
            pipelined(lambda p, i: p.incrcheck(counter(i), 1, 3600, [10**9]))),
        Row("CL.THROTTLE (scripts)", lambda i: g.throttle(counter(i) + "t", 10**6, 10**6, 1),
            pipelined(lambda p, i: p.throttle(counter(i) + "t", 10**6, 10**6, 1))),
        Row("COUPON.RESERVE (scripts)", lambda i: g.reserve(f"{campaign(i)}:scpn", user(i)),
            pipelined(lambda p, i: p.reserve(f"{campaign(i)}:scpn", user(i) + "p"))),
    ]


def twin_keys(tag: str) -> List[str]:
    return [f"{tag}:meta", f"{tag}:claims", f"{tag}:holds", f"{tag}:users"]


def glide_rows(shas: Dict[str, str], run: str) -> List[Row]:
    config = glide_sync.GlideClusterClientConfiguration([glide_sync.NodeAddress(h, p) for h, p in NODES])
    client = glide_sync.GlideClusterClient.create(config)
    g = Guard(client)
    scripts = {name: glide_sync.Script(body) for name, body in TWINS.items()}

    batched = batches(lambda: glide_sync.ClusterBatch(is_atomic=False), lambda batch: client.exec(batch, True))

    guard_pipelined = batches(lambda: g.pipeline(transaction=False), lambda pipe: pipe.execute())

    def user(i: int) -> str:
        return f"{run}:glide:{i}"

    def script(name: str, keys: List[str], args: List[Any]) -> Any:
        return client.invoke_script(scripts[name], keys=keys, args=[str(a) for a in args])

    return [
        Row("INCRBY", lambda i: client.incrby(counter(i), 1), batched(lambda b, i: b.incrby(counter(i), 1))),
        Row("MON.INCRCHECK (package)", lambda i: g.incrcheck(counter(i), 1, 3600, [10**9]),
            guard_pipelined(lambda p, i: p.incrcheck(counter(i), 1, 3600, [10**9]))),
        Row("MON.INCRCHECK (raw call)",
            lambda i: client.custom_command(["MON.INCRCHECK", counter(i), "1", "3600", str(10**9)]), None),
        Row("incrcheck.lua (EVALSHA)", lambda i: script("incrcheck", [counter(i)], [1, 3600, 10**9]), None),
        Row("CL.THROTTLE (package)", lambda i: g.throttle(counter(i) + "t", 10**6, 10**6, 1),
            guard_pipelined(lambda p, i: p.throttle(counter(i) + "t", 10**6, 10**6, 1))),
        Row("throttle.lua (EVALSHA)", lambda i: script("throttle", [counter(i) + "l"], [10**6, 10**6, 1, 1]), None),
        *scripts_rows(client, user),
        Row("COUPON.RESERVE (package)", lambda i: g.reserve(f"{campaign(i)}:cpn", user(i)),
            guard_pipelined(lambda p, i: p.reserve(f"{campaign(i)}:cpn", user(i) + "p"))),
        Row("campaign_reserve.lua (EVALSHA)",
            lambda i: script("campaign_reserve", twin_keys(campaign(i)), [user(i), 3600]), None),
    ]


def main() -> None:
    shas = prepare()
    run = str(time.time_ns())
    for client, rows in (("redis-py 8.1", redis_py_rows(shas, run)), ("valkey-glide 2.5 (sync)", glide_rows(shas, run))):
        for row in rows:
            for pipelined in (False, True):
                measured = measure(row, pipelined)
                if measured is None:
                    continue
                rate, cost, calls = measured
                print(json.dumps({"client": client, "op": row.name, "pipelined": pipelined,
                                  "calls_per_s": round(rate), "calls": calls, "server": cost}), flush=True)


main()
