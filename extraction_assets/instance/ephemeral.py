"""The throwaway instance of a command run without DAGSTER_HOME: Dagster's ephemeral one, its event log on held
connections, its storages' tables made without a migration stamp.

Dagster's in-memory event log opens a new connection to its in-memory SQLite database for every call, sets two
pragmas on it and commits: about 0.5 ms of each of the ~140 events a pass stores (its steps, each partition's
materializations and check results, the log lines), 70 to 80 ms of CPU in a warm pass of 21 new documents (a tenth
of it). Here each thread keeps one connection for the instance's life (SQLite connections are not shared across
threads), foreign keys on as Dagster sets them; every call still runs in its own transaction under the storage's
lock, as before (the lock also shows that no call runs inside another). `journal_mode=WAL` is left out: an in-memory
database keeps its journal in memory whatever it is asked.

Both in-memory storages also stamp their new tables with the migration revision they are at, which loads every one of
Dagster's ~180 migration scripts: 26 of the 44 ms of CPU the instance costs a fresh process. Nothing reads the stamp of
an in-memory storage (it is never upgraded, and is gone with the process): the tables are made as Dagster makes them
(Dagster 1.13's `__init__` of each, which a test runs), without it.

And it answers three questions Dagster's asks SQLite about again and again from memory. Whether a table exists: about
150 times a pass (before storing a check result, an asset event's tags, before reading dynamic partitions), each on a
new connection; whether `asset_keys` has a column, by reflecting its columns for each asset event stored (40 to 60 a
pass); its tables are made with it, and none is ever dropped (`wipe` empties them) nor altered. And the dynamic
partitions (the schema versions): about 90 reads a pass (each step's partition range, each partition's metadata,
each planned materialization); this storage is the only writer of its in-memory database, and forgets a
definition's keys when it adds or deletes one."""

from __future__ import annotations

import threading
import uuid
from collections import defaultdict
from collections.abc import Iterator, Sequence, Set
from contextlib import contextmanager
from typing import TYPE_CHECKING

import dagster as dg
import sqlalchemy as db
from dagster._core.instance import InstanceType
from dagster._core.launcher.sync_in_memory_run_launcher import SyncInMemoryRunLauncher
from dagster._core.run_coordinator import DefaultRunCoordinator
from dagster._core.storage.event_log import InMemoryEventLogStorage
from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata
from dagster._core.storage.noop_compute_log_manager import NoOpComputeLogManager
from dagster._core.storage.root import TemporaryLocalArtifactStorage
from dagster._core.storage.runs import InMemoryRunStorage
from dagster._core.storage.runs.schema import InstanceInfo, RunStorageSqlMetadata
from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite import create_in_memory_conn_string
from sqlalchemy.pool import NullPool

if TYPE_CHECKING:
    from sqlalchemy.engine import Connection


class HeldEventLogStorage(InMemoryEventLogStorage):
    """Dagster's in-memory event log, each thread's connection opened once, its tables unstamped."""

    def __init__(self) -> None:  # InMemoryEventLogStorage.__init__ without the stamp (and without a preload)
        self._inst_data = None
        self._engine = create_engine(create_in_memory_conn_string(f"events-{uuid.uuid4()}"), poolclass=NullPool)
        self._handlers = defaultdict(set)
        self._storage_id = 0
        self._db_lock = threading.Lock()
        self._held_conn = self._engine.connect()  # Dagster's: it keeps the database alive
        with self._held_conn.begin():
            SqlEventLogStorageMetadata.create_all(self._held_conn)
        self._held = threading.local()
        self._opened: list[Connection] = []
        self._tables: dict[str, bool] = {}
        self._asset_key_columns: dict[str, bool] = {}  # whether `asset_keys` has a column (asked per asset event)
        self._partitions: dict[str, dict[str, None]] = {}  # definition -> its keys in Dagster's order (by id)
        self._partitions_lock = threading.RLock()  # a read that misses and a write that forgets never interleave

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

    def has_table(self, table_name: str) -> bool:
        known = self._tables.get(table_name)
        if known is None:
            known = self._tables[table_name] = super().has_table(table_name)
        return known

    def _has_asset_key_col_on_connection(self, conn: Connection, column_name: str) -> bool:
        known = self._asset_key_columns.get(column_name)
        if known is None:
            known = self._asset_key_columns[column_name] = super()._has_asset_key_col_on_connection(conn, column_name)
        return known

    def _keys(self, partitions_def_name: str) -> dict[str, None]:
        with self._partitions_lock:
            keys = self._partitions.get(partitions_def_name)
            if keys is None:
                keys = dict.fromkeys(super().get_dynamic_partitions(partitions_def_name))
                self._partitions[partitions_def_name] = keys
            return keys

    def get_dynamic_partitions(self, partitions_def_name: str) -> Sequence[str]:
        return list(self._keys(partitions_def_name))

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        return partition_key in self._keys(partitions_def_name)

    def get_existing_dynamic_partitions(self, partitions_def_name: str, partition_keys: Sequence[str]) -> Set[str]:
        keys = self._keys(partitions_def_name)
        return {key for key in partition_keys if key in keys}

    def add_dynamic_partitions(self, partitions_def_name: str, partition_keys: Sequence[str]) -> None:
        with self._partitions_lock:
            self._partitions.pop(partitions_def_name, None)
            super().add_dynamic_partitions(partitions_def_name, partition_keys)

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        with self._partitions_lock:
            self._partitions.pop(partitions_def_name, None)
            super().delete_dynamic_partition(partitions_def_name, partition_key)

    def wipe(self) -> None:
        with self._partitions_lock:
            self._partitions.clear()
            super().wipe()

    def dispose(self) -> None:
        with self._db_lock:
            for conn in self._opened:
                conn.close()
            self._opened.clear()
        super().dispose()


class UnstampedRunStorage(InMemoryRunStorage):
    """Dagster's in-memory run storage, its tables unstamped."""

    def __init__(self) -> None:  # InMemoryRunStorage.__init__ without the stamp (and without a preload)
        self._engine = create_engine(create_in_memory_conn_string(f"runs-{uuid.uuid4()}"), poolclass=NullPool)
        self._held_conn = self._engine.connect()
        with self._held_conn.begin():
            RunStorageSqlMetadata.create_all(self._held_conn)
            if "instance_info" not in db.inspect(self._held_conn).get_table_names():
                InstanceInfo.create(self._held_conn)


def ephemeral_instance() -> dg.DagsterInstance:
    """What `DagsterInstance.ephemeral()` builds (Dagster 1.13's `create_ephemeral_instance`), with the storages
    above."""
    return dg.DagsterInstance(
        instance_type=InstanceType.EPHEMERAL,
        local_artifact_storage=TemporaryLocalArtifactStorage(),
        run_storage=UnstampedRunStorage(),
        event_storage=HeldEventLogStorage(),
        compute_log_manager=NoOpComputeLogManager(),
        run_coordinator=DefaultRunCoordinator(),
        run_launcher=SyncInMemoryRunLauncher(),
    )
