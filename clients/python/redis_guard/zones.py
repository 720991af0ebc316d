"""A time zone as the scripts backend sends it. Lua has no zone data, so a
``TZ`` zone goes to a script with its rules, worked out here by
``zoneinfo`` (the host's tzdata, or PyPI's ``tzdata``):
``name|from|to|offset|t1:o1|t2:o2...``, the UTC offset in seconds before
t1, then from each change on (UTC seconds), from a day before now to 40
days after. A script refuses rules that do not cover its server's clock
and the month after it. A zone ``zoneinfo`` does not know goes as its
name without any ``|`` (so no caller's text can pass for rules), which
the script refuses as the module refuses an unknown zone.
"""

from __future__ import annotations

import functools
import time
from datetime import datetime, timezone
from typing import Callable, Dict, Optional, Tuple
from zoneinfo import ZoneInfo, available_timezones

#: How long rules serve before they are worked out again (they cover 40
#: days ahead; a script needs the month after its clock).
_FRESH = 6 * 86400
_BEFORE, _AFTER, _STEP = 86400, 40 * 86400, 3600

_made: Dict[str, Tuple[int, str]] = {}
#: Bounds the table against callers who spell zones in ever new cases.
_KEPT = 1024


def encoded(name: str, now: Optional[int] = None) -> str:
    """``name`` with its rules around ``now`` (unix seconds; default the
    clock, from a process-wide table renewed every 6 days)."""
    if now is not None:
        at = now
        return _known(name, lambda zone: _rules(name, zone, at))
    clock = int(time.time())
    made = _made.get(name)
    if made is not None and clock - made[0] < _FRESH:
        return made[1]
    text = _known(name, lambda zone: _rules(name, zone, clock))
    if len(_made) >= _KEPT:
        _made.clear()
    _made[name] = (clock, text)
    return text


def _known(name: str, rules: Callable[[ZoneInfo], str]) -> str:
    # The module reads names in any case ("asia/seoul"), as the zoneinfo
    # of a case-insensitive file system would.
    canonical = _names().get(name.lower())
    if canonical is None:
        return name.replace("|", "")
    return rules(ZoneInfo(canonical))


@functools.lru_cache(maxsize=1)
def _names() -> Dict[str, str]:
    return {name.lower(): name for name in available_timezones()}


def _rules(name: str, zone: ZoneInfo, now: int) -> str:
    def offset(t: int) -> int:
        shift = datetime.fromtimestamp(t, timezone.utc).astimezone(zone).utcoffset()
        return int(shift.total_seconds()) if shift is not None else 0

    start, end = now - _BEFORE, now + _AFTER
    parts = [name, str(start), str(end), str(offset(start))]
    for t in range(start, end, _STEP):
        if offset(t + _STEP) != offset(t):
            # The change's second: the first with the new offset.
            before, after = t, t + _STEP
            while after - before > 1:
                middle = (before + after) // 2
                if offset(middle) == offset(before):
                    before = middle
                else:
                    after = middle
            parts.append(f"{after}:{offset(after)}")
    return "|".join(parts)
