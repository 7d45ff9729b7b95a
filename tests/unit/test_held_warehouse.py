"""A held warehouse: connections made while it is held are cursors of one open database, and it is let go after."""

from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.warehouse import held
from extraction_assets.lib.warehouse.held import hold_warehouse, is_held, open_connection


def test_connections_while_held_open_the_file_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "w.duckdb"
    opened: list[bool] = []
    original = held.open_warehouse

    def counting(target: Path | str, read_only: bool = False):  # type: ignore[no-untyped-def]
        opened.append(read_only)
        return original(target, read_only=read_only)

    monkeypatch.setattr(held, "open_warehouse", counting)
    with hold_warehouse(path):
        assert is_held(path)
        with open_connection(path) as con:
            con.execute("INSERT INTO inbox_files VALUES ('t/a.txt', 't', 1, 2, now())")
        for read_only in (True, False, True):
            with open_connection(path, read_only=read_only) as con:
                assert con.execute("SELECT count(*) FROM inbox_files").fetchone() == (1,)
        with hold_warehouse(path):  # re-entrant
            assert is_held(path)
        assert is_held(path)
    assert opened == []
    assert not is_held(path)
    with open_connection(path, read_only=True) as con:  # let go: a read-only open of its own works again
        assert con.execute("SELECT count(*) FROM inbox_files").fetchone() == (1,)
    assert opened == [True]
    duckdb.connect(str(path), read_only=True).close()


def test_a_failing_block_lets_the_warehouse_go(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with pytest.raises(RuntimeError), hold_warehouse(path):
        raise RuntimeError("step failed")
    assert not is_held(path)
    duckdb.connect(str(path), read_only=True).close()
