"""Opening a DuckDB file that another process may hold: wait with backoff, say so, and give up with a plain reason.

DuckDB allows one writer per file, and a read-only connection cannot open while a writer holds it. A run
holds the lock only inside short batch transactions, so a reader or a second run that finds it taken
retries until the lock is free, logging once who holds it, and after its wait raises `WarehouseBusy`
(a message for a person, never a DuckDB traceback).
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

logger = logging.getLogger("extraction_assets.warehouse")

WRITER_WAIT_S = 60.0  # a run waits this long for another run's batch to commit
READER_WAIT_S = 15.0  # the review tools, the summary and the eval wait this long, then say the run keeps the lock
MAX_DELAY_S = 0.25  # a run lets the lock go between batches: poll often enough to catch the gap
_PID = re.compile(r"\(PID (\d+)\)")


class WarehouseBusy(RuntimeError):
    """Another process kept the warehouse's lock for longer than this process waits."""


def _holder(exc: duckdb.IOException) -> str:
    """Who holds the lock, as DuckDB's message says ("... (PID 1234)")."""
    found = _PID.search(str(exc))
    return f"process {found.group(1)}" if found else "another process"


def is_lock_conflict(exc: BaseException) -> bool:
    """DuckDB's "Could not set lock on file ...: Conflicting lock is held in ... (PID n)" (not any IO error)."""
    import duckdb

    return isinstance(exc, duckdb.IOException) and "conflicting lock" in str(exc).lower()


def open_duckdb_file(
    path: Path,
    read_only: bool = False,
    wait_seconds: float = WRITER_WAIT_S,
    on_wait: Callable[[str], None] | None = None,
) -> duckdb.DuckDBPyConnection:
    """A connection to `path`, retried with jittered exponential backoff (50 ms up to MAX_DELAY_S) while
    another process holds the lock; `on_wait` (default: a log warning) hears once that this process waits."""
    import duckdb  # here, not at import: loading the code location does not load DuckDB

    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    told = False
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if not is_lock_conflict(exc):
                raise
            holder = _holder(exc)
            if time.monotonic() >= deadline:
                raise WarehouseBusy(
                    f"the warehouse {path} is locked by {holder} (a run writing to it?) and stayed locked for "
                    f"{wait_seconds:.0f} s; try again when it has finished"
                ) from None
            if not told:
                say = on_wait or logger.warning
                say(f"the warehouse {path} is locked by {holder}; waiting up to {wait_seconds:.0f} s")
                told = True
            time.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, MAX_DELAY_S)
