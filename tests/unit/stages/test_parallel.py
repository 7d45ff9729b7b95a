"""The worker pool a run's CPU-bound steps share: how many workers, results in order, work too small for it kept in
the step's own process; shards at once on a lake."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.parallel import in_order, pool_size, usable_cores, workers_for
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import batched
from extraction_assets.runner import shards_at_once


def test_the_pool_has_a_worker_per_usable_core_or_as_many_as_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXTRACTION_WORKER_PROCESSES", raising=False)
    assert pool_size() == (usable_cores() if usable_cores() > 1 else 0)
    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "0")
    assert pool_size() == 0 and workers_for(10_000, 100) == 0  # every step in its own process
    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "3")
    assert workers_for(10_000, 100) == 3 and workers_for(250, 100) == 3 and workers_for(100, 100) == 0


def test_results_come_back_in_the_order_of_the_work_in_process_or_in_workers() -> None:
    jobs = [(n,) for n in range(7)]
    assert list(in_order(abs, iter(jobs), 0)) == list(range(7))
    assert list(in_order(pow, iter([(n, 2) for n in range(7)]), 2)) == [n * n for n in range(7)]


@pytest.mark.parametrize(
    ("warehouse", "shards", "at_once"),
    [
        ("ducklake:sqlite:/tmp/catalog.sqlite", None, [0, 1, 2]),
        ("ducklake:sqlite:/tmp/catalog.sqlite", [2], []),  # one shard: in this process
        ("/tmp/warehouse.duckdb", None, []),  # a DuckDB file takes one writer: one shard after the other
    ],
)
def test_shards_run_at_once_on_a_lake(
    monkeypatch: pytest.MonkeyPatch, warehouse: str, shards: list[int] | None, at_once: list[int]
) -> None:
    monkeypatch.setattr("extraction_assets.runner.SHARDS", 3)
    assert shards_at_once(Settings(warehouse=Path(warehouse)), shards) == at_once


def test_a_batch_ends_at_its_count_or_its_weight_and_a_heavy_item_is_a_batch_of_its_own() -> None:
    sizes = {"a": 5, "b": 5, "c": 30, "d": 1, "e": 1, "f": 1}
    assert batched(list(sizes), 3) == [["a", "b", "c"], ["d", "e", "f"]]
    assert batched(list(sizes), 3, sizes.__getitem__, 10) == [["a", "b"], ["c"], ["d", "e", "f"]]
    assert batched([], 3, sizes.__getitem__, 10) == []
