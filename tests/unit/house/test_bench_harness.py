"""The bench harness: one failing group is reported and the others still run; the fake is awaited, not raced."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from rich.console import Console

from evals import bench
from evals.bench_model_path import wait_until_serving


def test_a_failing_group_does_not_stop_the_others(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> bench.Figures:
        raise RuntimeError("the fake never answered")

    monkeypatch.setattr(bench, "BENCHES", {"first": broken, "second": lambda: {"figure": 1}})
    console = Console(record=True, width=200)
    results, failed = bench.run_groups(["first", "second"], console)
    assert list(results) == ["second"]
    assert results["second"]["figure"] == 1
    assert failed == ["first"]
    assert "the fake never answered" in console.export_text()


def test_main_exits_non_zero_after_writing_the_groups_that_ran(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    def broken() -> bench.Figures:
        raise RuntimeError("boom")

    monkeypatch.setattr(bench, "BENCHES", {"first": broken, "second": lambda: {"figure": 2}})
    out = tmp_path / "results.json"
    assert bench.main(["--out", str(out)]) == 1
    assert '"second"' in out.read_text()


def test_each_group_says_which_machine_made_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bench, "BENCHES", {"only": lambda: {"figure": 3}})
    results, _ = bench.run_groups(["only"], Console(record=True))
    described = str(results["only"]["machine"])
    assert f"{os.cpu_count()} cores" in described
    assert described.endswith("GiB")


def test_waiting_for_the_fake_fails_at_once_when_its_process_died() -> None:
    dead = subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    dead.wait()
    with pytest.raises(RuntimeError, match="exited with code 3"):
        wait_until_serving(dead, "http://127.0.0.1:9/v1", timeout_s=60)


def test_waiting_for_the_fake_outlasts_a_slow_start() -> None:
    """A server that starts listening only after 2 s is still awaited (the old harness gave up after 10 s)."""
    script = (
        "import time, socket, http.server, json\n"
        "time.sleep(2)\n"
        "class H(http.server.BaseHTTPRequestHandler):\n"
        "    def do_GET(self):\n"
        "        data = json.dumps([]).encode(); self.send_response(200)\n"
        "        self.send_header('Content-Length', str(len(data))); self.end_headers(); self.wfile.write(data)\n"
        "    def log_message(self, *a): pass\n"
        "http.server.HTTPServer(('127.0.0.1', int(__import__('sys').argv[1])), H).serve_forever()\n"
    )
    from extraction_assets.lib.ports import free_port

    port = free_port()
    slow = subprocess.Popen([sys.executable, "-c", script, str(port)])
    try:
        waited = wait_until_serving(slow, f"http://127.0.0.1:{port}/v1", timeout_s=60)
    finally:
        slow.kill()  # its end must not wait on the child (after a SIGTERM it was still there 10 s later under load)
        slow.wait()
    assert waited >= 1.5
