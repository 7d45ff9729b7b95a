"""Opening the warehouse: a DuckDB file, waited for while another process holds its lock, its tables made sure of;
or a DuckLake catalog, attached. `connection.open_warehouse` and the process's holder (`held.py`) both open it here.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse.backend import connect_lake, is_lake
from extraction_assets.lib.warehouse.ddl import ensure_schema
from extraction_assets.lib.warehouse.lock_wait import WRITER_WAIT_S, WRITER_YIELD_S, open_duckdb_file

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


@cache
def remember_absent_pandas() -> None:
    """DuckDB converts each element of a list parameter after trying `import pandas` (two to four times per
    element); without pandas installed every try searched sys.path again (~60 µs, most of a run's warehouse time).
    A None entry in sys.modules records the absence, so the same ImportError comes at once."""
    if "pandas" not in sys.modules and importlib.util.find_spec("pandas") is None:
        sys.modules["pandas"] = None  # type: ignore[assignment]


def connect(
    path: Path | str, read_only: bool = False, wait_seconds: float = WRITER_WAIT_S, yield_s: float = WRITER_YIELD_S
) -> duckdb.DuckDBPyConnection:
    """Open the warehouse, waiting (with backoff, see `lock_wait`) while another process holds DuckDB's lock; a
    writer lets waiting readers in first, for at most `yield_s`.

    A DuckLake catalog (`ducklake:...`) is attached instead: many processes write it at once, with no lock to wait for.
    """
    remember_absent_pandas()
    if is_lake(path):
        return connect_lake(path)
    target = Path(path)
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    con = open_duckdb_file(target, read_only=read_only, wait_seconds=wait_seconds, yield_s=yield_s)
    if not read_only:
        ensure_schema(con)
    return con
