"""The throwaway instance of a command run without DAGSTER_HOME: Dagster's ephemeral one, its event log on held
connections.

Dagster's in-memory event log opens a new connection to its in-memory SQLite database for every call, sets two
pragmas on it and commits: about 0.5 ms of each of the ~140 events a pass stores (its steps, each partition's
materializations and check results, the log lines), 70 to 80 ms of CPU in a warm pass of 21 new documents (a tenth
of it). Here each thread keeps one connection for the instance's life (SQLite connections are not shared across
threads), foreign keys on as Dagster sets them; every call still runs in its own transaction under the storage's
lock, as before. `journal_mode=WAL` is left out: an in-memory database keeps its journal in memory whatever it is
asked."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import dagster as dg
import sqlalchemy as db
from dagster._core.instance import InstanceType
from dagster._core.launcher.sync_in_memory_run_launcher import SyncInMemoryRunLauncher
from dagster._core.run_coordinator import DefaultRunCoordinator
from dagster._core.storage.event_log import InMemoryEventLogStorage
from dagster._core.storage.noop_compute_log_manager import NoOpComputeLogManager
from dagster._core.storage.root import TemporaryLocalArtifactStorage
from dagster._core.storage.runs import InMemoryRunStorage

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


class HeldEventLogStorage(InMemoryEventLogStorage):
    """Dagster's in-memory event log, each thread's connection opened once."""

    def __init__(self, inst_data: Any = None, preload: Sequence[Any] | None = None) -> None:
        self._held = threading.local()
        self._opened: list[Connection] = []
        super().__init__(inst_data, preload)

    @contextmanager
    def _connect(self) -> Iterator[Connection]:
        with self._db_lock:
            conn: Connection | None = getattr(self._held, "conn", None)
            if conn is None:
                conn = self._engine.connect()
                with conn.begin():
                    conn.execute(db.text("PRAGMA foreign_keys=ON;")).close()
                self._held.conn = conn
                self._opened.append(conn)
            with conn.begin():
                yield conn

    def dispose(self) -> None:
        with self._db_lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()
        super().dispose()


def ephemeral_instance() -> dg.DagsterInstance:
    """What `DagsterInstance.ephemeral()` builds (Dagster 1.13's `create_ephemeral_instance`), with the held event
    log."""
    return dg.DagsterInstance(
        instance_type=InstanceType.EPHEMERAL,
        local_artifact_storage=TemporaryLocalArtifactStorage(),
        run_storage=InMemoryRunStorage(),
        event_storage=HeldEventLogStorage(),
        compute_log_manager=NoOpComputeLogManager(),
        run_coordinator=DefaultRunCoordinator(),
        run_launcher=SyncInMemoryRunLauncher(),
    )
