"""What the commands answer, as named values.

Every parser takes the reply as the client library hands it over: bytes or
str (``decode_responses``), a list, or a dict where RESP3 sends a map. So
RESP2 and RESP3 give the same values.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from enum import IntEnum
from typing import Any, List, NamedTuple, Optional, Union

#: A key, user, member or request id as the client sends it.
EncodableT = Union[str, bytes]

#: COUPON.ISSUE: the user already holds one.
ALREADY_WON = -1
#: COUPON.ISSUE and COUPON.RESERVE: every place is taken.
SOLD_OUT = -2


class Check(NamedTuple):
    """MON.INCRCHECK, MON.SLIDECHECK, MON.DISTINCT: the value after the
    call and the threshold it crossed first (1-based, 0 for none)."""

    current: int
    level: int


class Throttle(NamedTuple):
    """CL.THROTTLE, as redis-cell answers it (times in whole seconds)."""

    limited: bool
    limit: int
    remaining: int
    retry_after: int
    reset_after: int


class ThrottleAll(NamedTuple):
    """CL.THROTTLEALL: the verdict of the whole call, then each limiter's."""

    limited: bool
    retry_after: int
    results: List[Throttle]


class Reservation(NamedTuple):
    """COUPON.RESERVE: the claim and when its hold expires (-1 once
    confirmed); ``claim`` is ALREADY_WON or SOLD_OUT when refused."""

    claim: int
    expires_at_ms: int


class Cart(NamedTuple):
    """COUPON.RESERVEALL: one hold in every campaign, or none.

    ``reserved``: every campaign holds a place (``reservations``, one per
    key, in key order). Refused: ``reservations`` is empty, ``refused`` is
    ALREADY_WON (the user has their places) or SOLD_OUT, and ``at`` the
    1-based index of the first campaign that refused; ``refused`` is 0 and
    ``at`` None when reserved."""

    reserved: bool
    reservations: List[Reservation]
    refused: int
    at: Optional[int]


class Claim(NamedTuple):
    """One live claim of COUPON.CLAIMS; ``units`` it holds (a confirmed
    claim: those confirmed)."""

    claim: int
    user: EncodableT
    state: str
    expires_at_ms: int
    request_id: Optional[EncodableT]
    units: int = 1


class Confirm(IntEnum):
    """COUPON.CONFIRM's answer (an int: ``== 1`` still reads as before)."""

    #: Confirmed now.
    CONFIRMED = 1
    #: Confirmed before.
    ALREADY = 0
    #: No place for it (a hold live again after a clock step): released;
    #: refund the payment.
    OVER_LIMIT = -2
    #: No live claim with that number (expired, released, never made).
    NO_CLAIM = -3

    def __str__(self) -> str:
        # The number, on every Python (3.11 made it so for IntEnum).
        return str(int(self))


@dataclass(frozen=True)
class CampaignInfo:
    """COUPON.INFO: the settings and the totals as of now. ``confirmed``,
    ``held``, ``claims``, ``expired`` and ``released`` count claims
    (``claims = confirmed + held + released + expired``); ``held_units``
    and ``confirmed_units`` count their units, and ``available = max(0,
    limit - held_units - confirmed_units)``. ``info["available"]`` reads
    a field by name, as the dict this used to be."""

    limit: int
    peruser: int
    hold: int
    confirmed: int
    held: int
    available: int
    claims: int
    expired: int
    released: int
    held_units: int
    confirmed_units: int

    def __getitem__(self, field: str) -> int:
        if field not in _INFO_FIELDS:
            raise KeyError(field)
        value: int = getattr(self, field)
        return value


_INFO_FIELDS = frozenset(field.name for field in fields(CampaignInfo))


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def integers(reply: Any, count: int) -> List[int]:
    if not isinstance(reply, list) or len(reply) != count:
        raise ValueError(f"expected {count} integers, got {reply!r}")
    return [int(value) for value in reply]


def check(reply: Any) -> Check:
    return Check(*integers(reply, 2))


def integer(reply: Any) -> int:
    return int(reply)


def ok(reply: Any) -> bool:
    if text(reply) != "OK":
        raise ValueError(f"expected OK, got {reply!r}")
    return True


def throttle(reply: Any) -> Throttle:
    limited, limit, remaining, retry_after, reset_after = integers(reply, 5)
    return Throttle(bool(limited), limit, remaining, retry_after, reset_after)


def throttle_all(reply: Any) -> ThrottleAll:
    if not isinstance(reply, list) or len(reply) < 3:
        raise ValueError(f"expected a CL.THROTTLEALL reply, got {reply!r}")
    return ThrottleAll(
        bool(int(reply[0])), int(reply[1]), [throttle(each) for each in reply[2:]]
    )


def reservation(reply: Any) -> Reservation:
    return Reservation(*integers(reply, 2))


def cart(reply: Any) -> Cart:
    if not isinstance(reply, list) or len(reply) < 2 or len(reply) % 2:
        raise ValueError(f"expected a COUPON.RESERVEALL reply, got {reply!r}")
    values = [int(value) for value in reply]
    if values[0] < 0:
        return Cart(False, [], values[0], values[1])
    return Cart(True, [Reservation(claim, expires) for claim, expires in zip(values[::2], values[1::2])], 0, None)


def confirm(reply: Any) -> Confirm:
    return Confirm(int(reply))


def campaign_info(reply: Any) -> CampaignInfo:
    pairs = reply.items() if isinstance(reply, dict) else zip(reply[::2], reply[1::2])
    # A field a newer module adds is left out; one without units (a module
    # older than units) has a unit a claim.
    values = {text(field): int(value) for field, value in pairs}
    values.setdefault("held_units", values["held"])
    values.setdefault("confirmed_units", values["confirmed"])
    return CampaignInfo(**{name: values[name] for name in _INFO_FIELDS})


def claims(reply: Any) -> List[Claim]:
    # [claim, user, state, expires_at_ms, request-id, units] (without units
    # from a module older than units: 1 each).
    return [
        Claim(int(entry[0]), entry[1], text(entry[2]), int(entry[3]), entry[4], int(entry[5]) if len(entry) > 5 else 1)
        for entry in reply
    ]
