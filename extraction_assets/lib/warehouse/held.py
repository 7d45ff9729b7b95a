"""One open database for a whole offline step: while a warehouse is held, connecting to it is a cursor away.

Opening the DuckDB file costs tens of milliseconds (a new database instance, the catalog, the schema check, and a
checkpoint when a connection that wrote closes). Assets and checks connect per batch so that no lock is held while
a model works; an offline run has no model to wait for, and its few hundred opens were most of its fixed cost. So
the runner holds the warehouse for each offline step: every connection made meanwhile is a cursor of the held
one (a read-only request too: the held database is writable), and closing it closes the cursor only. Another
process waits for the step, as `connect` waits for any writer.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse.connection import connect, open_warehouse

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

_HELD: dict[Path, duckdb.DuckDBPyConnection] = {}


def _key(path: Path | str) -> Path:
    return Path(path).resolve()


@contextmanager
def hold_warehouse(path: Path | str) -> Iterator[None]:
    """Keep the warehouse open until the block ends (re-entrant: an inner hold of the same file changes nothing)."""
    key = _key(path)
    if key in _HELD:
        yield
        return
    _HELD[key] = connect(path)
    try:
        yield
    finally:
        _HELD.pop(key).close()


def is_held(path: Path | str) -> bool:
    return _key(path) in _HELD


@contextmanager
def open_connection(path: Path | str, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A cursor of the held warehouse when it is held, else a connection of its own (`open_warehouse`)."""
    held = _HELD.get(_key(path))
    if held is None:
        with open_warehouse(path, read_only=read_only) as con:
            yield con
        return
    cursor = held.cursor()
    try:
        yield cursor
    finally:
        cursor.close()
