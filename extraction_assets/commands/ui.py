"""`extraction-assets ui`: the Dagster UI and its daemon on this project's code location, started together and
stopped together (`make ui`).

One code server serves both, as `dagster dev` does: the webserver and the daemon each spawning their own (what
`dagster-webserver -w workspace.yaml` and `dagster-daemon` do) cost a second code location, and the daemon replaces
its own every minute (it refreshes its workspace by starting a new server), loading the code again each time and
printing a "No heartbeat received" warning when the one it left shuts down. The code server is Dagster's proxy
(`dagster code-server start`), so the UI's "Reload" loads changed code, and it listens on a Unix socket in a
folder of this process, so nothing else can take its address.

Why not `dagster dev`, which also shares one code server: it maps SIGTERM to whatever SIGINT does, which is
"ignore" in a process started in the background (by a service manager, `nohup`, `&` in a script), so `kill` did not
stop it, and its daemon is Dagster's own. Here the webserver starts once the code server answers (else it warns,
with a stack trace, that the location is unreachable), the daemon once the page answers (its imports would compete
with the page's for the cores), and SIGTERM, SIGINT or SIGHUP stops all three. The daemon is the product's
(`instance/daemon.py`): it looks for backfills every few seconds. Beside them, a thread of this process serves the
evaluation reports (`web/report_files.py`), and the runs are told where (EXTRACTION_REPORTS_URL), so eval_report
links to each report.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from extraction_assets.commands.common import console
from extraction_assets.lib.settings import Settings

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

# what `workspace.yaml` says, wherever the command runs: the location's name keys its runs and sensor states
MODULE, LOCATION_NAME = "extraction_assets.definitions", "extraction_assets"
START_WAIT_S = 120  # the daemon starts after the page and the code server answer, or after this long
STOP_WAIT_S = 10  # a process still up this long after SIGTERM is killed


class _Stop(Exception):
    """A signal asked the UI to stop."""


def _raise_stop(signum: int, _frame: FrameType | None) -> None:
    raise _Stop(signal.Signals(signum).name)


def _wait_listening(address: tuple[str, int] | Path, server: subprocess.Popen[bytes], deadline: float) -> None:
    """Until `server` takes connections on its address (a port, or a Unix socket), or has ended, or `deadline`."""
    while server.poll() is None and time.monotonic() < deadline:
        try:
            if isinstance(address, Path):
                with socket.socket(socket.AF_UNIX) as unix:
                    unix.connect(str(address))
            else:
                socket.create_connection(address, timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)


def code_server_command(socket_path: Path) -> list[str]:
    """Dagster's code server (a proxy that loads the code location in a process of its own) on `socket_path`."""
    return [
        *(sys.executable, "-m", "dagster", "code-server", "start", "--socket", str(socket_path)),
        *("-m", MODULE, "--location-name", LOCATION_NAME, "--log-level", "warning"),
    ]


def workspace_of(socket_path: Path) -> dict[str, object]:
    """The workspace the webserver and the daemon share: the code server on `socket_path`."""
    server = {"socket": str(socket_path), "host": "localhost", "location_name": LOCATION_NAME}
    return {"load_from": [{"grpc_server": server}]}


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


def _serve_reports(args: argparse.Namespace) -> ThreadingHTTPServer | None:
    """The evaluation reports folder beside the UI, its address given to the runs (EXTRACTION_REPORTS_URL), so
    eval_report's metadata links to each report; nothing where that variable already names a server."""
    # the stages and the web package load when the UI starts, not with the command line's parser
    from extraction_assets.lib.stages import reports_dir
    from extraction_assets.web.report_files import serve_reports

    settings = Settings.from_env()
    if settings.reports_url:
        return None
    wanted = args.reports_port or args.port + 1
    server = serve_reports(reports_dir(settings.warehouse), args.host, wanted)
    os.environ["EXTRACTION_REPORTS_URL"] = f"http://{args.host}:{server.server_port}"  # the code server's runs read it
    if server.server_port != wanted:
        console.print(f"port {wanted} is taken: the eval reports are served on {server.server_port}")
    return server


def cmd_ui(args: argparse.Namespace) -> int:
    from extraction_assets.instance import open_instance  # the instance package loads Dagster
    from extraction_assets.instance.daemon import command as daemon_command

    open_instance().dispose()  # its storage created once, before three processes open it

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _raise_stop)  # also where the shell that started us ignores SIGINT
    processes: dict[str, subprocess.Popen[bytes]] = {}
    reports = _serve_reports(args)
    folder = tempfile.TemporaryDirectory(prefix="extraction-ui-")
    code_socket, workspace = Path(folder.name) / "code.sock", Path(folder.name) / "workspace.yaml"
    workspace.write_text(json.dumps(workspace_of(code_socket)))  # JSON is YAML; no YAML parser for --help
    try:
        deadline = time.monotonic() + START_WAIT_S
        _start("code server", code_server_command(code_socket), processes)
        _wait_listening(code_socket, processes["code server"], deadline)  # else the webserver warns it is away
        serve = ["-h", args.host, "-p", str(args.port), "-w", str(workspace)]
        _start("webserver", [sys.executable, "-m", "dagster_webserver", *serve], processes)
        _wait_listening((args.host, args.port), processes["webserver"], deadline)
        console.print(f"Dagster UI at [bold]http://{args.host}:{args.port}[/] (Ctrl+C to stop)")
        console.print(f"eval reports at {os.environ['EXTRACTION_REPORTS_URL']} (linked from eval_report)")
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
        if reports is not None:
            reports.shutdown()
        folder.cleanup()


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("ui", help="the Dagster UI and its daemon (stops on Ctrl+C or SIGTERM)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3000)
    parser.add_argument(
        "--reports-port", type=int, default=None, help="where the eval reports are served (default: the UI's port + 1)"
    )
    parser.set_defaults(func=cmd_ui)
