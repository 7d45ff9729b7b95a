"""The warehouse backends: a DuckDB file (default) and a DuckLake catalog, with the same upserts on both."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.warehouse import TABLES, beside_warehouse, is_lake, open_warehouse, retry_conflicts
from extraction_assets.lib.warehouse.backend import extension_folder, lake_target
from extraction_assets.lib.warehouse.connection import merge_rows
from extraction_assets.lib.warehouse.ddl import DDL, KEYS, without_keys
from tests.listed_statements import ListedStatements

needs_lake = pytest.mark.skipif(
    extension_folder() is None, reason="DuckLake extensions not installed (pip install -e '.[scale]')"
)


def test_keys_are_read_from_the_ddl() -> None:
    assert KEYS["raw_documents"] == ("doc_id",)
    assert KEYS["extraction_status"] == ("doc_id", "schema_version")
    assert KEYS["audit_log_heads"] == ()
    assert set(KEYS) == set(TABLES)


def test_lake_ddl_has_no_key_constraints_but_the_same_columns() -> None:
    for statement in DDL:
        lake = without_keys(statement)
        assert "PRIMARY KEY" not in lake
        assert lake.count("NOT NULL") == statement.count("NOT NULL")


def test_targets_are_told_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXTRACTION_DATA_PATH", raising=False)
    assert not is_lake(tmp_path / "w.duckdb")
    assert is_lake("ducklake:postgres:host=127.0.0.1 dbname=lake")
    sqlite = lake_target(f"ducklake:sqlite:{tmp_path}/c.sqlite")
    assert (sqlite.kind, sqlite.data_path) == ("sqlite", f"{tmp_path}/c.sqlite.files/")
    monkeypatch.setenv("EXTRACTION_DATA_PATH", "s3://bucket/lake")
    postgres = lake_target("ducklake:postgres:host=127.0.0.1 dbname=lake")
    assert (postgres.location, postgres.data_path) == ("host=127.0.0.1 dbname=lake", "s3://bucket/lake")
    assert "DATA_PATH 's3://bucket/lake'" in postgres.attach_sql
    for bad in ("ducklake:mysql:x", "ducklake:sqlite:", "ducklake:postgres"):
        with pytest.raises(ValueError, match="expected ducklake"):
            lake_target(bad)


def test_files_beside_the_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert beside_warehouse(tmp_path / "w.duckdb", ".head") == tmp_path / "w.duckdb.head"
    assert beside_warehouse(f"ducklake:sqlite:{tmp_path}/c.sqlite", ".head") == tmp_path / "c.sqlite.head"
    monkeypatch.setenv("EXTRACTION_DATA_PATH", str(tmp_path / "data"))
    assert beside_warehouse("ducklake:postgres:dbname=lake", ".head") == tmp_path / "data" / "warehouse.head"
    monkeypatch.setenv("EXTRACTION_DATA_PATH", "s3://bucket/lake")
    assert beside_warehouse("ducklake:postgres:dbname=lake", ".head") is None


def _targets(tmp_path: Path) -> list[str]:
    targets = [str(tmp_path / "w.duckdb")]
    if extension_folder() is not None:
        targets.append(f"ducklake:sqlite:{tmp_path}/catalog.sqlite")
    return targets


def _stamp(uri: str, size: int) -> dict[str, object]:
    return {"source_uri": uri, "tenant_id": "acme", "size": size, "mtime_ns": 1, "read_at": "2026-01-01 00:00:00"}


def test_merge_rows_inserts_new_keys_once_and_updates_only_named_columns(tmp_path: Path) -> None:
    for target in _targets(tmp_path):
        with open_warehouse(target) as con:
            merge_rows(con, "inbox_files", [_stamp("a", 1), _stamp("a", 2), _stamp("b", 3)])
            assert con.execute("SELECT source_uri, size FROM inbox_files ORDER BY 1").fetchall() == [
                ("a", 1),
                ("b", 3),
            ], target
            merge_rows(con, "inbox_files", [_stamp("a", 5), _stamp("c", 6)], update=["size"])
            merge_rows(con, "inbox_files", [_stamp("b", 9)])  # nothing to update: an existing key is kept
            assert con.execute("SELECT source_uri, size FROM inbox_files ORDER BY 1").fetchall() == [
                ("a", 5),
                ("b", 3),
                ("c", 6),
            ], target


def test_merge_rows_adds_to_a_count_of_an_existing_key_without_reading_it_first(tmp_path: Path) -> None:
    """A count (`added`): a new key inserts its value, an existing one adds it to its own, in the one statement."""
    for target in _targets(tmp_path):
        with open_warehouse(target) as con:
            merge_rows(con, "inbox_files", [_stamp("a", 1)])
            said: list[str] = []
            listed = ListedStatements(con, said)
            merge_rows(listed, "inbox_files", [_stamp("a", 2), _stamp("b", 3)], added=["size"])  # type: ignore[arg-type]
            merge_rows(con, "inbox_files", [_stamp("a", 4)], update=["mtime_ns"], added=["size"])
            assert con.execute("SELECT source_uri, size FROM inbox_files ORDER BY 1").fetchall() == [
                ("a", 7),
                ("b", 3),
            ], target
            assert len(said) == 1, said


@needs_lake
def test_a_lake_holds_every_table_with_its_columns(tmp_path: Path) -> None:
    with open_warehouse(tmp_path / "w.duckdb") as file, open_warehouse(f"ducklake:sqlite:{tmp_path}/c.sqlite") as lake:
        for table in TABLES:
            columns = f"SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '{table}'"
            order = " ORDER BY ordinal_position"
            in_file = file.execute(columns + " AND table_catalog = 'w'" + order).fetchall()
            in_lake = lake.execute(columns + " AND table_catalog = 'lake'" + order).fetchall()
            assert in_file and in_lake == in_file, table


def test_a_lost_commit_race_is_retried_and_other_errors_are_not() -> None:
    calls: list[int] = []

    def write(fail_times: int, error: Exception) -> str:
        calls.append(1)
        if len(calls) <= fail_times:
            raise error
        return "written"

    conflict = duckdb.TransactionException("Failed to commit DuckLake transaction. Transaction conflict - ...")
    assert retry_conflicts(write, first_delay=0.001)(2, conflict) == "written"
    assert len(calls) == 3
    calls.clear()
    with pytest.raises(duckdb.TransactionException):
        retry_conflicts(write, attempts=3, first_delay=0.001)(5, conflict)
    assert len(calls) == 3
    calls.clear()
    with pytest.raises(duckdb.TransactionException, match="read-only"):
        retry_conflicts(write, first_delay=0.001)(1, duckdb.TransactionException("read-only transaction"))
    assert len(calls) == 1
    calls.clear()
    half_read = duckdb.TransactionException(
        "Failed to commit: Failed to commit DuckLake transaction.\nFailed to parse catalog entry - trailing data"
    )  # what DuckLake 1.4.4 says when a parallel writer's catalog rows were half-read
    assert retry_conflicts(write, first_delay=0.001)(1, half_read) == "written"
    assert len(calls) == 2
