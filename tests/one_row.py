"""The one row a test's query returns (a count, a row looked up by its key), for assertions on the warehouse.

DuckDB's `fetchone()` says None when there is no row; a test that expects one fails here, naming the query's
absence of a row, instead of with a TypeError on `None[0]`.
"""

from __future__ import annotations

from typing import Any

import duckdb


def one_row(result: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    """The next row of an executed query, which must be there."""
    row = result.fetchone()
    assert row is not None, "the query returned no row"
    return row
