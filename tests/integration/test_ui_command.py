"""`extraction-assets ui` (what `make ui` runs): the page answers with the code location loaded, the daemon runs
beside it on the same code server, the eval reports are served beside them, and SIGTERM stops all of it, also when
started where SIGINT is ignored (a script's `&`, a service)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from extraction_assets.lib.ports import free_port

BIN = Path(sys.executable).parent

QUERY = b'{"query": "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"}'


def _locations(port: int) -> list[dict[str, str]]:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql", data=QUERY, headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)["data"]["workspaceOrError"]["locationEntries"]


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _code_server(pids: set[int]) -> int:
    """The one of `pids` running Dagster's code server."""
    return next(pid for pid in pids if b"code-server" in Path(f"/proc/{pid}/cmdline").read_bytes())


def test_the_ui_loads_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_"))} | {
        "DAGSTER_HOME": str(tmp_path / "dagster"),
        "EXTRACTION_WAREHOUSE": str(tmp_path / "warehouse.duckdb"),
    }
    (tmp_path / "dagster").mkdir()
    reports = free_port()
    ui = subprocess.Popen(
        [str(BIN / "extraction-assets"), "ui", "--port", str(port), "--reports-port", str(reports)],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as `&` in a script starts it
    )
    try:
        deadline = time.monotonic() + 180
        loaded: list[dict[str, str]] = []
        while time.monotonic() < deadline and ui.poll() is None:
            try:
                loaded = _locations(port)
            except OSError:
                loaded = []
            if loaded and loaded[0]["loadStatus"] == "LOADED":
                break
            time.sleep(0.5)
        assert loaded == [{"name": "extraction_assets", "loadStatus": "LOADED"}]
        while time.monotonic() < deadline and len(_children(ui.pid)) < 3:
            time.sleep(0.2)
        children = _children(ui.pid)
        assert len(children) == 3, "the code server, the webserver and the daemon"
        assert not any(_children(pid) for pid in children - {_code_server(children)}), "no code server of their own"
        (tmp_path / "eval_reports" / "r.html").write_text("<h1>report</h1>", encoding="utf-8")
        with urllib.request.urlopen(f"http://127.0.0.1:{reports}/r.html", timeout=5) as answer:
            assert answer.read() == b"<h1>report</h1>"
        ui.send_signal(signal.SIGTERM)
        assert ui.wait(timeout=60) == 0
        assert ui.stdout is not None and "SIGTERM: stopping the UI" in ui.stdout.read().decode()
        assert not {pid for pid in children if Path(f"/proc/{pid}").exists()}, "no process is left behind"
    finally:
        if ui.poll() is None:
            ui.kill()
            ui.wait()
