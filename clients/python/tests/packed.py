"""A user's program for the built distributions
(clients/python/tests/install-packed.sh): tests/client_python.rs runs it
with only the wheel's (or the sdist's) install and redis-py 8.1.0 /
valkey-glide 2.5.3 on the path, from a folder outside the checkout.
GUARD_STANDALONE has the module; GUARD_PLAIN does not, where the scripts
the distribution bundles (redis_guard/lua) run. Prints one line per
client and server."""

import importlib.metadata
import os
import sys
from pathlib import Path
from typing import Any, Callable, List, Literal, Tuple

import glide_sync
import redis

import redis_guard
from redis_guard import Guard
from redis_guard import scripts as bundled

installed = Path(sys.argv[1]).resolve()
here = Path(redis_guard.__file__).resolve().parent
# This install's copy, and its scripts the bundled ones (a checkout's
# clients/scripts is not beside it).
assert here == installed / "redis_guard", here
assert not bundled._FOLDERS[0].is_dir() and bundled._FOLDERS[1] == here / "lua", bundled._FOLDERS
assert (here / "lua" / "cl.throttle.lua").is_file() and (here / "py.typed").is_file()
for name in ("redis", "valkey-glide", "valkey-glide-sync"):
    print(name, importlib.metadata.version(name))


def redis_py(host: str, port: int) -> Tuple[Any, Callable[[], None]]:
    client = redis.Redis(host=host, port=port)
    return client, client.close


def glide(host: str, port: int) -> Tuple[Any, Callable[[], None]]:
    config = glide_sync.GlideClientConfiguration([glide_sync.NodeAddress(host, port)])
    client = glide_sync.GlideClient.create(config)
    return client, client.close


clients: List[Tuple[str, Callable[[str, int], Tuple[Any, Callable[[], None]]]]] = [
    ("redis-py", redis_py),
    ("glide", glide),
]
servers: List[Tuple[Literal["module", "scripts"], str]] = [("module", "GUARD_STANDALONE"), ("scripts", "GUARD_PLAIN")]
for backend, variable in servers:
    host, port = os.environ[variable].split(":")
    for name, connect in clients:
        client, close = connect(host, int(port))
        g = Guard(client, backend)
        key = f"packed:{installed.name}:{name}"
        first, second, third = (g.throttle(key, 1, 2, 60) for _ in range(3))
        check = g.incrcheck(f"{key}:orders", 1, 60, [1, 5])
        print(backend, name, first.remaining, second.remaining, third.limited, check.current, check.level)
        close()
