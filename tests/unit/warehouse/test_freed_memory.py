"""The C heap's and DuckDB's freed pages go back to the system, at most once per interval, and a held warehouse's
leases do it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from extraction_assets.lib import freed_memory
from extraction_assets.lib.freed_memory import give_back_freed_memory
from extraction_assets.lib.warehouse import held as held_module
from extraction_assets.lib.warehouse.engine import give_back_engine_memory, limit_engine
from extraction_assets.lib.warehouse.held import held_warehouse

if TYPE_CHECKING:
    import duckdb

needs_glibc = pytest.mark.skipif(freed_memory._malloc_trim() is None, reason="the C library has no malloc_trim")


def _resident_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@needs_glibc
def test_freed_heap_pages_are_given_back() -> None:
    give_back_freed_memory(every_s=0)
    # 64 KB pieces come from the heap (not mmap); one in ten kept, so the heap cannot shrink from its top alone
    pieces = [bytearray(64 * 1024) for _ in range(3000)]
    kept = pieces[::10]
    del pieces
    before = _resident_mb()
    assert give_back_freed_memory(every_s=0)
    after = _resident_mb()
    assert before - after > 80, (before, after)  # about 170 MB was freed in the heap's middle
    assert len(kept) == 300


def test_at_most_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: calls.append)
    monkeypatch.setattr(freed_memory, "_last_trim", float("-inf"))
    assert give_back_freed_memory(every_s=60)
    assert not give_back_freed_memory(every_s=60)
    assert give_back_freed_memory(every_s=0)
    assert calls == [0, 0]


def test_without_malloc_trim_nothing_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: None)
    monkeypatch.setattr(freed_memory, "_last_trim", float("-inf"))
    assert not give_back_freed_memory(every_s=0)


def test_a_lease_gives_freed_memory_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: calls.append)
    monkeypatch.setattr(freed_memory, "_last_trim", float("-inf"))
    held = held_warehouse(tmp_path / "w.duckdb")
    try:
        with held.lease() as cursor:
            cursor.execute("SELECT 1").fetchall()
            assert calls == []
        assert calls == [0]
    finally:
        held.close()


def _engine() -> duckdb.DuckDBPyConnection:
    import duckdb

    return limit_engine(duckdb.connect())


def test_engine_memory_is_given_back_without_evicting() -> None:
    """DuckDB keeps what a statement freed resident (its flush after a task runs on its worker threads, and with one
    thread there are none); setting the limit it has returns it at once and keeps the pool's blocks."""
    con = _engine()
    con.execute("SET threads = 1")
    con.execute("CREATE TABLE kept AS SELECT i, repeat('x', 200) AS text FROM range(100000) t(i)")
    held_before = con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone()
    drops = []
    for _ in range(3):  # a stall longer than the allocator's own decay (about 2 s) could return it first
        con.execute("SELECT count(*) FROM (SELECT i % 400000 AS g, count(*) FROM range(3000000) t(i) GROUP BY 1)")
        before = _resident_mb()
        give_back_engine_memory(con)
        drops.append(before - _resident_mb())
        if drops[-1] > 8:
            break
    assert max(drops) > 8, drops  # about 20 MB of hash table freed by the statement
    assert con.execute("SELECT sum(memory_usage_bytes) FROM duckdb_memory()").fetchone() == held_before
    assert con.execute("SELECT count(*) FROM kept").fetchone() == (100000,)


def test_a_lease_gives_engine_memory_back_with_the_heap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trims: list[int] = []
    flushed: list[object] = []
    monkeypatch.setattr(freed_memory, "_malloc_trim", lambda: trims.append)
    monkeypatch.setattr(freed_memory, "_last_trim", float("-inf"))
    monkeypatch.setattr(held_module, "give_back_engine_memory", flushed.append)
    held = held_warehouse(tmp_path / "w.duckdb")
    try:
        with held.lease() as cursor:
            cursor.execute("SELECT 1").fetchall()
        assert trims == [0] and flushed == [held._root]
        with held.lease() as cursor:  # within the interval: neither is done again
            cursor.execute("SELECT 1").fetchall()
        assert trims == [0] and len(flushed) == 1
    finally:
        held.close()
