"""The scripts backend: each command as its Lua script, for servers that
cannot load the module (every managed service).

A command's script is ``<command>.lua`` with the part of ``prelude.lua``
it uses (see :func:`assembled`), from the one copy in the repository
(``clients/scripts``), which the wheel and the sdist bundle as
``redis_guard/lua``. It takes the command's keys as
KEYS and its other arguments as ARGV, in order, and answers as the
command does.
"""

from __future__ import annotations

import functools
import re
import hashlib
from pathlib import Path
from typing import Any, Iterable, List, Tuple

from . import zones
from .commands import Call
from .results import EncodableT

#: The commands whose ``TZ`` zone a script gets with its rules.
_ZONED = {"MON.INCRCHECK", "CL.QUOTA"}

#: A checkout's copy first (so a stale bundle never shadows it), then the
#: installed package's bundle.
_FOLDERS = (Path(__file__).resolve().parent.parent.parent / "scripts", Path(__file__).resolve().parent / "lua")


#: A top-level declaration of the prelude starts a line with ``local``.
_DECLARATION = re.compile(r"^local ", re.M)
_NAMES = re.compile(r"^local (?:function )?([\w, ]+)", re.ASCII)
_WORD = re.compile(r"[A-Za-z_]\w*", re.ASCII)


def _used_declarations(prelude: str, script: str) -> List[str]:
    """The declarations of ``prelude`` that ``script`` uses, directly or
    through others, in their order (a local can only name those before
    it)."""
    starts = [m.start() for m in _DECLARATION.finditer(prelude)]
    chunks = [prelude[a:b] for a, b in zip(starts, starts[1:] + [len(prelude)])]
    needed = set(_WORD.findall(script))
    kept = []
    for chunk in reversed(chunks):
        names = _NAMES.match(chunk)
        if names and needed & {n.strip() for n in names.group(1).split(",")}:
            kept.append(chunk)
            needed |= set(_WORD.findall(chunk))
    return kept[::-1]


def used_prelude(prelude: str, script: str) -> str:
    """The declarations of ``prelude`` that ``script`` uses: every call
    runs a script's top level, and each function it makes costs (the
    whole prelude took a call from 5 to 25 µs). clients/scripts/README.md
    says the rule; the tests hold the three copies (here, src/scripts.ts,
    tests/common/scripts.rs) to one text."""
    return "".join(_used_declarations(prelude, script))


#: The line after which a script's prelude goes; above it, the common
#: call's fast path.
_MARKER = "-- @prelude\n"


def assembled(prelude: str, script: str) -> str:
    """What the server runs for ``script``: the part of ``prelude`` it
    uses, first; with a line ``-- @prelude``, only the part that the lines
    above it use goes first, the rest right after it (a call that returns
    above it makes none of the rest's functions)."""
    at = script.find("\n" + _MARKER)
    if at < 0:
        return used_prelude(prelude, script) + script
    at += 1 + len(_MARKER)
    first = _used_declarations(prelude, script[:at])
    rest = [chunk for chunk in _used_declarations(prelude, script) if chunk not in first]
    return "".join(first) + script[:at] + "".join(rest) + script[at:]


@functools.lru_cache(maxsize=None)
def source(command: str) -> Tuple[str, str]:
    """The script of ``command`` (``MON.INCRCHECK``) and its SHA-1, as
    ``SCRIPT LOAD`` names it; read once per process."""
    name = command.lower() + ".lua"
    for folder in _FOLDERS:
        if (folder / name).is_file():
            own = (folder / name).read_text()
            text = assembled((folder / "prelude.lua").read_text(), own)
            return text, hashlib.sha1(text.encode()).hexdigest()
    raise LookupError(f"redis-guard: no script for {command}")


def _text(word: Any) -> str:
    return word.decode() if isinstance(word, bytes) else str(word)


@functools.lru_cache(maxsize=None)
def _sha(command: EncodableT) -> Tuple[str, bool]:
    """The SHA-1 of ``command``'s script, and whether it takes a zone."""
    name = _text(command)
    return source(name)[1], name.upper() in _ZONED


def evalsha(call: Call[Any]) -> Call[Any]:
    """``call`` as ``EVALSHA sha numkeys keys... args...``: same key, same
    parser."""
    words, indexes = call.words, call.key_indexes
    sha, zoned = _sha(words[0])
    count = len(indexes)
    if count and indexes[-1] == count:
        # The keys first (indexes 1..count), as most commands have them.
        keys, args = words[1 : count + 1], words[count + 1 :]
    else:
        keys = tuple(words[i] for i in indexes)
        args = tuple(word for i, word in enumerate(words) if i and i not in indexes)
    if zoned and "TZ" in args:  # as commands.py writes the option
        args = tuple(
            zones.encoded(_text(word)) if i and _text(args[i - 1]).upper() == "TZ" else word
            for i, word in enumerate(args)
        )
    return Call(("EVALSHA", sha, str(count), *keys, *args), call.key, call.parse, (), call.on_error, call.raw)


def script_load(call: Call[Any]) -> Call[Any]:
    """``SCRIPT LOAD`` of ``call``'s script, on the node of its key."""
    text, _ = source(_text(call.words[0]))
    return Call(("SCRIPT", "LOAD", text), call.key, str, ())


def names_a_module_command(error: BaseException, calls: Iterable[Call[Any]]) -> bool:
    """``error`` is the server's answer to a command it does not have, and
    that command is one of ``calls``' own (the module's): the module is
    not loaded. (An application's unknown command beside them says
    nothing of the module.)"""
    named = re.search(r"unknown command [`']([^`']*)[`']", str(error))
    if named is None:
        return False
    mine = {_text(call.words[0]).upper() for call in calls if not call.raw}
    return named.group(1).upper() in mine


def is_noscript(error: BaseException) -> bool:
    """The server has not the script (a failover, a restart, SCRIPT
    FLUSH): redis-py's NoScriptError, valkey-glide's text."""
    return "NOSCRIPT" in (type(error).__name__ + str(error)).upper()
