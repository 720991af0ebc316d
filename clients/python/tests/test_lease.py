"""The lease helper (``with g.lease(...)``, ``async with``) on real servers,
the module's and one without it (the scripts): a slot held while the
block runs and renewed past its first end, released at the end and on an
exception, ``LeaseRefused`` without running the block, and 30 workers on
5 slots never more than 5 at once."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, List

import pytest

import redis
from conftest import address, admin
from redis_guard import AsyncGuard, Guard, LeaseRefused, Reservation

BACKENDS = [("GUARD_STANDALONE", "module"), ("GUARD_PLAIN", "scripts")]


def sync_guard(where: str, backend: Any) -> Guard:
    (host, port), = address(where)
    return Guard(redis.Redis(host=host, port=port), backend=backend)


def held(where: str, key: str) -> int:
    """The campaign's live holds, read raw."""
    (host, port), = address(where)
    g = Guard(admin(host, port), backend="auto")
    return g.campaign_info(key).held


@pytest.mark.parametrize("where,backend", BACKENDS)
def test_a_lease_is_held_while_the_block_runs_renewed_and_released(where: str, backend: str) -> None:
    g = sync_guard(where, backend)
    key = f"{{lease:{backend}}}:one"
    g.create(key, 1, hold=1)
    with g.lease(key, "w1", hold=1) as lease:
        assert isinstance(lease, Reservation) and lease.claim > 0
        # Past the first end (1 s): renewed every third of it, still held.
        time.sleep(2.2)
        assert held(where, key) == 1
        assert g.reserve(key, "w2").claim == -2
    assert held(where, key) == 0
    assert g.reserve(key, "w2").claim > 0


@pytest.mark.parametrize("where,backend", BACKENDS)
def test_an_exception_releases_and_a_full_pool_refuses_without_running(where: str, backend: str) -> None:
    g = sync_guard(where, backend)
    key = f"{{lease:{backend}}}:two"
    g.create(key, 1, hold=30)
    with pytest.raises(ZeroDivisionError):
        with g.lease(key, "w1"):
            1 / 0
    assert held(where, key) == 0
    ran = []
    with g.lease(key, "w1"):
        with pytest.raises(LeaseRefused) as refused:
            with g.lease(key, "w2"):
                ran.append(True)
        assert refused.value.code == -2 and not ran


def test_a_failed_release_never_replaces_the_blocks_outcome(caplog: pytest.LogCaptureFixture) -> None:
    g = sync_guard("GUARD_STANDALONE", "module")
    key = "{lease:release}:pool"
    g.create(key, 1, hold=30)

    def unreachable(*args: Any, **kwargs: Any) -> int:
        raise redis.ConnectionError("Redis went away")

    g.release = unreachable  # type: ignore[method-assign]
    with pytest.raises(ValueError):
        with g.lease(key, "w1"):
            raise ValueError("the job's own failure")
    # The slot is still held (its hold ends it), and the next lease says so.
    with pytest.raises(LeaseRefused):
        with g.lease(key, "w2"):
            pass
    assert "releasing the lease" in caplog.text


@pytest.mark.parametrize("where,backend", BACKENDS)
def test_30_workers_on_5_slots_never_hold_more_than_5(where: str, backend: str) -> None:
    g = sync_guard(where, backend)
    key = f"{{lease:{backend}}}:pool"
    g.create(key, 5, hold=2)
    inside, most, done, refused = 0, 0, [], []
    lock = threading.Lock()
    start = threading.Barrier(30)

    def worker(n: int) -> None:
        nonlocal inside, most
        start.wait()
        for _ in range(6):
            try:
                with g.lease(key, f"w{n}", hold=2):
                    with lock:
                        inside += 1
                        most = max(most, inside)
                    time.sleep(0.05)
                    with lock:
                        inside -= 1
                done.append(n)
            except LeaseRefused:
                refused.append(n)
            time.sleep(0.02)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(30)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most <= 5 and done and refused, (most, len(done), len(refused))
    assert held(where, key) == 0


@pytest.mark.parametrize("where,backend", BACKENDS)
def test_async_with_holds_renews_and_releases(where: str, backend: str) -> None:
    (host, port), = address(where)

    async def main() -> None:
        client = redis.asyncio.Redis(host=host, port=port)
        g = AsyncGuard(client, backend=backend)  # type: ignore[arg-type]
        key = f"{{lease:{backend}}}:async"
        await g.create(key, 1, hold=1)
        async with g.lease(key, "w1", hold=1) as lease:
            await asyncio.sleep(2.2)
            assert (await g.reserve(key, "w2")).claim == -2
            assert lease.claim > 0
        assert (await g.campaign_info(key)).held == 0
        with pytest.raises(LeaseRefused):
            async with g.lease(key, "w3"):
                async with g.lease(key, "w4"):
                    pass
        # redis-py 5.0 has only close(); later ones deprecate it for aclose().
        await (client.aclose() if hasattr(client, "aclose") else client.close())

    asyncio.run(main())
