"""One DuckDB database a process keeps open while it works, lent batch by batch, let go whenever someone else waits.

Opening and closing the warehouse file costs about 22 ms (its catalog is read, and a write is checkpointed on
close), and a fresh database reads its blocks cold; a cursor of an open database costs 0.2 ms. An incremental run
of every schema version (seven Dagster runs) opened the file about forty times, so a process holds it open
(`held_warehouse`: one holder per file, shared by every run and step of the process) and lends each batch a cursor
(`lease`). It gives the file back:
- as soon as another process waits for it (a reader or a writer that waits says so, see `lock_wait`), at the end of
  the lease in progress or, between leases, within `WATCH_S`;
- after `IDLE_S` without a lease (a batch being scrubbed, a model call, the end of a run): no process holds the
  file for longer than that without using it;
- when its owner is done (`give_back`: the runner, at the end of `run_pipeline`).
A lease is a read-write cursor whatever the caller asked for: a process cannot hold one DuckDB file both read-only
and read-write, and what a batch reads is the same either way. For the same reason `open_warehouse` lends from the
holder while it holds the file.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse.lock_wait import others_wait
from extraction_assets.lib.warehouse.opening import connect

if TYPE_CHECKING:
    import duckdb

IDLE_S = 2.0  # no lease for this long: the file is given back (one that waits gets it within WATCH_S anyway)
WATCH_S = 0.02  # between leases, how often the watcher looks for a process waiting for the file


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
        self._root: duckdb.DuckDBPyConnection | None = None
        self._leases = 0
        self._idle_since = 0.0
        self._lock = threading.Lock()
        self._watcher: threading.Thread | None = None

    @contextmanager
    def lease(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of the open file for one batch (the file is opened, or reopened, when it is not)."""
        with self._lock:
            if self._root is None:
                self._root = connect(self.path)
                self.opened += 1
                self._start_watcher()
            self._leases += 1
            cursor = self._root.cursor()
        try:
            yield cursor
        finally:
            cursor.close()
            with self._lock:
                self._leases -= 1
                self._idle_since = time.monotonic()
                if not self._leases and others_wait(self.path):
                    self._give_back()

    def close(self) -> None:
        """Give the file back now; a later lease opens it again."""
        with self._lock:
            self._give_back()

    @property
    def is_open(self) -> bool:
        return self._root is not None

    def _give_back(self) -> None:
        if self._root is not None:
            self._root.close()
            self._root = None

    def _start_watcher(self) -> None:
        if self._watcher is None or not self._watcher.is_alive():
            self._watcher = threading.Thread(target=self._watch, name="warehouse-holder", daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        """Between leases: give the file back when someone waits for it or it has been idle for IDLE_S."""
        while True:
            time.sleep(WATCH_S)
            with self._lock:
                if self._root is None:
                    return
                if self._leases:
                    continue
                if time.monotonic() - self._idle_since >= IDLE_S or others_wait(self.path):
                    self._give_back()
                    return
