"""The scripts backend: each command as its Lua script, for servers that
cannot load the module (every managed service).

A command's script is ``prelude.lua`` then ``<command>.lua`` from the one
copy in the repository (``clients/scripts``), which the wheel and the
sdist bundle as ``redis_guard/lua``. It takes the command's keys as
KEYS and its other arguments as ARGV, in order, and answers as the
command does.
"""

from __future__ import annotations

import functools
from dataclasses import replace
import hashlib
from pathlib import Path
from typing import Any, Tuple

from .commands import Call

#: A checkout's copy first (so a stale bundle never shadows it), then the
#: installed package's bundle.
_FOLDERS = (Path(__file__).resolve().parent.parent.parent / "scripts", Path(__file__).resolve().parent / "lua")


@functools.lru_cache(maxsize=None)
def source(command: str) -> Tuple[str, str]:
    """The script of ``command`` (``MON.INCRCHECK``) and its SHA-1, as
    ``SCRIPT LOAD`` names it; read once per process."""
    name = command.lower() + ".lua"
    for folder in _FOLDERS:
        if (folder / name).is_file():
            text = (folder / "prelude.lua").read_text() + (folder / name).read_text()
            return text, hashlib.sha1(text.encode()).hexdigest()
    raise LookupError(f"redis-guard: no script for {command}")


def _text(word: Any) -> str:
    return word.decode() if isinstance(word, bytes) else str(word)


def evalsha(call: Call[Any]) -> Call[Any]:
    """``call`` as ``EVALSHA sha numkeys keys... args...``: same key, same
    parser."""
    _, sha = source(_text(call.words[0]))
    keys = [call.words[i] for i in call.key_indexes]
    args = [w for i, w in enumerate(call.words) if i and i not in call.key_indexes]
    return replace(call, words=("EVALSHA", sha, str(len(keys)), *keys, *args), key_indexes=())


def script_load(call: Call[Any]) -> Call[Any]:
    """``SCRIPT LOAD`` of ``call``'s script, on the node of its key."""
    text, _ = source(_text(call.words[0]))
    return Call(("SCRIPT", "LOAD", text), call.key, str, ())


def is_unknown_command(error: BaseException) -> bool:
    """The server's answer to a command it does not have: the module is
    not loaded."""
    return "unknown command" in str(error).lower()


def is_noscript(error: BaseException) -> bool:
    """The server has not the script (a failover, a restart, SCRIPT
    FLUSH): redis-py's NoScriptError, valkey-glide's text."""
    return "NOSCRIPT" in (type(error).__name__ + str(error)).upper()
