"""How a stage opens the warehouse: a short connection (or the process's held file's cursor) per batch."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import duckdb


class Connect(Protocol):
    """`with connect() as con:` (or `connect(read_only=True)`): no connection is held between batches."""

    def __call__(self, read_only: bool = False) -> AbstractContextManager[duckdb.DuckDBPyConnection]: ...
