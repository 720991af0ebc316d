"""A Prometheus collector for ``INFO guard``, one per server node.

redis_exporter exports only the INFO fields it lists by name, and none of
the module's, so run this beside it::

    python -m redis_guard.metrics --url redis://127.0.0.1:6379 --port 9188

``/metrics`` then answers every ``INFO guard`` counter as
``redis_guard_<field>_total`` (counters since the node started: per node,
reset by a restart, not by ``CONFIG RESETSTAT``), plus ``redis_guard_up``.
"""

from __future__ import annotations

import argparse
import http.server
from typing import Any, Dict, Iterable, List, Optional, Tuple

PREFIX = "redis_guard_"


def counters(client: Any) -> Dict[str, int]:
    """``INFO guard`` of one node, without Redis's ``guard_`` prefix."""
    raw = client.execute_command("INFO", "guard")
    text = raw.decode() if isinstance(raw, bytes) else raw
    pairs: Iterable[Tuple[Any, Any]]
    if isinstance(text, dict):  # redis-py parses INFO into a dict
        pairs = text.items()
    else:
        pairs = (line.partition(":")[::2] for line in str(text).splitlines() if ":" in line)
    return {
        str(name).removeprefix("guard_"): int(value)
        for name, value in pairs
        if str(name).startswith("guard_")
    }


def exposition(values: Optional[Dict[str, int]]) -> str:
    """The Prometheus text format of ``values`` (None: the node is down)."""
    lines: List[str] = [
        f"# HELP {PREFIX}up 1 if INFO guard was read from the node.",
        f"# TYPE {PREFIX}up gauge",
        f"{PREFIX}up {0 if values is None else 1}",
    ]
    for name, value in sorted((values or {}).items()):
        metric = f"{PREFIX}{name}_total"
        lines += [f"# TYPE {metric} counter", f"{metric} {value}"]
    return "\n".join(lines) + "\n"


def scrape(client: Any) -> str:
    try:
        return exposition(counters(client))
    except Exception:  # a node that is down is a metric, not a crash
        return exposition(None)


def serve(client: Any, host: str, port: int) -> http.server.HTTPServer:
    """An HTTP server answering GET /metrics (call ``serve_forever``), each
    scrape on its own thread: one stuck on a slow node holds up no other."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/metrics":
                self.send_error(404)
                return
            body = scrape(client).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return None

    return http.server.ThreadingHTTPServer((host, port), Handler)


def main(argv: Optional[List[str]] = None) -> None:
    import redis

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", default="redis://127.0.0.1:6379", help="the node to read")
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port", type=int, default=9188, help="port of /metrics")
    parser.add_argument("--once", action="store_true", help="print the metrics once and exit")
    parser.add_argument("--timeout", type=float, default=2.0, help="seconds to wait for the node")
    options = parser.parse_args(argv)
    # A node that does not answer in time is reported down, not waited for.
    client = redis.Redis.from_url(
        options.url, socket_timeout=options.timeout, socket_connect_timeout=options.timeout
    )
    if options.once:
        print(scrape(client), end="")
        return
    serve(client, options.host, options.port).serve_forever()


if __name__ == "__main__":
    main()
