"""A batch's rows reach DuckDB as list parameters when small, as NumPy arrays when large: the same rows either way,
and a small batch in a fresh process never imports NumPy (0.1 to 0.2 s of CPU)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from extraction_assets.lib.warehouse import connection, insert_documents, open_warehouse, write_extraction_batch
from tests.unit.warehouse.test_queue_extension import VERSION, _documents, _outcome

# every column of every table a batch writes, but the times it was written at (now(), per run)
TABLES = ("raw_documents", "extracted_items", "evidence", "extraction_status")


def _written(path: Path, monkeypatch: pytest.MonkeyPatch, most: int) -> dict[str, list[tuple[object, ...]]]:
    monkeypatch.setattr(connection, "_as_list_parameters", lambda values: values <= most)
    rng = random.Random(7)
    documents = _documents(rng, 0, 40)
    with open_warehouse(path) as con:
        insert_documents(con, documents)
        write_extraction_batch(con, VERSION, [_outcome(rng, doc, VERSION) for doc in documents])
        found = {}
        for table in TABLES:
            columns = [
                name
                for name, kind in con.execute(
                    "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?", [table]
                ).fetchall()
                if "TIMESTAMP" not in kind
            ]
            found[table] = con.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY ALL").fetchall()
    return found


def test_list_parameters_and_numpy_arrays_write_the_same_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    as_lists = _written(tmp_path / "lists.duckdb", monkeypatch, 10**9)
    as_arrays = _written(tmp_path / "arrays.duckdb", monkeypatch, 0)
    assert all(as_lists[table] for table in TABLES)
    assert as_lists == as_arrays


def test_a_small_batch_in_a_fresh_process_does_not_import_numpy(tmp_path: Path) -> None:
    script = f"""
import random, sys
from pathlib import Path
from extraction_assets.lib.warehouse import insert_documents, open_warehouse, write_extraction_batch
from tests.unit.warehouse.test_queue_extension import VERSION, _documents, _outcome
rng = random.Random(1)
documents = _documents(rng, 0, 3)
with open_warehouse(Path({str(tmp_path / "w.duckdb")!r})) as con:
    insert_documents(con, documents)
    write_extraction_batch(con, VERSION, [_outcome(rng, doc, VERSION) for doc in documents])
    assert con.execute("SELECT count(*) FROM extraction_status").fetchone()[0] == 3
print("numpy" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_where_numpy_is_loaded_only_a_few_values_go_as_list_parameters(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy  # noqa: F401  (loaded, as in a watch, or a pass that has written a large batch)

    assert connection._as_list_parameters(connection.FEW_VALUES)
    assert not connection._as_list_parameters(connection.FEW_VALUES + 1)
    monkeypatch.delitem(sys.modules, "numpy")
    assert connection._as_list_parameters(connection.LIST_PARAMETER_VALUES)
    assert not connection._as_list_parameters(connection.LIST_PARAMETER_VALUES + 1)
