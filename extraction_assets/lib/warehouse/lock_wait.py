"""Opening a DuckDB file that another process may hold: wait with backoff, say so, and give up with a plain reason.

DuckDB allows one writer per file, and a read-only connection cannot open while a writer holds it. A run
holds the lock only inside short batch transactions, so a reader or a second run that finds it taken
retries until the lock is free, logging once who holds it, and after its wait raises `WarehouseBusy`
(a message for a person, never a DuckDB traceback).

A run opens its next write connection moments after closing the last one (or holds the file open between batches,
see `held.py`), so a process polling the file could miss gap after gap. A process that waits therefore says so: it
holds a shared `flock` on a file beside the warehouse (`<file>.readers`) until it is in; a run holding the file gives
it back when it sees that lock, and a writer about to open the file first waits, at most `WRITER_YIELD_S`, until no
one holds it. The lock goes with the process, so a killed reader never stalls a run.
"""

from __future__ import annotations

import fcntl
import logging
import os
import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from extraction_assets.lib.private_files import open_private
from extraction_assets.lib.warehouse.engine import limit_engine

if TYPE_CHECKING:
    import duckdb

logger = logging.getLogger("extraction_assets.warehouse")

WRITER_WAIT_S = 60.0  # a run waits this long for another run's batch to commit
READER_WAIT_S = 15.0  # the review tools, the summary and the eval wait this long, then say the run keeps the lock
MAX_DELAY_S = 0.25  # a run lets the lock go between batches: poll often enough to catch the gap
WRITER_YIELD_S = 2.0  # a writer lets waiting readers in first for at most this long (a reader takes well under 1 s)
READERS_SUFFIX = ".readers"
_PID = re.compile(r"\(PID (\d+)\)")


class WarehouseBusy(RuntimeError):
    """Another process kept the warehouse's lock for longer than this process waits."""


class WarehouseUnreadable(RuntimeError):
    """The warehouse file cannot be read: damaged, cut short, or not a DuckDB file. The message names the file, what
    DuckDB found and what to do (`unreadable`)."""


_DAMAGE = ("not a valid duckdb database file", "corrupt database file", "could not read enough bytes", "checksum")


def damaged(exc: BaseException) -> bool:
    """Whether a DuckDB error says the file itself is damaged (not a lock, not a query of ours)."""
    import duckdb

    return isinstance(exc, duckdb.Error) and any(sign in str(exc).lower() for sign in _DAMAGE)


def unreadable(path: Path | str, exc: BaseException) -> WarehouseUnreadable:
    """The one line a person reads when the warehouse cannot be read, instead of DuckDB's traceback."""
    found = str(exc).splitlines()[0].removeprefix("IO Error: ") if str(exc) else type(exc).__name__
    todo = (
        "restore it from a backup; without one, move it aside and `extraction-assets run` builds a new warehouse from "
        "the inbox (reviewers' decisions and the audit log are only in the damaged file: keep it)"
        if damaged(exc)
        else "check that the file is readable by this user"
    )
    return WarehouseUnreadable(f"the warehouse {path} cannot be read ({found}): {todo}")


def _holder(exc: duckdb.IOException) -> str:
    """Who holds the lock, as DuckDB's message says ("... (PID 1234)")."""
    found = _PID.search(str(exc))
    return f"process {found.group(1)}" if found else "another process"


def is_lock_conflict(exc: BaseException) -> bool:
    """DuckDB's "Could not set lock on file ...: Conflicting lock is held in ... (PID n)" (not any IO error)."""
    import duckdb  # DuckDB loads when a connection opens

    return isinstance(exc, duckdb.IOException) and "conflicting lock" in str(exc).lower()


def readers_file(path: Path) -> Path:
    """The file a waiting reader locks (shared) and a writer checks before it takes the warehouse."""
    return path.with_name(path.name + READERS_SUFFIX)


def _say_waiting(path: Path) -> int | None:
    """A shared lock on the readers file, held until this process is in (None where the folder is read-only)."""
    try:
        handle = open_private(readers_file(path))
    except OSError:
        return None
    fcntl.flock(handle, fcntl.LOCK_SH)  # waits only for a writer's test of the lock, never for a writer's work
    return handle


STUCK_AFTER_S = 5.0  # a process still waiting after this long is not taking the file (suspended, stopped)
GAP_S = 1.0  # a process that waited while the file stood free this long, and did not take it, is not taking it


class _LockTable(NamedTuple):
    """What the kernel's lock table says of a warehouse file: who waits for it (the readers file's shared locks),
    and who holds it (DuckDB's own lock on the file)."""

    waiting: set[int]
    holders: set[int]


class _Waiters:
    """What this process has seen of the processes waiting for a warehouse: since when each waits, how long the
    file stood free while it waited, and which ones it has named as not taking the file."""

    def __init__(self) -> None:
        self.first_seen: dict[int, float] = {}
        self.offered: dict[int, float] = {}
        self.passed: set[int] = set()

    def live(self, table: _LockTable, free_for: float = 0.0) -> set[int]:
        """The waiting processes still worth giving the file back to; `free_for`: seconds the file has just stood
        free while they waited. One that had the file free for `GAP_S` and did not take it, or has waited longer than
        `STUCK_AFTER_S` (a `review list` suspended with Ctrl-Z), had its chance: it is named once, then not waited for
        while it keeps waiting. A rotation of such processes (a new one every few seconds) costs a writer one gap
        each, not a wait after every batch."""
        now = time.monotonic()
        waiting = table.waiting
        for gone in set(self.first_seen) - waiting:
            del self.first_seen[gone]
            self.offered.pop(gone, None)
            self.passed.discard(gone)
        live = set()
        for pid in waiting:
            since = self.first_seen.setdefault(pid, now)
            self.offered[pid] = self.offered.get(pid, 0.0) + free_for
            if pid in self.passed:
                continue
            if self.offered[pid] >= GAP_S:
                self._pass_over(pid, f"did not take the warehouse while it stood free for {GAP_S:g} s")
            elif now - since >= STUCK_AFTER_S:
                self._pass_over(pid, f"has waited for the warehouse for over {STUCK_AFTER_S:g} s without taking it")
            else:
                live.add(pid)
        return live

    def _pass_over(self, pid: int, why: str) -> None:
        self.passed.add(pid)
        logger.warning(f"process {pid} {why} (suspended?): not giving the file back to it any more while it waits")


_waiters = _Waiters()


def _lock_table(path: Path) -> _LockTable | None:
    """Who waits for and who holds `path`, from the kernel's lock table (None: it cannot tell)."""
    try:
        waits = os.stat(readers_file(path))
        with open("/proc/locks", encoding="ascii") as table:
            rows = [row.split() for row in table.read().splitlines()]
    except OSError:
        return None
    try:
        held = os.stat(path)
    except OSError:
        held = None

    def where(info: os.stat_result) -> str:
        return f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"

    readers, database = where(waits), where(held) if held is not None else None
    rows = [fields for fields in rows if len(fields) > 5 and fields[1] != "->"]
    return _LockTable(
        waiting={int(fields[4]) for fields in rows if fields[5] == readers},
        holders={int(fields[4]) for fields in rows if fields[5] == database},
    )


def waiting_processes(path: Path) -> set[int]:
    """The processes that wait for `path` now and are still worth giving the file back to (`_Waiters.live`)."""
    table = _lock_table(path)
    if table is not None:
        return _waiters.live(table)
    try:  # where the kernel's lock table cannot be read: one non-blocking test, nobody to name
        handle = os.open(readers_file(path), os.O_RDONLY)
    except OSError:  # no one ever waited here
        return set()
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return set()
    except BlockingIOError:
        return {0}
    finally:
        os.close(handle)  # closing drops the test lock at once


def others_wait(path: Path) -> bool:
    """Whether another process waits for `path` now and is still worth giving the file back to."""
    return bool(waiting_processes(path))


def let_readers_in(path: Path, longest: float = WRITER_YIELD_S) -> float:
    """Before a writer opens `path`: wait while readers wait for it, at most `longest` seconds; the seconds waited.

    While the file stands free (nobody holds it) each waiting process's chance is counted: one that lets it stand
    free for `GAP_S` is not waited for again. Only a reader blocked by this process could make it wait for nothing
    (a process opening a second connection while it holds the file), and that wait is bounded."""
    started = last = time.monotonic()
    while True:
        table = _lock_table(path)
        now = time.monotonic()
        if table is None:
            waiting = waiting_processes(path)
        else:
            waiting = _waiters.live(table, free_for=0.0 if table.holders else now - last)
        last = now
        if not waiting or now - started >= longest:
            return now - started
        time.sleep(0.01)


def open_duckdb_file(
    path: Path,
    read_only: bool = False,
    wait_seconds: float = WRITER_WAIT_S,
    on_wait: Callable[[str], None] | None = None,
    yield_s: float = WRITER_YIELD_S,
) -> duckdb.DuckDBPyConnection:
    """A connection to `path`, retried with jittered exponential backoff (50 ms up to MAX_DELAY_S) while
    another process holds the lock; `on_wait` (default: a log warning) hears once that this process waits.
    A writer first lets waiting readers in (`let_readers_in`, at most `yield_s`); a process that waits says so
    until it is in."""
    import duckdb  # here, not at import: loading the code location does not load DuckDB

    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    told = False
    waiting: int | None = None
    if not read_only and yield_s > 0:
        let_readers_in(path, yield_s)
    try:
        while True:
            try:
                return limit_engine(duckdb.connect(str(path), read_only=read_only))
            except duckdb.IOException as exc:
                if not is_lock_conflict(exc):
                    raise unreadable(path, exc) from None
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
                    waiting = _say_waiting(path)  # a run holding the file gives it back (see `held.py`)
                time.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, MAX_DELAY_S)
    finally:
        if waiting is not None:
            os.close(waiting)
