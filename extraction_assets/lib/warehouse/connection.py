"""Connections to the warehouse, transactions, and the small helpers every read and write shares.

Writes are idempotent (deterministic ids, upserts keyed by them) and atomic per batch (one transaction).
The warehouse is a DuckDB file unless EXTRACTION_WAREHOUSE names a DuckLake catalog (see `backend.py`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

import duckdb

from extraction_assets.lib.warehouse.backend import connect_lake, is_lake
from extraction_assets.lib.warehouse.ddl import KEYS, TABLES, ensure_schema

T = TypeVar("T")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def connect(path: Path | str, read_only: bool = False, wait_seconds: float = 60.0) -> duckdb.DuckDBPyConnection:
    """Open the warehouse, waiting while another process holds DuckDB's single-writer lock."""
    if is_lake(path):
        return connect_lake(path)
    target = Path(path)
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(target), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
            continue
        if not read_only:
            ensure_schema(con)
        return con


@contextmanager
def open_warehouse(path: Path | str, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(path, read_only=read_only)
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


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many rows in few statements (DuckDB pays per statement, not per row), every value under its column's name.

    Rows are mappings from column to value, so a reordered row can never write into the wrong column.
    """
    if not rows:
        return
    columns = list(rows[0])
    if any(list(row) != columns for row in rows):
        raise ValueError(f"rows for {table} do not all name the same columns in the same order")
    names = ", ".join(columns)
    placeholder = "(" + ", ".join("?" * len(columns)) + ")"
    for chunk in (rows[i : i + 400] for i in range(0, len(rows), 400)):
        params = [row[column] for row in chunk for column in columns]
        con.execute(f"INSERT INTO {table} ({names}) VALUES {', '.join([placeholder] * len(chunk))}", params)


def merge_rows(
    con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Mapping[str, Any]], update: Sequence[str] = ()
) -> None:
    """Insert the rows whose key (the table's, `ddl.KEYS`) is new; a row whose key exists updates the `update`
    columns, or is left alone when there are none.

    One `MERGE INTO` per chunk, which needs no key constraint, so it is the same upsert on a DuckDB file and on a
    DuckLake catalog. A key repeated in `rows` counts once: the first row when nothing is updated, else the last.
    """
    if not rows:
        return
    key = KEYS[table]
    columns = list(rows[0])
    if any(list(row) != columns for row in rows):
        raise ValueError(f"rows for {table} do not all name the same columns in the same order")
    unique: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for row in rows:
        row_key = tuple(row[c] for c in key)
        if update or row_key not in unique:
            unique[row_key] = row
    names = ", ".join(columns)
    placeholder = "(" + ", ".join("?" * len(columns)) + ")"
    on = " AND ".join(f"t.{c} = s.{c}" for c in key)
    matched = f"WHEN MATCHED THEN UPDATE SET {', '.join(f'{c} = s.{c}' for c in update)} " if update else ""
    insert = f"WHEN NOT MATCHED THEN INSERT ({names}) VALUES ({', '.join(f's.{c}' for c in columns)})"
    merged = list(unique.values())
    for chunk in (merged[i : i + 400] for i in range(0, len(merged), 400)):
        params = [row[column] for row in chunk for column in columns]
        con.execute(
            f"MERGE INTO {table} AS t USING (VALUES {', '.join([placeholder] * len(chunk))}) AS s({names}) "
            f"ON {on} {matched}{insert}",
            params,
        )
