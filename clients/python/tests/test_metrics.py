"""The INFO guard collector against a real node: every counter, with the
node's own value, in Prometheus's text format, over HTTP too."""

from __future__ import annotations

import threading
import time
import urllib.request
from typing import Dict

import pytest

from conftest import address, admin
from redis_guard import Guard, metrics


def parsed(text: str) -> Dict[str, int]:
    return {name: int(value) for name, value in
            (line.split(" ") for line in text.splitlines() if line and not line.startswith("#"))}


def info_guard() -> Dict[str, int]:
    (host, port), = address("GUARD_STANDALONE")
    raw = admin(host, port).execute_command("INFO", "guard")
    return {name.removeprefix("guard_"): int(value) for name, value in raw.items()}


def test_every_counter_of_info_guard_is_exported() -> None:
    (host, port), = address("GUARD_STANDALONE")
    g = Guard(admin(host, port))
    g.incrcheck("{metrics}:orders", 3, 60, [1, 2])
    g.throttle("{metrics}:api", 0, 1, 60)
    g.throttle("{metrics}:api", 0, 1, 60)
    node = info_guard()
    assert node["mon_crossings"] >= 1 and node["throttle_limited"] >= 1
    exported = parsed(metrics.scrape(admin(host, port)))
    assert exported.pop("redis_guard_up") == 1
    assert exported == {f"redis_guard_{name}_total": value for name, value in info_guard().items()}


def test_it_serves_metrics_over_http_and_says_when_the_node_is_down() -> None:
    (host, port), = address("GUARD_STANDALONE")
    server = metrics.serve(admin(host, port), "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
        assert "redis_guard_up 1" in body and "# TYPE redis_guard_throttle_calls_total counter" in body
    finally:
        server.shutdown()
    down = admin("127.0.0.1", 1)
    assert parsed(metrics.scrape(down)) == {"redis_guard_up": 0}


def test_a_node_that_does_not_answer_is_down_within_the_timeout(capsys: pytest.CaptureFixture[str]) -> None:
    (host, port), = address("GUARD_STANDALONE")
    node = admin(host, port)
    node.execute_command("CLIENT", "PAUSE", 3000, "ALL")  # every other client waits
    try:
        started = time.monotonic()
        metrics.main(["--url", f"redis://{host}:{port}", "--once", "--timeout", "0.5"])
        took = time.monotonic() - started
    finally:
        node.execute_command("CLIENT", "UNPAUSE")
    assert parsed(capsys.readouterr().out) == {"redis_guard_up": 0}
    assert took < 2.0, took
