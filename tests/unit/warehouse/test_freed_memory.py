"""The C heap's freed pages go back to the system, at most once per interval, and a held warehouse's leases do it."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib import freed_memory
from extraction_assets.lib.freed_memory import give_back_freed_memory
from extraction_assets.lib.warehouse.held import held_warehouse

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
