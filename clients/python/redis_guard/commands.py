"""Every public command of the module, once: the words it sends, the key
that routes it in a cluster, and the parser of its reply.

``Guard``, ``AsyncGuard`` and their pipelines all run these same calls,
over redis-py or valkey-glide alike. Arguments go to the server as given
(it validates them and its error is raised unchanged); options left
``None`` are not sent.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Callable, Generic, Iterable, List, Optional, Sequence, Tuple, TypeVar, Union

from . import results
from .errors import CampaignExists
from .results import CampaignInfo, Cart, Check, Claim, Confirm, EncodableT, Reservation, Throttle, ThrottleAll

T = TypeVar("T")

#: One threshold or several, strictly increasing.
Thresholds = Union[int, Iterable[int]]
#: A time in whole seconds: an int, or a ``timedelta`` of whole seconds.
Seconds = Union[int, timedelta]
#: A window: whole seconds, or a calendar period ("minute", "hour",
#: "day", "week", "month") of the zone ``tz`` names (default UTC).
Window = Union[int, timedelta, str]
#: One CL.THROTTLEALL limiter: (key, max_burst, count, period).
Limit = Tuple[EncodableT, int, int, Seconds]


@dataclass(slots=True)
class Call(Generic[T]):
    """One command ready to send: its words, the key whose slot serves it
    (None: any node may), what turns its reply into a value, and where
    the command's keys are among its words (the scripts backend passes
    them as KEYS). Never changed once made; not frozen, as every method
    call makes one or two and a frozen dataclass takes 4 × as long to
    make."""

    words: Tuple[EncodableT, ...]
    key: Optional[EncodableT]
    parse: Callable[[Any], T]
    key_indexes: Tuple[int, ...] = ()
    #: What the call answers for a server error it expects (``create``'s
    #: ``exist_ok``), given the package's error; it raises any other.
    on_error: Optional[Callable[[BaseException], T]] = None
    #: An application's own command queued in a pipeline: sent as it is
    #: on either backend, its reply unparsed.
    raw: bool = False


@dataclass(slots=True)
class _Key:
    """A word of a call that is one of the command's keys."""

    name: EncodableT


def _word(value: Union[EncodableT, int, timedelta]) -> EncodableT:
    # valkey-glide sends only str and bytes; redis-py encodes ints the same.
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, timedelta):
        whole, fraction = divmod(value, timedelta(seconds=1))
        if fraction:
            raise ValueError(f"a time in whole seconds, not {value!r}")
        return str(whole)
    raise TypeError(f"expected str, bytes or int, got {type(value).__name__}")


Word = Union[EncodableT, int, timedelta, _Key]


def _call(parse: Callable[[Any], T], key: Optional[EncodableT], *words: Word) -> Call[T]:
    # One pass, str taken as it is: every call of the package runs this.
    plain: List[EncodableT] = []
    keys: List[int] = []
    for i, word in enumerate(words):
        if isinstance(word, _Key):
            keys.append(i)
            plain.append(word.name if type(word.name) is str else _word(word.name))
        else:
            plain.append(word if type(word) is str else _word(word))
    return Call(tuple(plain), key, parse, tuple(keys))


def _option(name: str, value: Optional[Union[EncodableT, int, timedelta]]) -> List[Word]:
    return [] if value is None else [name, value]


def _key_option(name: str, value: Optional[EncodableT]) -> List[Word]:
    return [] if value is None else [name, _Key(value)]


def _thresholds(thresholds: Thresholds) -> List[Word]:
    if isinstance(thresholds, (str, bytes)):
        # A string is iterable too: "15" would send thresholds 1 and 5.
        raise TypeError("thresholds: an int or a sequence of ints, not a string")
    return [thresholds] if isinstance(thresholds, int) else list(thresholds)


def _alert(alert: Optional[EncodableT], maxlen: Optional[int]) -> List[Word]:
    return _key_option("ALERT", alert) + _option("MAXLEN", maxlen)


def _quantity(name: Optional[str], quantity: int) -> List[Word]:
    _word(quantity)  # True is no quantity, though True == 1
    # 1 is the server's default: not sent, as an option left out.
    if quantity == 1:
        return []
    return [name, quantity] if name else [quantity]


def incrcheck(
    key: EncodableT,
    increment: int,
    window: Window,
    thresholds: Thresholds,
    *,
    tz: Optional[str] = None,
    alert: Optional[EncodableT] = None,
    maxlen: Optional[int] = None,
) -> Call[Check]:
    """MON.INCRCHECK: add ``increment`` to the counter of a fixed window of
    ``window`` seconds, or of the calendar period ``window`` names in the
    zone ``tz`` ("day", tz="Asia/Seoul": until Seoul's next midnight); the
    level of the first threshold crossed."""
    return _call(
        results.check, key, "MON.INCRCHECK", _Key(key), increment, window,
        *_thresholds(thresholds), *_option("TZ", tz), *_alert(alert, maxlen),
    )


def slidecheck(
    key: EncodableT,
    increment: int,
    window: Seconds,
    thresholds: Thresholds,
    *,
    buckets: Optional[int] = None,
    alert: Optional[EncodableT] = None,
    maxlen: Optional[int] = None,
) -> Call[Check]:
    """MON.SLIDECHECK: the same check over a sliding window of ``buckets``."""
    return _call(
        results.check, key, "MON.SLIDECHECK", _Key(key), increment, window,
        *_thresholds(thresholds), *_option("BUCKETS", buckets), *_alert(alert, maxlen),
    )


def distinct(
    key: EncodableT,
    member: EncodableT,
    window: Seconds,
    thresholds: Thresholds,
    *,
    alert: Optional[EncodableT] = None,
    maxlen: Optional[int] = None,
) -> Call[Check]:
    """MON.DISTINCT: distinct members seen in the last ``window`` seconds
    (``current``) and the threshold that count crossed."""
    return _call(
        results.check, key, "MON.DISTINCT", _Key(key), member, window,
        *_thresholds(thresholds), *_alert(alert, maxlen),
    )


def decrclamp(
    key: EncodableT,
    amount: int,
    *,
    alert: Optional[EncodableT] = None,
    maxlen: Optional[int] = None,
) -> Call[int]:
    """MON.DECRCLAMP: subtract ``amount``, never below 0; the new value."""
    return _call(results.integer, key, "MON.DECRCLAMP", _Key(key), amount, *_alert(alert, maxlen))


def issue(key: EncodableT, user: EncodableT, limit: int, *, ledger: Optional[EncodableT] = None) -> Call[int]:
    """COUPON.ISSUE: the winner's rank (a campaign: the claim number), or
    ALREADY_WON, or SOLD_OUT. ``ledger``: the campaign's ledger stream."""
    return _call(results.integer, key, "COUPON.ISSUE", _Key(key), user, limit, *_key_option("LEDGER", ledger))


def revoke(key: EncodableT, user: EncodableT, *, ledger: Optional[EncodableT] = None) -> Call[int]:
    """COUPON.REVOKE: how many coupons (claims) of ``user`` were taken back."""
    return _call(results.integer, key, "COUPON.REVOKE", _Key(key), user, *_key_option("LEDGER", ledger))


def throttle(
    key: EncodableT, max_burst: int, count: int, period: Seconds, quantity: int = 1,
    *, block: Optional[Seconds] = None,
) -> Call[Throttle]:
    """CL.THROTTLE: one GCRA limiter of ``count`` per ``period`` seconds.
    ``block``: a refused request blocks the limiter that many seconds
    (a penalty box)."""
    return _call(
        results.throttle, key, "CL.THROTTLE", _Key(key), max_burst, count, period,
        *_quantity(None, quantity), *_option("BLOCK", block),
    )


def throttle_all(
    limits: Sequence[Limit], quantity: int = 1, *, block: Optional[Seconds] = None,
) -> Call[ThrottleAll]:
    """CL.THROTTLEALL: several limiters, all or nothing; routed by the
    first limiter's key. ``block``: a refused call blocks each refusing
    limiter that many seconds."""
    groups: List[Word] = []
    for key, max_burst, count, period in limits:
        groups += [_Key(key), max_burst, count, period]
    first = limits[0][0] if limits else None
    return _call(
        results.throttle_all, first, "CL.THROTTLEALL", len(limits), *groups,
        *_quantity("QUANTITY", quantity), *_option("BLOCK", block),
    )


def quota(
    key: EncodableT, limit: int, window: Window, quantity: int = 1, *, tz: Optional[str] = None,
) -> Call[Throttle]:
    """CL.QUOTA: at most ``limit`` units per window (seconds, or a calendar
    period of the zone ``tz``); what does not fit is refused and takes
    nothing. ``quantity`` 0 peeks; ``decrclamp`` gives units back."""
    return _call(
        results.throttle, key, "CL.QUOTA", _Key(key), limit, window,
        *_quantity(None, quantity), *_option("TZ", tz),
    )


def refund(key: EncodableT, max_burst: int, count: int, period: Seconds, quantity: int) -> Call[Throttle]:
    """CL.REFUND: gives ``quantity`` back to a limiter (never above its
    burst); the state after it, as a peek gives it."""
    return _call(results.throttle, key, "CL.REFUND", _Key(key), max_burst, count, period, quantity)


def reset(key: EncodableT) -> Call[int]:
    """Deletes a limiter's key (``DEL``, on either backend): the limiter is
    full again. 1 when there was one, else 0, as DEL answers."""
    return Call(("DEL", _word(key)), key, results.integer, (1,), raw=True)


def create(
    key: EncodableT,
    limit: int,
    *,
    peruser: Optional[int] = None,
    hold: Optional[Seconds] = None,
    ledger: Optional[EncodableT] = None,
    maxlen: Optional[int] = None,
    exist_ok: bool = False,
) -> Call[bool]:
    """COUPON.CREATE: a campaign of ``limit`` places; True. With ``ledger``
    every change of a claim is appended to that stream (trimmed to about
    ``maxlen``), and every write of the campaign must name it. The key
    exists: ``CampaignExists``, or False with ``exist_ok`` (an
    application's restart; the campaign is left as it is)."""
    call = _call(
        results.ok, key, "COUPON.CREATE", _Key(key), limit,
        *_option("PERUSER", peruser), *_option("HOLD", hold),
        *_key_option("LEDGER", ledger), *_option("MAXLEN", maxlen),
    )
    return replace(call, on_error=_exists) if exist_ok else call


def _exists(error: BaseException) -> bool:
    if isinstance(error, CampaignExists):
        return False
    raise error


def reserve(
    key: EncodableT,
    user: EncodableT,
    *,
    hold: Optional[Seconds] = None,
    request_id: Optional[EncodableT] = None,
    qty: Optional[int] = None,
    ledger: Optional[EncodableT] = None,
) -> Call[Reservation]:
    """COUPON.RESERVE: hold ``qty`` units (server default 1: a place) for
    ``user``; safe to retry with the same ``request_id`` (and ``qty``)."""
    return _call(
        results.reservation, key, "COUPON.RESERVE", _Key(key), user,
        *_option("HOLD", hold), *_option("ID", request_id), *_option("QTY", qty), *_key_option("LEDGER", ledger),
    )


def confirm(
    key: EncodableT, claim: int, *, qty: Optional[int] = None, ledger: Optional[EncodableT] = None,
) -> Call[Confirm]:
    """COUPON.CONFIRM: ``qty`` of the hold's units confirmed (all by
    default), the others free at once: ``Confirm.CONFIRMED`` (1),
    ``ALREADY`` (0), ``OVER_LIMIT`` (-2: no place, released) or
    ``NO_CLAIM`` (-3)."""
    return _call(
        results.confirm, key, "COUPON.CONFIRM", _Key(key), claim, *_option("QTY", qty), *_key_option("LEDGER", ledger),
    )


def release(key: EncodableT, claim: int, *, ledger: Optional[EncodableT] = None) -> Call[int]:
    """COUPON.RELEASE: 1 released, 0 no live claim with that number."""
    return _call(results.integer, key, "COUPON.RELEASE", _Key(key), claim, *_key_option("LEDGER", ledger))


def renew(
    key: EncodableT, claim: int, *, hold: Optional[Seconds] = None, ledger: Optional[EncodableT] = None,
) -> Call[int]:
    """COUPON.RENEW: a live hold ends ``hold`` seconds from now (the
    campaign's hold by default); its new ``expires_at_ms``, 0 when it is
    confirmed, -3 when there is no live claim."""
    return _call(
        results.integer, key, "COUPON.RENEW", _Key(key), claim,
        *_option("HOLD", hold), *_key_option("LEDGER", ledger),
    )


def alter(
    key: EncodableT,
    *,
    limit: Optional[int] = None,
    peruser: Optional[int] = None,
    hold: Optional[Seconds] = None,
    ledger: Optional[EncodableT] = None,
) -> Call[bool]:
    """COUPON.ALTER: change the campaign's settings now (restock, lower a
    limit); True. Nothing live is touched."""
    return _call(
        results.ok, key, "COUPON.ALTER", _Key(key),
        *_option("LIMIT", limit), *_option("PERUSER", peruser), *_option("HOLD", hold),
        *_key_option("LEDGER", ledger),
    )


def reclaim(key: EncodableT, *, count: Optional[int] = None, ledger: Optional[EncodableT] = None) -> Call[int]:
    """COUPON.RECLAIM: reclaim now up to ``count`` expired holds (server
    default 100), oldest first; how many were reclaimed."""
    return _call(
        results.integer, key, "COUPON.RECLAIM", _Key(key), *_option("COUNT", count), *_key_option("LEDGER", ledger),
    )


def reserve_all(
    keys: Sequence[EncodableT],
    user: EncodableT,
    *,
    hold: Optional[Seconds] = None,
    request_id: Optional[EncodableT] = None,
    qty: Optional[Sequence[int]] = None,
    ledger: Optional[EncodableT] = None,
) -> Call[Cart]:
    """COUPON.RESERVEALL: one hold for ``user`` in every campaign of
    ``keys``, all or none (a cart), of ``qty[i]`` units in the i-th
    (one value per key; 1 each by default); routed by the first key. In a
    cluster the keys (and the ledger) must share one hash tag."""
    if isinstance(keys, (str, bytes)):
        # A string is a sequence too: "ab" would send keys a and b.
        raise TypeError("keys: a sequence of keys, not a string")
    if isinstance(qty, (str, bytes, int)):
        raise TypeError("qty: a sequence of ints, one per key")
    keys = list(keys)
    units: List[Word] = [] if qty is None else ["QTY", *qty]
    return _call(
        results.cart, keys[0] if keys else None, "COUPON.RESERVEALL", len(keys), *map(_Key, keys), user,
        *_option("HOLD", hold), *_option("ID", request_id), *units, *_key_option("LEDGER", ledger),
    )


def campaign_info(key: EncodableT) -> Call[CampaignInfo]:
    """COUPON.INFO: the campaign's settings and totals."""
    return _call(results.campaign_info, key, "COUPON.INFO", _Key(key))


def claims(key: EncodableT, *, start: Optional[int] = None, count: Optional[int] = None) -> Call[List[Claim]]:
    """COUPON.CLAIMS: live claims in claim order from ``start``."""
    return _call(
        results.claims, key, "COUPON.CLAIMS", _Key(key),
        *_option("FROM", start), *_option("COUNT", count),
    )
