"""The evaluation reports over HTTP, for the links `eval_report`'s metadata carries (`extraction-assets ui` serves
them beside the Dagster UI). The reports are self-contained files in one folder: the standard library's file
handler serves that folder and nothing above it, read-only, with a listing of every report at `/`."""

from __future__ import annotations

import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _ReportFiles(SimpleHTTPRequestHandler):
    """The folder's files; requests are not logged (the UI's terminal is for what needs a person)."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")  # a report is rewritten by the next evaluation of its version
        super().end_headers()


def serve_reports(folder: Path, host: str, port: int) -> ThreadingHTTPServer:
    """`folder` (created if missing) on `host`:`port`, or on a port the kernel picks when that one is taken, from a
    thread of this process; `shutdown()` stops it."""
    folder.mkdir(parents=True, exist_ok=True)
    handler = partial(_ReportFiles, directory=str(folder))
    try:
        server = ThreadingHTTPServer((host, port), handler)
    except OSError:
        server = ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=server.serve_forever, name="eval-reports", daemon=True).start()
    return server
