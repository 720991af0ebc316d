"""The server's errors as the package's exception classes.

Each raised error is an instance of one of these and of the class the
client library raised (``redis.ResponseError``, valkey-glide's
``RequestError``, or a subclass): ``except CampaignExists`` and ``except
redis.ResponseError`` both catch it. Its text is the server's as redis-py
gives it, through every client: without ``ERR ``, other codes followed
by a space (valkey-glide writes ``An error was signalled by the server:
- ResponseError: `` before the text, and ``WRONGTYPE:`` for a code).
"""

from __future__ import annotations

import re
from typing import Dict, Tuple, Type


class GuardError(Exception):
    """A server error answering one of the guard's calls."""


class CampaignExists(GuardError):
    """COUPON.CREATE on a key that exists (``BUSYKEY``)."""


class NoSuchCampaign(GuardError):
    """A campaign command on a missing key (``no such campaign``)."""


class WrongType(GuardError):
    """A key of another type (``WRONGTYPE``)."""


#: Each package class mixed with each client error class, made once.
_mixed: Dict[Tuple[Type[GuardError], type], type] = {}


_GLIDE_PREFIX = re.compile(r"^An error was signalled by the server: - \w+: ")
_GLIDE_CODE = re.compile(r"^([A-Z][A-Z_]*): ")


def server_text(message: str) -> str:
    """The server's error text, as redis-py gives it, from any client's."""
    text = _GLIDE_PREFIX.sub("", message)
    text = _GLIDE_CODE.sub(r"\1 ", text)
    return text.removeprefix("ERR ")


def _kind(text: str) -> Type[GuardError]:
    if text.startswith("BUSYKEY "):
        return CampaignExists
    if text.startswith("WRONGTYPE "):
        return WrongType
    if text == "no such campaign":
        return NoSuchCampaign
    return GuardError


def typed(error: BaseException) -> BaseException:
    """``error``, a server error the client raised, as the package's: the
    same class mixed with the package class its text names."""
    if isinstance(error, GuardError):
        return error
    text = server_text(str(error))
    kind, client_class = _kind(text), type(error)
    if (kind, client_class) not in _mixed:
        _mixed[(kind, client_class)] = type(kind.__name__, (kind, client_class), {"__module__": __name__})
    mixed: BaseException = _mixed[(kind, client_class)](text)
    mixed.__cause__ = error.__cause__
    return mixed
