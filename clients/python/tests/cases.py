"""Every method, called as a user would, with the words the server must
see and the result worked out by hand for fresh keys ``K`` and ``K2``
(after the case's ``setup``, raw commands on the same keys).

A result that holds a time is checked by a predicate instead of a value.
"""

from __future__ import annotations

import math
import time
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Dict, List, Sequence, Tuple

from redis_guard import ALREADY_WON, SOLD_OUT, CampaignInfo, Cart, Check, Claim, Reservation, Throttle, ThrottleAll

Words = Tuple[str, ...]


@dataclass
class Case:
    method: str
    args: Tuple[Any, ...]
    kwargs: Dict[str, Any]
    words: Words
    expected: Any
    setup: Sequence[Words] = field(default_factory=list)
    #: Seconds to wait after the setup (for holds to expire).
    wait: float = 0

    def bind(self, k: str, k2: str) -> "Case":
        """The case on real keys: ``K`` and ``K2`` replaced everywhere, and
        ``K2:...`` (a third key in the same slot) by ``k2`` and the rest."""
        swap = lambda value: _swap(value, k, k2)
        return Case(self.method, swap(self.args), swap(self.kwargs), swap(self.words),
                    self.expected, [swap(words) for words in self.setup], self.wait)


def _swap(value: Any, k: str, k2: str) -> Any:
    if value == "K":
        return k
    if value == "K2":
        return k2
    if isinstance(value, str) and value.startswith("K2:"):
        return k2 + value[2:]
    if isinstance(value, tuple):
        return tuple(_swap(each, k, k2) for each in value)
    if isinstance(value, list):
        return [_swap(each, k, k2) for each in value]
    if isinstance(value, dict):
        return {name: _swap(each, k, k2) for name, each in value.items()}
    return value


def expires_in(seconds: int) -> Callable[[int], bool]:
    """An absolute expiry in ms, ``seconds`` from now (give or take the
    call's own time)."""

    def check(expires_at_ms: int) -> bool:
        expected = int(time.time() * 1000) + seconds * 1000
        return expected - 5000 <= expires_at_ms <= expected + 1000

    return check


def until_midnight(zone: str) -> int:
    """Whole seconds, rounded up, from now to the zone's next midnight
    (zoneinfo's answer)."""
    now = datetime.now(ZoneInfo(zone))
    midnight = datetime.combine(now.date() + timedelta(days=1), datetime.min.time(), ZoneInfo(zone))
    return math.ceil((midnight - now).total_seconds())


def throttled(limited: bool, limit: int, remaining: int, reset_after: Callable[[], int]) -> Callable[[Any], bool]:
    """A quota's reply whose window ends ``reset_after()`` seconds from the
    check (give or take one); ``retry_after`` is that when limited."""

    def check(result: Any) -> bool:
        close = lambda seconds: abs(seconds - reset_after()) <= 1
        retry = close(result.retry_after) if limited else result.retry_after == -1
        return (isinstance(result, Throttle) and result[:3] == (limited, limit, remaining) and retry
                and close(result.reset_after))

    return check


def reservation(claim: int, hold: int) -> Callable[[Any], bool]:
    return lambda result: isinstance(result, Reservation) and result.claim == claim and expires_in(hold)(result.expires_at_ms)


def cart(*holds: Tuple[int, int]) -> Callable[[Any], bool]:
    """A reserved cart: each campaign's (claim, hold in seconds)."""
    return lambda result: (
        isinstance(result, Cart) and result[0] and result[2:] == (0, None)
        and len(result.reservations) == len(holds)
        and all(reservation(claim, hold)(each) for (claim, hold), each in zip(holds, result.reservations))
    )


CREATE = ("COUPON.CREATE", "K", "5", "PERUSER", "2", "HOLD", "30")
#: The same campaign keeping its ledger in K2.
LEDGER = ("COUPON.CREATE", "K", "5", "PERUSER", "2", "HOLD", "30", "LEDGER", "K2")

CASES: List[Case] = [
    # A fixed window: crosses 1 (prev 0 < 1 <= 2), not 3.
    Case("incrcheck", ("K", 2, 60, [1, 3]), {}, ("MON.INCRCHECK", "K", "2", "60", "1", "3"), Check(2, 1)),
    Case("incrcheck", ("K", 5, 60, 3), {"alert": "K2", "maxlen": 10},
         ("MON.INCRCHECK", "K", "5", "60", "3", "ALERT", "K2", "MAXLEN", "10"), Check(5, 1)),
    # From 7: 8 reaches the second threshold; the first was passed before.
    Case("incrcheck", ("K", 1, 60, [5, 8]), {}, ("MON.INCRCHECK", "K", "1", "60", "5", "8"), Check(8, 2),
         setup=[("SET", "K", "7")]),
    # A sliding window of 6 buckets: 4 reaches both 2 and 4; the higher is reported.
    Case("slidecheck", ("K", 4, 60, [2, 4]), {"buckets": 6},
         ("MON.SLIDECHECK", "K", "4", "60", "2", "4", "BUCKETS", "6"), Check(4, 2)),
    Case("slidecheck", ("K", 1, 60, 5), {"alert": "K2"}, ("MON.SLIDECHECK", "K", "1", "60", "5", "ALERT", "K2"),
         Check(1, 0)),
    Case("distinct", ("K", "card-1", 60, [1]), {}, ("MON.DISTINCT", "K", "card-1", "60", "1"), Check(1, 1)),
    Case("distinct", ("K", "card-2", 60, [1, 2]), {"alert": "K2", "maxlen": 5},
         ("MON.DISTINCT", "K", "card-2", "60", "1", "2", "ALERT", "K2", "MAXLEN", "5"), Check(1, 1)),
    Case("decrclamp", ("K", 3), {}, ("MON.DECRCLAMP", "K", "3"), 2, setup=[("SET", "K", "5")]),
    # A refund larger than the counter clamps at 0.
    Case("decrclamp", ("K", 9), {"alert": "K2"}, ("MON.DECRCLAMP", "K", "9", "ALERT", "K2"), 0,
         setup=[("SET", "K", "5")]),
    Case("decrclamp", ("K", 1), {}, ("MON.DECRCLAMP", "K", "1"), 0),
    Case("issue", ("K", "alice", 2), {}, ("COUPON.ISSUE", "K", "alice", "2"), 2, setup=[("SADD", "K", "bob")]),
    Case("issue", ("K", "alice", 2), {}, ("COUPON.ISSUE", "K", "alice", "2"), ALREADY_WON,
         setup=[("SADD", "K", "alice")]),
    Case("issue", ("K", "carol", 1), {}, ("COUPON.ISSUE", "K", "carol", "1"), SOLD_OUT,
         setup=[("SADD", "K", "bob")]),
    Case("revoke", ("K", "alice"), {}, ("COUPON.REVOKE", "K", "alice"), 1, setup=[("SADD", "K", "alice")]),
    # 10 per 60 s: one request leaves 4 of 5 and is forgotten in 6 s.
    Case("throttle", ("K", 4, 10, 60), {}, ("CL.THROTTLE", "K", "4", "10", "60"), Throttle(False, 5, 4, -1, 6)),
    Case("throttle", ("K", 4, 10, 60, 5), {}, ("CL.THROTTLE", "K", "4", "10", "60", "5"),
         Throttle(False, 5, 0, -1, 30)),
    Case("throttle", ("K", 4, 10, 60), {"quantity": 0}, ("CL.THROTTLE", "K", "4", "10", "60", "0"),
         Throttle(False, 5, 5, -1, 0)),
    Case("throttle_all", ([("K", 4, 10, 60), ("K2", 0, 1, 60)],), {},
         ("CL.THROTTLEALL", "2", "K", "4", "10", "60", "K2", "0", "1", "60"),
         ThrottleAll(False, -1, [Throttle(False, 5, 4, -1, 6), Throttle(False, 1, 0, -1, 60)])),
    # 2 at once from a limiter of 1 can never be allowed: -1, nothing used.
    Case("throttle_all", ([("K", 0, 1, 60)],), {"quantity": 2},
         ("CL.THROTTLEALL", "1", "K", "0", "1", "60", "QUANTITY", "2"),
         ThrottleAll(True, -1, [Throttle(True, 1, 1, -1, 0)])),
    # A quota of 5 a minute: 1 used, 4 left, the window ends in 60 s.
    Case("quota", ("K", 5, 60), {}, ("CL.QUOTA", "K", "5", "60"), Throttle(False, 5, 4, -1, 60)),
    # 4 used: 2 more do not fit; nothing taken, retry when the window ends.
    Case("quota", ("K", 5, 60, 2), {}, ("CL.QUOTA", "K", "5", "60", "2"), throttled(True, 5, 1, lambda: 60),
         setup=[("SET", "K", "4", "EX", "60")]),
    Case("quota", ("K", 5, "day", 2), {"tz": "Asia/Seoul"}, ("CL.QUOTA", "K", "5", "day", "2", "TZ", "Asia/Seoul"),
         throttled(False, 5, 3, lambda: until_midnight("Asia/Seoul"))),
    Case("incrcheck", ("K", 1, "day", 1), {"tz": "America/New_York"},
         ("MON.INCRCHECK", "K", "1", "day", "1", "TZ", "America/New_York"), Check(1, 1)),
    # BLOCK: ignored when allowed; a refusal blocks the limiter 600 s.
    Case("throttle", ("K", 4, 10, 60), {"block": 30}, ("CL.THROTTLE", "K", "4", "10", "60", "BLOCK", "30"),
         Throttle(False, 5, 4, -1, 6)),
    Case("throttle", ("K", 0, 1, 60), {"block": 600}, ("CL.THROTTLE", "K", "0", "1", "60", "BLOCK", "600"),
         Throttle(True, 1, 0, 600, 600), setup=[("CL.THROTTLE", "K", "0", "1", "60")]),
    Case("throttle_all", ([("K", 0, 1, 60)],), {"block": 600},
         ("CL.THROTTLEALL", "1", "K", "0", "1", "60", "BLOCK", "600"),
         ThrottleAll(True, 600, [Throttle(True, 1, 0, 600, 600)]), setup=[("CL.THROTTLE", "K", "0", "1", "60")]),
    # 5 of 5 reserved (30 s), 2 given back: 2 free, full again in 18 s.
    Case("refund", ("K", 4, 10, 60, 2), {}, ("CL.REFUND", "K", "4", "10", "60", "2"),
         Throttle(False, 5, 2, -1, 18), setup=[("CL.THROTTLE", "K", "4", "10", "60", "5")]),
    Case("reset", ("K",), {}, ("DEL", "K"), 1, setup=[("SET", "K", "5")]),
    Case("create", ("K", 10), {}, ("COUPON.CREATE", "K", "10"), True),
    Case("create", ("K", 5), {"peruser": 2, "hold": 30}, CREATE, True),
    Case("reserve", ("K", "u1"), {}, ("COUPON.RESERVE", "K", "u1"), reservation(1, 30), setup=[CREATE]),
    Case("reserve", ("K", "u1"), {"hold": 60, "request_id": "r-1"},
         ("COUPON.RESERVE", "K", "u1", "HOLD", "60", "ID", "r-1"), reservation(1, 60), setup=[CREATE]),
    Case("reserve", ("K", "u1"), {}, ("COUPON.RESERVE", "K", "u1"), Reservation(SOLD_OUT, 0),
         setup=[("COUPON.CREATE", "K", "1"), ("COUPON.ISSUE", "K", "u2", "1")]),
    Case("confirm", ("K", 1), {}, ("COUPON.CONFIRM", "K", "1"), 1,
         setup=[CREATE, ("COUPON.RESERVE", "K", "u1")]),
    Case("confirm", ("K", 7), {}, ("COUPON.CONFIRM", "K", "7"), -3, setup=[CREATE]),
    # Units: 2 of u1's PERUSER 2 held for 30 s; a retry with its id repeats
    # it; 3 of a claim's 4 confirmed, the 4th free at once.
    Case("reserve", ("K", "u1"), {"qty": 2, "request_id": "r-2"}, ("COUPON.RESERVE", "K", "u1", "ID", "r-2", "QTY", "2"),
         reservation(1, 30), setup=[CREATE]),
    Case("reserve", ("K", "u1"), {"qty": 2, "request_id": "r-2"}, ("COUPON.RESERVE", "K", "u1", "ID", "r-2", "QTY", "2"),
         reservation(1, 30), setup=[CREATE, ("COUPON.RESERVE", "K", "u1", "ID", "r-2", "qty", "2")]),
    # 2 of u1's and 2 more: past PERUSER 2.
    Case("reserve", ("K", "u1"), {"qty": 1}, ("COUPON.RESERVE", "K", "u1", "QTY", "1"), Reservation(ALREADY_WON, 0),
         setup=[CREATE, ("COUPON.RESERVE", "K", "u1", "QTY", "2")]),
    # 3 of 5 taken: 3 more do not fit.
    Case("reserve", ("K", "u3"), {"qty": 3}, ("COUPON.RESERVE", "K", "u3", "QTY", "3"), Reservation(SOLD_OUT, 0),
         setup=[("COUPON.CREATE", "K", "5", "PERUSER", "3"), ("COUPON.RESERVE", "K", "u1", "QTY", "3")]),
    Case("confirm", ("K", 1), {"qty": 3}, ("COUPON.CONFIRM", "K", "1", "QTY", "3"), 1,
         setup=[("COUPON.CREATE", "K", "5", "PERUSER", "4"), ("COUPON.RESERVE", "K", "u1", "QTY", "4")]),
    Case("confirm", ("K", 1), {"qty": 3, "ledger": "K2"}, ("COUPON.CONFIRM", "K", "1", "QTY", "3", "LEDGER", "K2"), 1,
         setup=[("COUPON.CREATE", "K", "5", "PERUSER", "4", "LEDGER", "K2"),
                ("COUPON.RESERVE", "K", "u1", "QTY", "4", "LEDGER", "K2")]),
    Case("release", ("K", 1), {}, ("COUPON.RELEASE", "K", "1"), 1, setup=[CREATE, ("COUPON.RESERVE", "K", "u1")]),
    # The ledger: every write of a campaign that keeps one names it.
    Case("create", ("K", 5), {"peruser": 2, "hold": 30, "ledger": "K2", "maxlen": 1000},
         (*LEDGER, "MAXLEN", "1000"), True),
    Case("reserve", ("K", "u1"), {"request_id": "r-1", "ledger": "K2"},
         ("COUPON.RESERVE", "K", "u1", "ID", "r-1", "LEDGER", "K2"), reservation(1, 30), setup=[LEDGER]),
    Case("confirm", ("K", 1), {"ledger": "K2"}, ("COUPON.CONFIRM", "K", "1", "LEDGER", "K2"), 1,
         setup=[LEDGER, ("COUPON.RESERVE", "K", "u1", "LEDGER", "K2")]),
    # Already confirmed: 0.
    Case("confirm", ("K", 1), {"ledger": "K2"}, ("COUPON.CONFIRM", "K", "1", "LEDGER", "K2"), 0,
         setup=[LEDGER, ("COUPON.ISSUE", "K", "u1", "5", "LEDGER", "K2")]),
    Case("release", ("K", 2), {"ledger": "K2"}, ("COUPON.RELEASE", "K", "2", "LEDGER", "K2"), 1,
         setup=[LEDGER, ("COUPON.RESERVE", "K", "u1", "LEDGER", "K2"), ("COUPON.RESERVE", "K", "u2", "LEDGER", "K2")]),
    # A campaign's claim numbers: u1 took 1, so u2's is 2.
    Case("issue", ("K", "u2", 5), {"ledger": "K2"}, ("COUPON.ISSUE", "K", "u2", "5", "LEDGER", "K2"), 2,
         setup=[LEDGER, ("COUPON.ISSUE", "K", "u1", "5", "LEDGER", "K2")]),
    # Both of u1's claims (PERUSER 2), held or confirmed.
    Case("revoke", ("K", "u1"), {"ledger": "K2"}, ("COUPON.REVOKE", "K", "u1", "LEDGER", "K2"), 2,
         setup=[LEDGER, ("COUPON.ISSUE", "K", "u1", "5", "LEDGER", "K2"), ("COUPON.RESERVE", "K", "u1", "LEDGER", "K2")]),
    # Live changes: a restock, then every setting at once.
    Case("alter", ("K",), {"limit": 8}, ("COUPON.ALTER", "K", "LIMIT", "8"), True, setup=[CREATE]),
    Case("alter", ("K",), {"limit": 3, "peruser": 1, "hold": 60, "ledger": "K2"},
         ("COUPON.ALTER", "K", "LIMIT", "3", "PERUSER", "1", "HOLD", "60", "LEDGER", "K2"), True,
         setup=[LEDGER, ("COUPON.RESERVE", "K", "u1", "LEDGER", "K2")]),
    # Nothing expired yet: 0.
    Case("reclaim", ("K",), {}, ("COUPON.RECLAIM", "K"), 0, setup=[CREATE, ("COUPON.RESERVE", "K", "u1")]),
    # Two holds of 1 s expired, one of 30 s still live; at most 1 per call.
    Case("reclaim", ("K",), {"count": 1, "ledger": "K2"}, ("COUPON.RECLAIM", "K", "COUNT", "1", "LEDGER", "K2"), 1,
         setup=[LEDGER, ("COUPON.RESERVE", "K", "u1", "HOLD", "1", "LEDGER", "K2"),
                ("COUPON.RESERVE", "K", "u2", "HOLD", "1", "LEDGER", "K2"), ("COUPON.RESERVE", "K", "u3", "LEDGER", "K2")],
         wait=1.2),
    Case("reclaim", ("K",), {"count": 10, "ledger": "K2"}, ("COUPON.RECLAIM", "K", "COUNT", "10", "LEDGER", "K2"), 2,
         setup=[LEDGER, ("COUPON.RESERVE", "K", "u1", "HOLD", "1", "LEDGER", "K2"),
                ("COUPON.RESERVE", "K", "u2", "HOLD", "1", "LEDGER", "K2"), ("COUPON.RESERVE", "K", "u3", "LEDGER", "K2")],
         wait=1.2),
    # Carts: the hold defaults to the campaigns' smallest (30 s, 60 s: 30).
    Case("reserve_all", (["K", "K2"], "u1"), {}, ("COUPON.RESERVEALL", "2", "K", "K2", "u1"), cart((1, 30), (2, 30)),
         setup=[CREATE, ("COUPON.CREATE", "K2", "3", "HOLD", "60"), ("COUPON.ISSUE", "K2", "u9", "3")]),
    Case("reserve_all", (["K2", "K"], "u1"), {"hold": 90, "request_id": "cart-1"},
         ("COUPON.RESERVEALL", "2", "K2", "K", "u1", "HOLD", "90", "ID", "cart-1"), cart((1, 90), (1, 90)),
         setup=[CREATE, ("COUPON.CREATE", "K2", "3")]),
    # The second campaign is sold out: refused there, nothing held anywhere.
    Case("reserve_all", (["K", "K2"], "u1"), {}, ("COUPON.RESERVEALL", "2", "K", "K2", "u1"),
         Cart(False, [], SOLD_OUT, 2),
         setup=[CREATE, ("COUPON.CREATE", "K2", "1"), ("COUPON.ISSUE", "K2", "u2", "1")]),
    # The first already holds u1's PERUSER 1 places (checked before sold out).
    Case("reserve_all", (["K2", "K"], "u1"), {}, ("COUPON.RESERVEALL", "2", "K2", "K", "u1"),
         Cart(False, [], ALREADY_WON, 1),
         setup=[("COUPON.CREATE", "K", "1"), ("COUPON.ISSUE", "K", "u2", "1"), ("COUPON.CREATE", "K2", "3"),
                ("COUPON.RESERVE", "K2", "u1")]),
    # Units per campaign, in key order: 2 hats and 1 scarf; then 4 more
    # hats do not fit (5 of 5 would be 6).
    Case("reserve_all", (["K", "K2"], "u1"), {"qty": [2, 1]}, ("COUPON.RESERVEALL", "2", "K", "K2", "u1", "QTY", "2", "1"),
         cart((1, 30), (1, 30)), setup=[("COUPON.CREATE", "K", "5", "PERUSER", "5", "HOLD", "30"), ("COUPON.CREATE", "K2", "3")]),
    Case("reserve_all", (["K", "K2"], "u1"), {"qty": [4, 1], "ledger": "K2:ledger"},
         ("COUPON.RESERVEALL", "2", "K", "K2", "u1", "QTY", "4", "1", "LEDGER", "K2:ledger"), Cart(False, [], SOLD_OUT, 1),
         setup=[("COUPON.CREATE", "K", "5", "PERUSER", "5", "LEDGER", "K2:ledger"), ("COUPON.CREATE", "K2", "3"),
                ("COUPON.RESERVE", "K", "u2", "QTY", "2", "LEDGER", "K2:ledger")]),
    # One ledger for both campaigns (K keeps it, K2 keeps none); the hold
    # is the smaller default (30 s, 600 s).
    Case("reserve_all", (["K", "K2"], "u1"), {"ledger": "K2:ledger"},
         ("COUPON.RESERVEALL", "2", "K", "K2", "u1", "LEDGER", "K2:ledger"), cart((1, 30), (1, 30)),
         setup=[("COUPON.CREATE", "K", "5", "HOLD", "30", "LEDGER", "K2:ledger"), ("COUPON.CREATE", "K2", "5")]),
    Case("campaign_info", ("K",), {}, ("COUPON.INFO", "K"),
         CampaignInfo(limit=5, peruser=2, hold=30, confirmed=1, held=1, available=3, claims=2,
                      expired=0, released=0, held_units=1, confirmed_units=1),
         setup=[CREATE, ("COUPON.RESERVE", "K", "u1"), ("COUPON.ISSUE", "K", "u2", "5")]),
    # Claims count claims; held_units and confirmed_units their units:
    # u1 holds 2, u2 confirmed 2 of 3 (1 free again).
    Case("campaign_info", ("K",), {}, ("COUPON.INFO", "K"),
         CampaignInfo(limit=9, peruser=3, hold=600, confirmed=1, held=1, available=5, claims=2,
                      expired=0, released=0, held_units=2, confirmed_units=2),
         setup=[("COUPON.CREATE", "K", "9", "PERUSER", "3"), ("COUPON.RESERVE", "K", "u1", "QTY", "2"),
                ("COUPON.RESERVE", "K", "u2", "QTY", "3"), ("COUPON.CONFIRM", "K", "2", "QTY", "2")]),
    Case("claims", ("K",), {}, ("COUPON.CLAIMS", "K"),
         lambda result: result[1] == Claim(2, "u2", "confirmed", -1, None)
         and result[0][:3] == (1, "u1", "held") and expires_in(30)(result[0].expires_at_ms)
         and result[0].request_id == "r" and len(result) == 2,
         setup=[CREATE, ("COUPON.RESERVE", "K", "u1", "ID", "r"), ("COUPON.ISSUE", "K", "u2", "5")]),
    Case("claims", ("K",), {"start": 2, "count": 1}, ("COUPON.CLAIMS", "K", "FROM", "2", "COUNT", "1"),
         [Claim(2, "u2", "confirmed", -1, None)],
         setup=[CREATE, ("COUPON.ISSUE", "K", "u1", "5"), ("COUPON.ISSUE", "K", "u2", "5"),
                ("COUPON.ISSUE", "K", "u3", "5")]),
    Case("claims", ("K",), {}, ("COUPON.CLAIMS", "K"), [Claim(1, "u1", "confirmed", -1, "r", 3)],
         setup=[("COUPON.CREATE", "K", "5", "PERUSER", "4"), ("COUPON.RESERVE", "K", "u1", "ID", "r", "QTY", "4"),
                ("COUPON.CONFIRM", "K", "1", "QTY", "3")]),
]

#: A bad call of every method, and the raw words that give the same error.
ERRORS: List[Tuple[str, Tuple[Any, ...], Dict[str, Any], Words]] = [
    ("incrcheck", ("K", 0, 60, 3), {}, ("MON.INCRCHECK", "K", "0", "60", "3")),
    ("incrcheck", ("K", 1, 60, [3, 2]), {}, ("MON.INCRCHECK", "K", "1", "60", "3", "2")),
    ("incrcheck", ("K", 1, 60, 3), {"maxlen": 5}, ("MON.INCRCHECK", "K", "1", "60", "3", "MAXLEN", "5")),
    ("slidecheck", ("K", 1, 60, 3), {"buckets": 7}, ("MON.SLIDECHECK", "K", "1", "60", "3", "BUCKETS", "7")),
    ("distinct", ("K", "", 60, 3), {}, ("MON.DISTINCT", "K", "", "60", "3")),
    ("decrclamp", ("K", -1), {}, ("MON.DECRCLAMP", "K", "-1")),
    ("decrclamp", ("K", 1), {"alert": "K"}, ("MON.DECRCLAMP", "K", "1", "ALERT", "K")),
    ("issue", ("K", "", 1), {}, ("COUPON.ISSUE", "K", "", "1")),
    ("revoke", ("K", ""), {}, ("COUPON.REVOKE", "K", "")),
    ("throttle", ("K", -1, 1, 1), {}, ("CL.THROTTLE", "K", "-1", "1", "1")),
    ("throttle", ("K", 1, 1, 1), {"block": 0}, ("CL.THROTTLE", "K", "1", "1", "1", "BLOCK", "0")),
    ("refund", ("K", 1, 1, 1, 0), {}, ("CL.REFUND", "K", "1", "1", "1", "0")),
    ("throttle_all", ([("K", 1, 1, 1), ("K", 1, 1, 1)],), {},
     ("CL.THROTTLEALL", "2", "K", "1", "1", "1", "K", "1", "1", "1")),
    ("quota", ("K", 0, 60), {}, ("CL.QUOTA", "K", "0", "60")),
    ("quota", ("K", 5, "day"), {"tz": "Mars/Olympus"}, ("CL.QUOTA", "K", "5", "day", "TZ", "Mars/Olympus")),
    ("quota", ("K", 5, 60), {"tz": "UTC"}, ("CL.QUOTA", "K", "5", "60", "TZ", "UTC")),
    ("incrcheck", ("K", 1, "days", 3), {}, ("MON.INCRCHECK", "K", "1", "days", "3")),
    ("create", ("K", 0), {}, ("COUPON.CREATE", "K", "0")),
    ("reserve", ("K", "u1"), {}, ("COUPON.RESERVE", "K", "u1")),
    ("confirm", ("K", 1), {}, ("COUPON.CONFIRM", "K", "1")),
    ("release", ("K", 1), {}, ("COUPON.RELEASE", "K", "1")),
    ("create", ("K", 5), {"maxlen": 5}, ("COUPON.CREATE", "K", "5", "MAXLEN", "5")),
    ("create", ("K", 5), {"ledger": "K"}, ("COUPON.CREATE", "K", "5", "LEDGER", "K")),
    ("reserve", ("K", "u1"), {"ledger": "K2"}, ("COUPON.RESERVE", "K", "u1", "LEDGER", "K2")),
    ("confirm", ("K", 0), {"ledger": "K2"}, ("COUPON.CONFIRM", "K", "0", "LEDGER", "K2")),
    ("release", ("K", 1), {"ledger": "K2"}, ("COUPON.RELEASE", "K", "1", "LEDGER", "K2")),
    ("issue", ("K", "u", 1), {"ledger": "K2"}, ("COUPON.ISSUE", "K", "u", "1", "LEDGER", "K2")),
    ("revoke", ("K", "u"), {"ledger": "K2"}, ("COUPON.REVOKE", "K", "u", "LEDGER", "K2")),
    ("alter", ("K",), {}, ("COUPON.ALTER", "K")),
    ("alter", ("K",), {"limit": 0}, ("COUPON.ALTER", "K", "LIMIT", "0")),
    ("alter", ("K",), {"hold": 5, "ledger": "K2"}, ("COUPON.ALTER", "K", "HOLD", "5", "LEDGER", "K2")),
    ("reclaim", ("K",), {"count": 0}, ("COUPON.RECLAIM", "K", "COUNT", "0")),
    ("reclaim", ("K",), {}, ("COUPON.RECLAIM", "K")),
    ("reserve_all", (["K", "K"], "u"), {}, ("COUPON.RESERVEALL", "2", "K", "K", "u")),
    ("reserve_all", (["K", "K2"], "u"), {"hold": 0}, ("COUPON.RESERVEALL", "2", "K", "K2", "u", "HOLD", "0")),
    ("reserve_all", (["K", "K2"], "u"), {}, ("COUPON.RESERVEALL", "2", "K", "K2", "u")),
    ("reserve", ("K", "u1"), {"qty": 0}, ("COUPON.RESERVE", "K", "u1", "QTY", "0")),
    ("confirm", ("K", 1), {"qty": -1}, ("COUPON.CONFIRM", "K", "1", "QTY", "-1")),
    ("reserve_all", (["K", "K2"], "u"), {"qty": [1]}, ("COUPON.RESERVEALL", "2", "K", "K2", "u", "QTY", "1")),
    ("reserve_all", (["K", "K2"], "u"), {"qty": [1, 2, 3]}, ("COUPON.RESERVEALL", "2", "K", "K2", "u", "QTY", "1", "2", "3")),
    ("campaign_info", ("K",), {}, ("COUPON.INFO", "K")),
    ("claims", ("K",), {"count": 0}, ("COUPON.CLAIMS", "K", "COUNT", "0")),
]


#: Commands whose first key is not their first argument (``numkeys`` is).
MULTIKEY = ("CL.THROTTLEALL", "COUPON.RESERVEALL")


def first_key(words: Words) -> str:
    """The key a case's command is routed by."""
    return words[2] if words[0] in MULTIKEY else words[1]


def wire_of(result: Any) -> Any:
    """A parsed result in the shape of its RESP2 reply, to compare with a
    raw call: COUPON.CREATE's True as OK, named tuples as arrays, booleans
    as 0/1, CampaignInfo as field/value pairs, text as str."""
    return "OK" if result is True else as_wire(result)


def as_wire(result: Any) -> Any:
    if isinstance(result, bytes):
        return result.decode()
    if isinstance(result, bool):
        return int(result)
    if isinstance(result, Cart):
        if not result.reserved:
            return [result.refused, result.at]
        return [value for each in result.reservations for value in each]
    if isinstance(result, CampaignInfo):
        return [item for field in fields(result) for item in (field.name, result[field.name])]
    if isinstance(result, ThrottleAll):
        return [int(result.limited), result.retry_after, *[as_wire(each) for each in result.results]]
    if isinstance(result, tuple):
        return [as_wire(each) for each in result]
    if isinstance(result, list):
        return [as_wire(each) for each in result]
    if isinstance(result, dict):
        return [item for pair in result.items() for item in pair]
    return result


def plain(reply: Any) -> Any:
    """A raw reply with text as str and a RESP3 map as pairs."""
    if isinstance(reply, bytes):
        return reply.decode()
    if isinstance(reply, dict):
        return [plain(item) for pair in reply.items() for item in pair]
    if isinstance(reply, (list, tuple)):
        return [plain(each) for each in reply]
    return reply


def decoded(result: Any) -> Any:
    """A result with its bytes as str, to compare with the cases' values."""
    if isinstance(result, bytes):
        return result.decode()
    if isinstance(result, tuple) and hasattr(result, "_fields"):
        return type(result)(*[decoded(each) for each in result])
    if isinstance(result, list):
        return [decoded(each) for each in result]
    return result
