"""Connections to the DuckDB file, transactions, and the small helpers every read and write shares.

Writes are idempotent (deterministic ids, upserts) and atomic per batch (one transaction).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from extraction_assets.lib.warehouse.ddl import TABLES, ensure_schema
from extraction_assets.lib.warehouse.lock_wait import WRITER_WAIT_S, open_duckdb_file

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

T = TypeVar("T")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def connect(
    path: Path | str, read_only: bool = False, wait_seconds: float = WRITER_WAIT_S
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse, waiting (with backoff, see `lock_wait`) while another process holds DuckDB's lock."""
    target = Path(path)
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    con = open_duckdb_file(target, read_only=read_only, wait_seconds=wait_seconds)
    if not read_only:
        ensure_schema(con)
    return con


@contextmanager
def open_warehouse(
    path: Path | str, read_only: bool = False, wait_seconds: float = WRITER_WAIT_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(path, read_only=read_only, wait_seconds=wait_seconds)
    try:
        yield con
    finally:
        con.close()


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All or nothing: a batch that fails half-way leaves no trace."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def rows_as_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}  # type: ignore[index]


def batched(ids: Sequence[str], size: int) -> list[list[str]]:
    """Work is committed batch by batch: a crash loses at most the batch in flight."""
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def iter_batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """`batched` for a stream: only one batch is held at a time."""
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def insert_rows(
    con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Mapping[str, Any]], suffix: str = ""
) -> None:
    """Many rows in one statement, every value under its column's name: each column goes in as one list parameter
    and `unnest` turns the lists back into rows (DuckDB pays per statement and per parameter, not per row).

    Rows are mappings from column to value, so a reordered row can never write into the wrong column.
    """
    if not rows:
        return
    columns = list(rows[0])
    if any(list(row) != columns for row in rows):
        raise ValueError(f"rows for {table} do not all name the same columns in the same order")
    names = ", ".join(columns)
    unnested = ", ".join(f"unnest(?) AS {column}" for column in columns)
    con.execute(
        f"INSERT INTO {table} ({names}) SELECT {unnested} {suffix}", [[row[c] for row in rows] for c in columns]
    )
