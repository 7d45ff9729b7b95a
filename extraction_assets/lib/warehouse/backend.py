"""Where the warehouse lives: one DuckDB file (the default), or a DuckLake catalog many processes write at once.

`EXTRACTION_WAREHOUSE` is a file path, `ducklake:sqlite:PATH` (many processes on one machine) or
`ducklake:postgres:<libpq conninfo>` (many machines). A DuckLake keeps its Parquet data files under
`EXTRACTION_DATA_PATH` (a folder or object storage; read from the catalog once it exists). The tables, columns
and SQL are the same on both; DuckLake enforces no primary keys, so every write is keyed by the deterministic
ids (see `connection.merge_rows`), and a writer that loses a commit race to another retries (`retry_conflicts`).

The lake needs DuckDB's `ducklake` extension and the catalog's (`sqlite` or `postgres`); they are loaded from the
signature-checked builds of the `scale` extra (`duckdb-ext-*`), or from DuckDB's own extension folder.
"""

from __future__ import annotations

import functools
import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ParamSpec, TypeVar

from extraction_assets.lib.warehouse.ddl import ensure_schema
from extraction_assets.lib.warehouse.engine import engine_config

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

LAKE_PREFIX = "ducklake:"
CATALOG_KINDS = ("sqlite", "postgres")
DATA_PATH_VARIABLE = "EXTRACTION_DATA_PATH"
LAKE_NAME = "lake"

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class DuckLakeTarget:
    """A DuckLake catalog (`kind` sqlite or postgres, `location` its path or conninfo) and its data files."""

    kind: str
    location: str
    data_path: str | None

    @property
    def attach_sql(self) -> str:
        options = f" (DATA_PATH '{_quoted(self.data_path)}')" if self.data_path else ""
        return f"ATTACH '{LAKE_PREFIX}{self.kind}:{_quoted(self.location)}' AS {LAKE_NAME}{options}"


def is_lake(target: Path | str) -> bool:
    return str(target).startswith(LAKE_PREFIX)


def lake_target(target: Path | str, data_path: str | None = None) -> DuckLakeTarget:
    """Parse `ducklake:<kind>:<location>`; the data path defaults to EXTRACTION_DATA_PATH, then (for a SQLite
    catalog) a folder beside the catalog file."""
    kind, sep, location = str(target).removeprefix(LAKE_PREFIX).partition(":")
    if not sep or kind not in CATALOG_KINDS or not location.strip():
        raise ValueError(
            f"warehouse {str(target)!r}: expected ducklake:sqlite:PATH or ducklake:postgres:<libpq conninfo>"
        )
    data_path = data_path or os.environ.get(DATA_PATH_VARIABLE, "").strip() or None
    if data_path is None and kind == "sqlite":
        data_path = f"{location}.files"
    if data_path and "://" not in data_path:
        Path(data_path).mkdir(parents=True, exist_ok=True)
        data_path = data_path.rstrip("/") + "/"
    return DuckLakeTarget(kind=kind, location=location.strip(), data_path=data_path)


def beside_warehouse(target: Path | str, suffix: str) -> Path | None:
    """A local file kept next to the warehouse (`<file><suffix>`): beside a DuckDB file or a SQLite catalog, in the
    data folder of a PostgreSQL catalog; None when the data live in object storage."""
    if not is_lake(target):
        return Path(target).with_name(Path(target).name + suffix)
    lake = lake_target(target)
    if lake.kind == "sqlite":
        return Path(lake.location).with_name(Path(lake.location).name + suffix)
    if lake.data_path and "://" not in lake.data_path:
        return Path(lake.data_path) / f"warehouse{suffix}"
    return None


_lakes: dict[DuckLakeTarget, duckdb.DuckDBPyConnection] = {}
_lakes_lock = threading.Lock()


def connect_lake(target: Path | str) -> duckdb.DuckDBPyConnection:
    """A connection whose default catalog is the lake, so the pipeline's unqualified SQL reads and writes it.

    Loading the extensions and attaching costs about half a second, so each process attaches a lake once and
    hands out cursors of that database (a cursor is an independent connection; closing it keeps the lake).
    """
    lake = lake_target(target)
    with _lakes_lock:
        database = _lakes.get(lake)
        if database is None:
            database = _attach(lake)
            _lakes[lake] = database
    cursor = database.cursor()
    cursor.execute(f"USE {LAKE_NAME}")
    return cursor


def _attach(lake: DuckLakeTarget) -> duckdb.DuckDBPyConnection:
    import duckdb  # DuckDB loads when a connection opens

    database = duckdb.connect(config=engine_config())
    folder = extension_folder()
    if folder is not None:
        database.execute(f"SET extension_directory = '{_quoted(str(folder))}'")
    database.execute("LOAD ducklake")
    database.execute(f"LOAD {lake.kind}")
    if lake.kind == "sqlite":
        Path(lake.location).parent.mkdir(parents=True, exist_ok=True)
    database.execute(lake.attach_sql)
    database.execute(f"USE {LAKE_NAME}")
    retry_conflicts(ensure_schema)(database, keys=False)
    return database


def on_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this connection reads and writes a DuckLake catalog (its default catalog is the lake)."""
    return con.execute("SELECT current_database()").fetchall() == [(LAKE_NAME,)]


def extension_folder() -> Path | None:
    """The `extensions` folder of the installed `duckdb-ext-*` wheels (signature-verified builds), if any."""
    try:
        import duckdb_ext  # the namespace package of the duckdb-ext-ducklake / -postgres / -sqlite wheels
    except ImportError:
        return None
    for root in duckdb_ext.__path__:
        folder = Path(root) / "extensions"
        if folder.is_dir():
            return folder
    return None


def retry_conflicts(function: Callable[P, R], attempts: int = 8, first_delay: float = 0.05) -> Callable[P, R]:
    """Run a write again when its commit lost a race to another writer (a DuckLake commit failure, `_lost_commit`).

    The write must be one transaction that re-reads what it depends on, so a second attempt is a clean re-run.
    """

    @functools.wraps(function)
    def retried(*args: P.args, **kwargs: P.kwargs) -> R:
        import duckdb  # when a connection opens

        delay = first_delay
        for _ in range(attempts - 1):
            try:
                return function(*args, **kwargs)
            except duckdb.TransactionException as exc:
                if not _lost_commit(exc):
                    raise
            time.sleep(delay * (1 + random.random()))  # jitter: writers that collided do not collide again
            delay = min(delay * 2, 2.0)
        return function(*args, **kwargs)

    return retried


def _lost_commit(exc: Exception) -> bool:
    """A commit that lost to another writer: DuckLake says "conflict", or, when a concurrent writer's catalog rows
    were half-read, "Failed to commit DuckLake transaction" (seen with 1.4.4 under parallel shards). Either way
    the transaction was rolled back, so running it again is a clean re-run."""
    message = str(exc).lower()
    return "conflict" in message or "failed to commit ducklake transaction" in message


def _quoted(value: str | None) -> str:
    return (value or "").replace("'", "''")
