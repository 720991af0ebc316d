"""Every method on every standalone client: the exact words the server
sees (MONITOR), the result worked out by hand, the same values as the raw
reply, errors as the client raises them for a raw call, and pipelines."""

from __future__ import annotations

import re
import threading
import time
from datetime import timedelta
from typing import Any, Callable, Dict, List

import pytest

from cases import CASES, ERRORS, Case, decoded, first_key, plain, wire_of
from conftest import CLUSTER, STANDALONE, Client, address, admin, run_with, value
from redis_guard import CampaignExists, Confirm, GuardError, NoSuchCampaign, WrongType


class Monitor:
    """The commands the server runs, as MONITOR shows them, until stopped."""

    STOP = "ECHO redis-guard-monitor-stop"

    def __init__(self) -> None:
        (host, port), = address("GUARD_STANDALONE")
        self._admin = admin(host, port)
        self._monitor = self._admin.monitor().__enter__()
        self.lines: List[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        # Raw lines: redis-py's own parser stops at a line without a client
        # address, which Valkey 9 writes for a module's internal calls.
        while True:
            raw = self._monitor.connection.read_response()
            raw = raw.decode() if isinstance(raw, bytes) else str(raw)
            line = " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', raw.split("] ", 1)[-1]))
            if line == self.STOP:
                return
            self.lines.append(line)

    def stop(self) -> List[str]:
        self._admin.execute_command(*self.STOP.split())
        self._thread.join(10)
        assert not self._thread.is_alive(), "MONITOR never saw its stop word"
        return self.lines


def same(result: Any, expected: Any) -> bool:
    return bool(expected(result)) if callable(expected) else result == expected


def close_to(ours: Any, raw: Any) -> bool:
    """Equal, but for absolute times in ms (the twin ran a moment later)."""
    if isinstance(ours, list) and isinstance(raw, list):
        return len(ours) == len(raw) and all(close_to(a, b) for a, b in zip(ours, raw))
    if isinstance(ours, int) and isinstance(raw, int) and min(ours, raw) > 10**12:
        return abs(ours - raw) <= 2000
    return bool(ours == raw)


def prepare(case: Case) -> None:
    (host, port), = address("GUARD_STANDALONE")
    node = admin(host, port)
    for words in case.setup:
        node.execute_command(*words)


def per_flavour(body: Callable[[str, Client], Any]) -> Callable[[str], None]:
    @pytest.mark.parametrize("flavour", list(STANDALONE))
    def test(flavour: str) -> None:
        run_with(STANDALONE[flavour], lambda client: body(flavour, client))

    test.__name__ = body.__name__
    test.__doc__ = body.__doc__
    return test


async def _every_method(flavour: str, client: Client) -> None:
    """Each case: the words sent, the result by hand, the raw twin's reply."""
    monitor = Monitor()
    sent = []
    for n, template in enumerate(CASES):
        case = template.bind(f"{{{flavour}:{n}}}:k", f"{{{flavour}:{n}}}:k2")
        twin = template.bind(f"{{{flavour}:{n}}}:twin", f"{{{flavour}:{n}}}:twin2")
        prepare(case)
        prepare(twin)
        time.sleep(case.wait)  # holds of 1 s expire
        result = await client.call(case.method, *case.args, **case.kwargs)
        raw = await value(client.raw(*twin.words))
        assert same(decoded(result), case.expected), (case.method, case.args, case.kwargs, result)
        assert close_to(wire_of(result), plain(raw)), (case.method, result, raw)
        sent.append(case)
    lines = monitor.stop()
    for case in sent:
        key = first_key(case.words)
        setup = {" ".join(words) for words in case.setup}
        seen = [line for line in lines if line.split()[0].upper() == case.words[0] and key in line.split()
                and line not in setup]
        assert seen == [" ".join(case.words)], (case.method, case.kwargs, seen)


def raw_info(node: Any, campaign: str) -> Dict[str, int]:
    """COUPON.INFO by a raw call: a map (RESP3) or pairs (RESP2)."""
    reply = node.execute_command("COUPON.INFO", campaign)
    return dict(reply) if isinstance(reply, dict) else dict(zip(reply[::2], reply[1::2]))


async def _errors(flavour: str, client: Client) -> None:
    """Each bad call raises the package's error, which is also the
    client's own, with the server's text as redis-py reads it (the same
    through every client: no ``ERR ``, no glide preamble), and writes
    nothing."""
    import redis

    (host, port), = address("GUARD_STANDALONE")
    node = admin(host, port)
    for n, (method, args, kwargs, words) in enumerate(ERRORS):
        case = Case(method, args, kwargs, words, None).bind(f"{{e:{flavour}:{n}}}:k", f"{{e:{flavour}:{n}}}:k2")
        with pytest.raises(GuardError) as ours:
            await client.call(case.method, *case.args, **case.kwargs)
        with pytest.raises(redis.ResponseError) as raw:
            node.execute_command(*case.words)
        assert isinstance(ours.value, client.error), (method, type(ours.value).__mro__)
        assert str(ours.value) == str(raw.value), (method, kwargs)
        assert not str(ours.value).startswith("ERR "), str(ours.value)
        assert node.exists(*{case.words[1], f"{{e:{flavour}:{n}}}:k"}) == 0, (method, "wrote")
    # A key of another type: WrongType, the server's text.
    node.sadd(f"{{e:{flavour}}}:set", "x")
    for method, args in [("incrcheck", (1, 60, 3)), ("slidecheck", (1, 60, 3)), ("throttle", (1, 1, 1)),
                         ("reserve", ("u",))]:
        with pytest.raises(WrongType) as ours:
            await client.call(method, f"{{e:{flavour}}}:set", *args)
        assert isinstance(ours.value, client.error)
        assert str(ours.value) == "WRONGTYPE Operation against a key holding the wrong kind of value"
    # A campaign that exists, and one that does not.
    campaign = f"{{e:{flavour}}}:campaign"
    assert await client.call("create", campaign, 2) is True
    with pytest.raises(CampaignExists) as exists:
        await client.call("create", campaign, 2)
    assert isinstance(exists.value, client.error)
    assert str(exists.value) == "BUSYKEY Target key name already exists."
    assert await client.call("create", campaign, 9, exist_ok=True) is False
    assert raw_info(node, campaign)["limit"] == 2, "exist_ok changed nothing"
    for method, args in [("campaign_info", ()), ("reserve", ("u",)), ("claims", ())]:
        with pytest.raises(NoSuchCampaign) as missing:
            await client.call(method, f"{{e:{flavour}}}:none", *args)
        assert isinstance(missing.value, client.error) and str(missing.value) == "no such campaign"
    # Not the server's: raised as the client raises it.
    with pytest.raises(TypeError):
        await client.call("incrcheck", f"{{e:{flavour}}}:k", 1.5, 60, 3)


async def _pipelines(flavour: str, client: Client) -> None:
    """Queued calls give the same results in order, with and without a
    transaction; an error in one raises as the client raises it."""
    plain_cases = [case for case in CASES if not case.setup]
    for transaction in (True, False, None):
        bound = [case.bind(f"{{p:{flavour}:{transaction}}}:{n}", f"{{p:{flavour}:{transaction}}}:{n}b")
                 for n, case in enumerate(plain_cases)]
        pipe = client.guard.pipeline(transaction=transaction)
        for case in bound:
            assert getattr(pipe, case.method)(*case.args, **case.kwargs) is pipe
        assert len(pipe) == len(bound)
        results = await value(pipe.execute())
        assert len(results) == len(bound)
        for case, result in zip(bound, results):
            assert same(decoded(result), case.expected), (transaction, case.method, result)
    pipe = client.guard.pipeline(transaction=False)
    pipe.incrcheck(f"{{p:{flavour}}}:bad", 0, 60, 3)
    with pytest.raises(client.error):
        await value(pipe.execute())


async def _typed_results_and_the_applications_commands(flavour: str, client: Client) -> None:
    """CONFIRM's answers by name, seconds as timedelta, and the
    application's own commands in a guard pipeline: in a transaction they
    share its MULTI with the guard's calls."""
    (host, port), = address("GUARD_STANDALONE")
    node = admin(host, port)
    campaign, order = f"{{t:{flavour}}}:campaign", f"{{t:{flavour}}}:order"
    assert await client.call("create", campaign, 1, hold=timedelta(minutes=2)) is True
    assert raw_info(node, campaign)["hold"] == 120
    held = await client.call("reserve", campaign, "u1", hold=timedelta(seconds=30))
    assert 29_000 <= held.expires_at_ms - int(time.time() * 1000) <= 30_000
    answers = [await client.call("confirm", campaign, claim) for claim in (held.claim, held.claim, 99)]
    assert answers == [Confirm.CONFIRMED, Confirm.ALREADY, Confirm.NO_CLAIM] == [1, 0, -3]
    assert [answer.name for answer in answers] == ["CONFIRMED", "ALREADY", "NO_CLAIM"]
    assert str(answers[0]) == "1"
    info = await client.call("campaign_info", campaign)
    assert (info.confirmed, info.available, info["confirmed"]) == (1, 0, 1)
    await client.call("incrcheck", f"{{t:{flavour}}}:n", 1, timedelta(hours=1), 5)
    assert 3590 <= node.ttl(f"{{t:{flavour}}}:n") <= 3600
    with pytest.raises(ValueError, match="whole seconds"):
        await client.call("throttle", f"{{t:{flavour}}}:never", 1, 1, timedelta(seconds=1.5))
    assert not node.exists(f"{{t:{flavour}}}:never")
    monitor = Monitor()
    pipe = client.guard.pipeline(transaction=True)
    pipe.release(campaign, held.claim).execute_command("SET", order, "refunded").create(campaign, 1, exist_ok=True)
    results = await value(pipe.execute())
    lines = [line for line in monitor.stop() if flavour in line or line.split()[0] in ("MULTI", "EXEC")]
    assert results[0] == 1 and decoded(results[1]) in ("OK", True) and results[2] is False, results
    assert node.get(order) == "refunded"
    at = lines.index(f"COUPON.RELEASE {campaign} {held.claim}")
    assert lines[at - 1:at + 4] == ["MULTI", f"COUPON.RELEASE {campaign} {held.claim}", f"SET {order} refunded",
                                    f"COUPON.CREATE {campaign} 1", "EXEC"], lines


async def _an_applications_unknown_command_keeps_the_module(flavour: str, client: Client) -> None:
    """An "auto" guard on a server with the module: an unknown command of
    the application's own, queued in the guard's transaction or pipeline,
    fails as itself and does not switch the guard to scripts (which would
    meet the module's keys as WRONGTYPE). Found by the attack review."""
    window = f"{{u:{flavour}}}:window"
    assert (await client.call("slidecheck", window, 1, 60, [5])).current == 1
    for transaction in (True, False):
        pipe = client.guard.pipeline(transaction=transaction)
        pipe.execute_command("NO.SUCHCMD", f"{{u:{flavour}}}:x").incrcheck(f"{{u:{flavour}}}:n", 1, 60, [5])
        with pytest.raises(client.error, match="NO.SUCHCMD"):
            await value(pipe.execute())
    assert (await client.call("slidecheck", window, 1, 60, [5])).current == 2


test_every_method = per_flavour(_every_method)
test_an_applications_unknown_command_keeps_the_module = per_flavour(_an_applications_unknown_command_keeps_the_module)
test_typed_results_and_the_applications_commands = per_flavour(_typed_results_and_the_applications_commands)
test_errors = per_flavour(_errors)
test_pipelines = per_flavour(_pipelines)


def test_a_client_of_the_other_kind_is_refused() -> None:
    import redis
    import redis.asyncio

    from redis_guard import AsyncGuard, Guard

    with pytest.raises(TypeError, match="AsyncGuard"):
        Guard(redis.asyncio.Redis())
    with pytest.raises(TypeError, match="sync"):
        AsyncGuard(redis.Redis())
    with pytest.raises(TypeError):
        Guard(object())


def test_wrong_argument_types_raise_before_anything_is_sent() -> None:
    """A string of thresholds would be sent digit by digit, and True as a
    quantity would pass for the default 1: both are refused here."""
    import redis

    from redis_guard import Guard

    g = Guard(redis.Redis(host="127.0.0.1", port=1))  # never reached
    for call in (
        lambda: g.incrcheck("k", 1, 60, "15"),  # type: ignore[arg-type]
        lambda: g.throttle("k", 1, 1, 1, quantity=True),
        lambda: g.throttle_all([("k", 1, 1, 1)], quantity=True),
        lambda: g.incrcheck("k", 1.5, 60, 3),  # type: ignore[arg-type]
    ):
        with pytest.raises(TypeError):
            call()


@pytest.mark.parametrize("flavour", list(CLUSTER))
def test_a_cluster_transaction_carries_the_applications_commands(flavour: str) -> None:
    """In a cluster the guard's transaction and the application's own
    commands (same slot) share one MULTI on the key's owner."""
    tag = f"{{x:{flavour}}}"

    async def body(client: Client) -> None:
        pipe = client.guard.pipeline(transaction=True)
        pipe.incrcheck(f"{tag}:n", 1, 60, 3).execute_command("SET", f"{tag}:order", "paid").decrclamp(f"{tag}:n", 1)
        results = await value(pipe.execute())
        assert (results[0], decoded(results[1]) in ("OK", True), results[2]) == ((1, 0), True, 0), results
        assert decoded(await value(client.raw("GET", f"{tag}:order"))) == "paid"

    run_with(CLUSTER[flavour], body)


def test_aclose_closes_the_connections_the_guard_opened() -> None:
    """An AsyncGuard's transactions over an asyncio cluster client use
    clients of its own, one per node: ``aclose()`` closes them, so nothing
    is left open (ResourceWarning) once the application closes its
    client."""
    import asyncio
    import gc
    import warnings

    import redis.asyncio.cluster

    from redis_guard import AsyncGuard

    async def main() -> None:
        nodes = [redis.asyncio.cluster.ClusterNode(host, port) for host, port in address("GUARD_CLUSTER")]
        client = redis.asyncio.cluster.RedisCluster(startup_nodes=nodes)
        g = AsyncGuard(client)
        for tag in ("a", "b", "c"):
            await g.pipeline(transaction=True).incrcheck(f"{{{tag}}}:close", 1, 60, 3).execute()
        await g.aclose()
        await (client.aclose() if hasattr(client, "aclose") else client.close())

    gc.collect()  # what earlier tests left is not this test's
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        asyncio.run(main())
        gc.collect()
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], [str(w.message) for w in caught]
