"""Binding values must not search the import path for a module DuckDB asks for per value (see `duckdb_binding`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.lib.warehouse.duckdb_binding import BOUND_VALUE_LOOKUPS


class _Searches:
    """A finder that only counts the searches for the modules DuckDB looks up per value."""

    def __init__(self) -> None:
        self.count = 0

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name in BOUND_VALUE_LOOKUPS:
            self.count += 1


@pytest.mark.skipif(importlib.util.find_spec("pandas") is not None, reason="pandas is installed: nothing to skip")
def test_bound_values_do_not_search_for_a_missing_pandas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in BOUND_VALUE_LOOKUPS:
        monkeypatch.delitem(sys.modules, name, raising=False)
    searches = _Searches()
    monkeypatch.setattr(sys, "meta_path", [searches, *sys.meta_path])
    with open_warehouse(tmp_path / "w.duckdb") as con:
        opened = searches.count  # at most one search each, when the warehouse opens
        count = con.execute("SELECT count(*) FROM (SELECT unnest(?))", [[f"v{i}" for i in range(100)]]).fetchone()
    assert count == (100,)
    assert opened <= len(BOUND_VALUE_LOOKUPS)
    assert searches.count == opened
