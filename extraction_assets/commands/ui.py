"""`extraction-assets ui`: the Dagster UI and its daemon on this project's code location, started together and
stopped together (`make ui`).

Why not `dagster dev`: its webserver starts only once its code-server proxy is up, and loads the location through
it, so the page answered after 11-13 s on a quiet machine; and it maps SIGTERM to whatever SIGINT does, which is
"ignore" in a process started in the background (by a service manager, `nohup`, `&` in a script): `kill` did not
stop it. Here the webserver starts at once with its own code server (6-7 s), the daemon once the page answers (its
imports would compete with the page's for the cores), and SIGTERM, SIGINT or SIGHUP stops both. The daemon is the
product's (`instance/daemon.py`): it looks for backfills every few seconds.
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

from extraction_assets.commands.common import console

# what `workspace.yaml` says, wherever the command runs: the location's name keys its runs and sensor states
LOCATION = {"python_module": {"module_name": "extraction_assets.definitions", "location_name": "extraction_assets"}}
START_WAIT_S = 120  # the daemon starts after the page answers, or after this long
STOP_WAIT_S = 10  # a process still up this long after SIGTERM is killed


class _Stop(Exception):
    """A signal asked the UI to stop."""


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signal.Signals(signum).name)


def _wait_listening(host: str, port: int, server: subprocess.Popen[bytes]) -> None:
    """Until `server` takes connections on its port, or has ended, or START_WAIT_S passed."""
    deadline = time.monotonic() + START_WAIT_S
    while server.poll() is None and time.monotonic() < deadline:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)


def _stop_all(processes: dict[str, subprocess.Popen[bytes]]) -> None:
    for process in processes.values():
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + STOP_WAIT_S
    for name, process in processes.items():
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            console.print(f"the {name} did not stop within {STOP_WAIT_S} s: killed")
            process.kill()
            process.wait()


def _start(name: str, command: list[str], processes: dict[str, subprocess.Popen[bytes]]) -> None:
    # a session of its own: a terminal's Ctrl-C comes to this process alone, which stops the others in order
    processes[name] = subprocess.Popen(command, start_new_session=True)


def cmd_ui(args: argparse.Namespace) -> int:
    from extraction_assets.instance.daemon import command as daemon_command  # the instance package loads Dagster

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _raise_stop)  # also where the shell that started us ignores SIGINT
    processes: dict[str, subprocess.Popen[bytes]] = {}
    folder = tempfile.TemporaryDirectory(prefix="extraction-ui-")
    workspace = Path(folder.name) / "workspace.yaml"
    workspace.write_text(json.dumps({"load_from": [LOCATION]}))  # JSON is YAML; no YAML parser for --help
    try:
        serve = ["-h", args.host, "-p", str(args.port), "-w", str(workspace)]
        _start("webserver", [sys.executable, "-m", "dagster_webserver", *serve], processes)
        _wait_listening(args.host, args.port, processes["webserver"])
        console.print(f"Dagster UI at [bold]http://{args.host}:{args.port}[/] (Ctrl+C to stop)")
        _start("daemon", daemon_command(workspace), processes)
        while True:
            for name, process in processes.items():
                if process.poll() is not None:
                    console.print(f"[red]the {name} ended (exit {process.returncode}):[/] stopping the UI")
                    return 1
            time.sleep(0.5)
    except _Stop as stop:
        console.print(f"{stop}: stopping the UI")
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C does not cut the stop short
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _stop_all(processes)
        folder.cleanup()


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ui", help="the Dagster UI and its daemon (stops on Ctrl+C or SIGTERM)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.set_defaults(func=cmd_ui)
