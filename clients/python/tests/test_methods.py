"""Every method on every standalone client: the exact words the server
sees (MONITOR), the result worked out by hand, the same values as the raw
reply, errors as the client raises them for a raw call, and pipelines."""

from __future__ import annotations

import re
import threading
import time
from typing import Any, Callable, List

import pytest

from cases import CASES, ERRORS, Case, decoded, first_key, plain, wire_of
from conftest import STANDALONE, Client, address, admin, run_with, value


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


async def _errors(flavour: str, client: Client) -> None:
    """Each bad call raises the client's own error with the raw call's
    text, and writes nothing."""
    (host, port), = address("GUARD_STANDALONE")
    node = admin(host, port)
    for n, (method, args, kwargs, words) in enumerate(ERRORS):
        case = Case(method, args, kwargs, words, None).bind(f"{{e:{flavour}:{n}}}:k", f"{{e:{flavour}:{n}}}:k2")
        with pytest.raises(client.error) as ours:
            await client.call(case.method, *case.args, **case.kwargs)
        with pytest.raises(client.error) as raw:
            await value(client.raw(*case.words))
        assert str(ours.value) == str(raw.value), (method, kwargs)
        assert node.exists(*{case.words[1], f"{{e:{flavour}:{n}}}:k"}) == 0, (method, "wrote")
    # A key of another type: WRONGTYPE, as raw.
    node.sadd(f"{{e:{flavour}}}:set", "x")
    for method, args in [("incrcheck", (1, 60, 3)), ("throttle", (1, 1, 1)), ("reserve", ("u",))]:
        with pytest.raises(client.error) as ours:
            await client.call(method, f"{{e:{flavour}}}:set", *args)
        assert "WRONGTYPE" in str(ours.value)


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


test_every_method = per_flavour(_every_method)
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
