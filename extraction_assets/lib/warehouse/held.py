"""One DuckDB database a process keeps open while it works, lent batch by batch, let go whenever someone else waits.

Opening and closing the warehouse file costs about 22 ms (its catalog is read, and a write is checkpointed on
close), and a fresh database reads its blocks cold; a cursor of an open database costs 0.2 ms. An incremental run
of every schema version opened the file about forty times, so a process holds it open (`held_warehouse`: one
holder per file, shared by every run and step of the process) and lends each batch a cursor (`lease`).

The give-back rule. The holder gives the file back:
- as soon as another process waits for it (a reader or a writer that waits says so, see `lock_wait`), at the end of
  the lease in progress or, between leases, within `WATCH_S`, as long as the processes waiting for it have had less
  than `YIELD_SHARE` of the time this process has held it (plus `YIELD_GRACE_S`): a rotation of waiting readers
  cannot starve a writer. Past that share it keeps the file, names the processes waiting, and gives the file back
  again once their share has fallen under it. A waiting process that does not take the file when it stands free
  (`lock_wait.GAP_S`) is named and not waited for again;
- after `IDLE_S` without a lease (the end of a run, a watch between passes), unless it is pinned (`pinned`: the
  command line's run in progress) or this process's worker processes are computing a step's batches (the gaps
  between its batches are no reason to close and checkpoint the file, and to open it cold again);
- when its owner is done (`give_back`: the runner, at the end of `run_pipeline`).
A lease is a read-write cursor whatever the caller asked for: a process cannot hold one DuckDB file both read-only
and read-write, and what a batch reads is the same either way. For the same reason `open_warehouse` lends from the
holder while it holds the file.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.freed_memory import give_back_freed_memory
from extraction_assets.lib.parallel import working
from extraction_assets.lib.warehouse.lock_wait import WRITER_YIELD_S, waiting_processes
from extraction_assets.lib.warehouse.opening import connect

if TYPE_CHECKING:
    import duckdb

IDLE_S = 2.0  # no lease for this long, and not pinned: the file is given back
WATCH_S = 0.02  # between leases, how often the watcher looks for a process waiting for the file
YIELD_SHARE = 0.25  # of the time a process holds the file, at most this share goes to the processes waiting for it
YIELD_GRACE_S = 2.0  # beside that share, so the first reader of a run gets in at once

logger = logging.getLogger("extraction_assets.warehouse")

_HOLDERS: dict[Path, HeldWarehouse] = {}
_HOLDERS_LOCK = threading.Lock()


def held_warehouse(path: Path | str) -> HeldWarehouse:
    """This process's holder of the DuckDB file `path` (created at the first call; it opens the file when lent)."""
    key = Path(path).resolve()
    with _HOLDERS_LOCK:
        if key not in _HOLDERS:
            _HOLDERS[key] = HeldWarehouse(key)
        return _HOLDERS[key]


def holding(path: Path | str) -> HeldWarehouse | None:
    """The holder of `path` while this process holds it open, else None."""
    held = _HOLDERS.get(Path(path).resolve())
    return held if held is not None and held.is_open else None


def give_back(path: Path | str) -> None:
    """Close `path` if this process holds it (its next lease opens it again)."""
    if (held := _HOLDERS.get(Path(path).resolve())) is not None:
        held.close()


class HeldWarehouse:
    """The warehouse file of one process, opened at the first lease and given back as the module says."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.opened = 0  # times the file was opened (what holding it saves is visible in tests)
        self.given_to_waiters = 0  # times it was given back because another process waited
        self.yielded_s = 0.0  # seconds this process waited to have it again after giving it to them
        self._root: duckdb.DuckDBPyConnection | None = None
        self._leases = 0
        self._pins = 0
        self._idle_since = 0.0
        self._since: float | None = None  # when this process began working with the file
        self._for_waiters = False  # the last give-back was to processes waiting
        self._told_share = False
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    @contextmanager
    def lease(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the open file for one batch (the file is opened, or reopened, when it is not)."""
        with self._lock:
            if self._root is None:
                self._open()
            self._leases += 1
            cursor = self._root.cursor()  # type: ignore[union-attr]  # opened just above
        try:
            yield cursor
        finally:
            cursor.close()
            with self._lock:
                self._leases -= 1
                self._idle_since = time.monotonic()
                if not self._leases and self._others_wait():
                    self._give_back(for_waiters=True)
            give_back_freed_memory()  # a batch's rows are let go here: at most once a second (`freed_memory`)

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Keep the file open between leases for the body (a run in progress): only a waiting process gets it."""
        with self._lock:
            if not self._pins:  # a run begins: its readers' share is counted from here
                self._since, self.yielded_s, self.given_to_waiters = time.monotonic(), 0.0, 0
                self._told_share = False
            self._pins += 1
        try:
            yield
        finally:
            with self._lock:
                self._pins -= 1
                self._idle_since = time.monotonic()

    def close(self) -> None:
        """Give the file back now; a later lease opens it again."""
        with self._lock:
            self._give_back()
            if self.given_to_waiters:
                logger.info(
                    f"gave the warehouse to waiting processes {self.given_to_waiters} times; "
                    f"waited {self.yielded_s:.1f} s in all to have it again"
                )

    @property
    def is_open(self) -> bool:
        return self._root is not None

    def _open(self) -> None:
        started = time.monotonic()
        if self._since is None:
            self._since = started
        self._root = connect(self.path, yield_s=min(WRITER_YIELD_S, max(0.0, self._share_left())))
        self.opened += 1
        if self._for_waiters:  # what the processes waiting for the file cost this one
            self.yielded_s += time.monotonic() - started
            self._for_waiters = False
        self._start_watcher()

    def _share_left(self) -> float:
        """Seconds the processes waiting for the file may still have, under `YIELD_SHARE` of the time held."""
        held = time.monotonic() - (self._since or time.monotonic())
        return YIELD_SHARE * held + YIELD_GRACE_S - self.yielded_s

    def _others_wait(self) -> bool:
        """Whether to give the file back to a process waiting for it now (the give-back rule, in the docstring)."""
        waiting = waiting_processes(self.path)
        if not waiting:
            return False
        if self._share_left() > 0:
            return True
        if not self._told_share:
            self._told_share = True
            held = time.monotonic() - (self._since or time.monotonic())
            named = ", ".join(str(pid) for pid in sorted(waiting) if pid)
            logger.warning(
                f"processes waiting for the warehouse ({named or 'unknown'}) have had {self.yielded_s:.1f} s of the "
                f"{held:.0f} s this run has worked with it: it keeps the file for now and gives it back once their "
                f"share is under {YIELD_SHARE:.0%}"
            )
        return False

    def _give_back(self, for_waiters: bool = False) -> None:
        if self._root is not None:
            self._root.close()
            self._root = None
            if for_waiters:
                self.given_to_waiters += 1
                self._for_waiters = True

    def _start_watcher(self) -> None:
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(target=self._watch, name="warehouse-holder", daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        """Between leases: give the file back when someone waits for it, or when it has been idle for IDLE_S and
        is not pinned."""
        while True:
            time.sleep(WATCH_S)
            with self._lock:
                if self._root is None:
                    return
                if self._leases:
                    continue
                if self._others_wait():
                    self._give_back(for_waiters=True)
                    return
                if not self._pins and not working() and time.monotonic() - self._idle_since >= IDLE_S:
                    self._give_back()
                    return
