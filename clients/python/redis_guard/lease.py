"""Leases: a campaign slot held while a block of code runs.

A campaign of ``limit`` slots whose hold is the lease time is a
semaphore: ``reserve`` acquires (with a fresh request id, so a retried
call cannot take two slots), ``renew`` is the heartbeat, ``release``
frees, and a holder that dies frees its slot when its lease ends.
``Guard.lease`` and ``AsyncGuard.lease`` do all of it: they renew every
``hold / 3`` seconds while the block runs and release when it ends,
also on an exception.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import uuid
from datetime import timedelta
from typing import Any, AsyncIterator, Iterator, Optional

from .commands import Seconds
from .results import EncodableT, Reservation

_log = logging.getLogger("redis_guard")


class LeaseRefused(Exception):
    """No slot for the lease: ``code`` is -1 (the user holds its PERUSER
    already) or -2 (every slot is taken)."""

    def __init__(self, key: EncodableT, code: int) -> None:
        super().__init__(f"no slot in {key!r}: {'the user has all its slots' if code == -1 else 'all slots are taken'}")
        self.key = key
        self.code = code


def _seconds(hold: Seconds) -> float:
    return hold.total_seconds() if isinstance(hold, timedelta) else float(hold)


def _lost(key: EncodableT, reservation: Reservation, renewed: int) -> bool:
    """Is there nothing left to renew: confirmed (0), or gone (-3: the
    lease ended in a stall, or someone released it; said once)."""
    if renewed == -3:
        _log.warning("redis-guard: the lease of claim %s in %r was lost; its slot may be another's now",
                     reservation.claim, key)
    return renewed <= 0


def _released_late(key: EncodableT, reservation: Reservation) -> None:
    # The slot frees itself when the lease ends; the block's own outcome
    # (its result or its exception) is not replaced by this one.
    _log.warning("redis-guard: releasing the lease of claim %s in %r failed; it ends with its hold",
                 reservation.claim, key, exc_info=True)


def _acquired(key: EncodableT, reservation: Reservation) -> Reservation:
    if reservation.claim < 0:
        raise LeaseRefused(key, reservation.claim)
    return reservation


@contextlib.contextmanager
def hold_lease(
    guard: Any, key: EncodableT, user: EncodableT, hold: Seconds, ledger: Optional[EncodableT],
) -> Iterator[Reservation]:
    """``Guard.lease``: the lease's renewals run on a thread of their own."""
    reservation = _acquired(key, guard.reserve(key, user, hold=hold, request_id=uuid.uuid4().hex, ledger=ledger))
    done = threading.Event()

    def heartbeat() -> None:
        while not done.wait(_seconds(hold) / 3):
            try:
                if _lost(key, reservation, guard.renew(key, reservation.claim, hold=hold, ledger=ledger)):
                    return
            except Exception:  # noqa: BLE001 - a lost beat is retried at the next
                _log.warning("redis-guard: renewing the lease of claim %s in %r failed", reservation.claim, key,
                             exc_info=True)

    beats = threading.Thread(target=heartbeat, name=f"redis-guard lease {reservation.claim}", daemon=True)
    beats.start()
    try:
        yield reservation
    finally:
        done.set()
        beats.join()
        try:
            guard.release(key, reservation.claim, ledger=ledger)
        except Exception:  # noqa: BLE001 - the block's own outcome stands
            _released_late(key, reservation)


@contextlib.asynccontextmanager
async def hold_lease_async(
    guard: Any, key: EncodableT, user: EncodableT, hold: Seconds, ledger: Optional[EncodableT],
) -> AsyncIterator[Reservation]:
    """``AsyncGuard.lease``: the lease's renewals run as a task."""
    reserved = await guard.reserve(key, user, hold=hold, request_id=uuid.uuid4().hex, ledger=ledger)
    reservation = _acquired(key, reserved)

    async def heartbeat() -> None:
        while True:
            await asyncio.sleep(_seconds(hold) / 3)
            try:
                if _lost(key, reservation, await guard.renew(key, reservation.claim, hold=hold, ledger=ledger)):
                    return
            except Exception:  # noqa: BLE001 - a lost beat is retried at the next
                _log.warning("redis-guard: renewing the lease of claim %s in %r failed", reservation.claim, key,
                             exc_info=True)

    beats = asyncio.create_task(heartbeat())
    try:
        yield reservation
    finally:
        beats.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beats
        try:
            await guard.release(key, reservation.claim, ledger=ledger)
        except Exception:  # noqa: BLE001 - the block's own outcome stands
            _released_late(key, reservation)
