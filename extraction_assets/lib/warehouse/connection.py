"""Connections to the warehouse, transactions, and the small helpers every read and write shares.

Writes are idempotent (deterministic ids, upserts keyed by them) and atomic per batch (one transaction).
The warehouse is a DuckDB file unless EXTRACTION_WAREHOUSE names a DuckLake catalog (see `backend.py`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from itertools import count, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from extraction_assets.lib.warehouse.backend import is_lake
from extraction_assets.lib.warehouse.ddl import KEYS, TABLES
from extraction_assets.lib.warehouse.held import holding
from extraction_assets.lib.warehouse.lock_wait import WRITER_WAIT_S
from extraction_assets.lib.warehouse.opening import connect

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

T = TypeVar("T")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


@contextmanager
def open_warehouse(
    path: Path | str, read_only: bool = False, wait_seconds: float = WRITER_WAIT_S
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection of its own, or, while this process holds the file (`held.py`), a cursor lent by the holder: a
    second open of the same file in one process conflicts with the first when one is read-only, the other not."""
    if not is_lake(path) and (held := holding(path)) is not None:
        with held.lease() as cursor:
            yield cursor
        return
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


def batched(
    ids: Sequence[T], size: int, weight: Callable[[T], int] | None = None, most: int | None = None
) -> list[list[T]]:
    """Work is committed batch by batch: a crash loses at most the batch in flight. With `weight` and `most`, a batch
    also ends once its items weigh `most` (a batch's documents' characters: what a batch holds in memory stays bounded
    whatever the documents' sizes; an item heavier than that is a batch of its own)."""
    return list(iter_batches(ids, size, weight, most))


def iter_batches(
    items: Iterable[T], size: int, weight: Callable[[T], int] | None = None, most: int | None = None
) -> Iterator[list[T]]:
    """`batched` for a stream: only one batch is held at a time."""
    iterator = iter(items)
    if weight is None or most is None:
        while sliced := list(islice(iterator, size)):
            yield sliced
        return
    batch: list[T] = []
    load = 0
    for item in iterator:
        heft = weight(item)
        if batch and (len(batch) >= size or load + heft > most):
            yield batch
            batch, load = [], 0
        batch.append(item)
        load += heft
    if batch:
        yield batch


LIST_PARAMETER_VALUES = 2_000  # a batch of at most this many values goes as list parameters, without NumPy
# at most this many go as list parameters even where NumPy is loaded: registering a view and dropping it again cost
# about 1 ms whatever it holds, what converting some 150 values costs (a warm pass of a few new documents made 67 views)
FEW_VALUES = 150


def _as_list_parameters(values: int) -> bool:
    """Whether `values` values go to DuckDB as list parameters: a few (`FEW_VALUES`) always; up to
    `LIST_PARAMETER_VALUES` in a process that has not loaded NumPy (where it is loaded, its column converts more than
    a few faster)."""
    return values <= FEW_VALUES or (values <= LIST_PARAMETER_VALUES and "numpy" not in sys.modules)


@contextmanager
def _rows_view(
    con: duckdb.DuckDBPyConnection, columns: Sequence[str], rows: Sequence[Mapping[str, Any]]
) -> Iterator[tuple[str, list[Any]]]:
    """The rows as a source the statement selects from (and its parameters): one NumPy object array per column,
    which DuckDB scans, registered as a view.

    A list parameter per column (`unnest(?)`) costs about 10 µs a value to convert (0.1 s for 10,000), NumPy's
    scan a few ms whatever the size; but importing NumPy costs 0.1 to 0.2 s of CPU, once a process: a small batch
    (at most `LIST_PARAMETER_VALUES` values, what a pass with a few new documents writes) goes as list parameters,
    so a fresh process writing a few rows never imports it; and a few values (`FEW_VALUES`) go so even where it is
    loaded: the view's registration costs more than they do.
    """
    if _as_list_parameters(len(rows) * len(columns)):
        unnested = ", ".join(f'unnest(${n}) AS "{column}"' for n, column in enumerate(columns, start=1))
        yield f"(SELECT {unnested})", [[row[column] for row in rows] for column in columns]
        return
    import numpy as np  # NumPy loads with the first large batch written, or is loaded already

    name = "batch_rows"
    con.register(name, {column: np.array([row[column] for row in rows], dtype=object) for column in columns})
    try:
        yield name, []
    finally:
        con.unregister(name)


_VIEW_NUMBERS = count()


@contextmanager
def id_list(con: duckdb.DuckDBPyConnection, ids: Iterable[str]) -> Iterator[tuple[str, list[Any]]]:
    """A source of the ids for `key IN <source>`, and its parameters (none, or the list): the ids as one NumPy column
    DuckDB scans, registered as a view.

    A list parameter (`IN (SELECT unnest(?))`) is converted value by value, each after DuckDB tries `import pandas`
    (about 5 us a value with pandas marked absent, `opening.remember_absent_pandas`): a pass over the bench inbox
    converted some 180,000 ids so; the column converts in well under a microsecond a value. A small list in a process
    that has not loaded NumPy stays a list parameter, as a small batch of rows does (`_rows_view`): a fresh process
    with a few ids to look up never imports NumPy for them; a few ids (`FEW_VALUES`) stay one wherever NumPy is
    loaded.
    """
    values = list(ids)
    if not values or _as_list_parameters(len(values)):
        yield "(SELECT unnest(?))", [values]
        return
    import numpy as np

    name = f"id_list_{next(_VIEW_NUMBERS)}"
    con.register(name, {"id": np.array(values, dtype=object)})
    try:
        yield f"(SELECT id FROM {name})", []
    finally:
        con.unregister(name)


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Many rows in one statement, every value under its column's name (DuckDB pays per statement, not per row).

    Rows are mappings from column to value, so a reordered row can never write into the wrong column.
    """
    if not rows:
        return
    columns = _columns(table, rows)
    names = ", ".join(columns)
    with _rows_view(con, columns, rows) as (source, params):
        con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {source}", params)


def _columns(table: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The columns every row names, in the same order (a reordered row must never write into the wrong column)."""
    columns = list(rows[0])
    if any(list(row) != columns for row in rows):
        raise ValueError(f"rows for {table} do not all name the same columns in the same order")
    return columns


def merge_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: Sequence[Mapping[str, Any]],
    update: Sequence[str] = (),
    added: Sequence[str] = (),
) -> None:
    """Insert the rows whose key (the table's, `ddl.KEYS`) is new; a row whose key exists updates the `update`
    columns and adds its value to each of the `added` ones (a count: no read of it first), or is left alone when
    there are none.

    One `MERGE INTO` whose source is the rows (one array per column); it needs no key constraint, so it
    is the same upsert on a DuckDB file and on a DuckLake catalog. A key repeated in `rows` counts once: the first
    row when nothing is updated, else the last.
    """
    if not rows:
        return
    key = KEYS[table]
    columns = _columns(table, rows)
    unique: dict[tuple[Any, ...], Mapping[str, Any]] = {}
    for row in rows:
        row_key = tuple(row[c] for c in key)
        if update or added or row_key not in unique:
            unique[row_key] = row
    names = ", ".join(columns)
    on = " AND ".join(f"t.{c} = s.{c}" for c in key)
    # a column of objects may come as text (a view of a NumPy object array): a count is cast to add
    changes = [f"{c} = s.{c}" for c in update] + [f"{c} = t.{c} + CAST(s.{c} AS BIGINT)" for c in added]
    matched = f"WHEN MATCHED THEN UPDATE SET {', '.join(changes)} " if changes else ""
    insert = f"WHEN NOT MATCHED THEN INSERT ({names}) VALUES ({', '.join(f's.{c}' for c in columns)})"
    with _rows_view(con, columns, list(unique.values())) as (source, params):
        con.execute(
            f"MERGE INTO {table} AS t USING (SELECT {names} FROM {source}) AS s ON {on} {matched}{insert}", params
        )
