"""The worker pool a run's CPU-bound steps share: how many workers, results in order, work too small for it kept in
the step's own process; shards at once on a lake."""

from __future__ import annotations

import gc
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extraction_assets.lib import parallel
from extraction_assets.lib.heuristics import pack_modules
from extraction_assets.lib.parallel import (
    POOL_WORTH,
    WORKER_GC_THRESHOLD,
    in_order,
    pool_size,
    settled_at,
    usable_cores,
    workers_for,
)
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import batched
from extraction_assets.runner import shards_at_once
from tests.process_state import not_loaded, variable_and_loaded

WORKERS = parallel.WORKER_PROCESSES_VARIABLE


def test_the_pool_has_a_worker_per_usable_core_or_as_many_as_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EXTRACTION_WORKER_PROCESSES", raising=False)
    assert pool_size() == (usable_cores() if usable_cores() > 1 else 0)
    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "0")
    assert pool_size() == 0 and workers_for(10_000, 100) == 0  # every step in its own process
    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "3")
    assert workers_for(10_000, 100) == 3 and workers_for(250, 100) == 3 and workers_for(100, 100) == 0


def test_a_pool_is_started_only_for_work_worth_its_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two workers cost about a CPU-second to start: where their number is not set, a step with fewer than
    `POOL_WORTH` items and no pool running yet does its work in its own process; a running pool is used for any work
    of more than one batch."""
    monkeypatch.delenv("EXTRACTION_WORKER_PROCESSES", raising=False)
    monkeypatch.setattr(parallel, "pool_size", lambda: 2)
    monkeypatch.setattr(parallel, "_pool", None)
    assert workers_for(POOL_WORTH - 1, 32) == 0 and workers_for(POOL_WORTH, 32) == 2
    assert settled_at(32) == POOL_WORTH and settled_at(200) == 400
    monkeypatch.setattr(parallel, "_pool", object())  # a pool this process started for an earlier step
    assert workers_for(33, 32) == 2 and settled_at(32) == 64
    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "2")
    monkeypatch.setattr(parallel, "_pool", None)
    assert workers_for(33, 32) == 2 and settled_at(32) == 64  # as many as set, as soon as there is a second batch
    monkeypatch.setattr(parallel, "pool_size", lambda: 0)
    assert workers_for(10_000, 32) == 0 and settled_at(32) == 0  # no pool: nothing more to count


def test_results_come_back_in_the_order_of_the_work_in_process_or_in_workers() -> None:
    jobs = [(n,) for n in range(7)]
    assert list(in_order(abs, iter(jobs), 0)) == list(range(7))
    assert list(in_order(pow, iter([(n, 2) for n in range(7)]), 2)) == [n * n for n in range(7)]


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork on this system")
def test_workers_start_with_the_code_of_the_steps_work_loaded() -> None:
    """The steps name what their work imports (the readers, the scrubber, the extraction packs); a worker is forked
    from a server that imported it once, so it does not import it again, whatever job it gets first."""
    import extraction_assets.lib.stages  # noqa: F401  # the steps name their modules when imported

    named = sorted(parallel._worker_modules)
    assert {"extraction_assets.lib.readers", "extraction_assets.lib.pii.batch"} <= set(named)
    assert "extraction_assets.lib.heuristics.every_pack" in named
    modules = [*named, *pack_modules()]  # every pack's code, not only the module naming them
    with parallel.background_pool(1) as pool:  # the worker's first job looks (its module imports nothing of ours)
        assert pool.submit(not_loaded, modules).result() == []


_BUSY_WORKERS = """
from extraction_assets.lib.parallel import background_pool

def busy(_):
    return sum(range(4_000_000))

if __name__ == "__main__":
    pool = background_pool(2)
    print(list(pool.map(busy, range(8))) and "done", flush=True)
"""


def test_a_runs_cpu_time_counts_its_workers(tmp_path: Path) -> None:
    """Whoever measures a run by its children's CPU time (the benches, `wait4`) gets the workers' too: they are
    waited for, as is the server they were forked from, before the run's process ends."""
    script = tmp_path / "busy.py"
    script.write_text(_BUSY_WORKERS)
    child = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert child.stdout is not None and child.stdout.read().strip() == "done"
    child.stdout.close()
    alone = _cpu_of(lambda: [sum(range(4_000_000)) for _ in range(8)])
    assert usage.ru_utime + usage.ru_stime > 0.8 * alone, "the eight jobs' CPU time is the run's"


def _cpu_of(work) -> float:
    started = os.times()
    work()
    ended = os.times()
    return ended.user + ended.system - started.user - started.system


def test_workers_collect_cyclic_garbage_less_often_than_the_default() -> None:
    # the young generation's threshold: 700 by default, the run's own process keeps it
    assert [t[0] for t in in_order(gc.get_threshold, iter([()] * 4), 2)] == [WORKER_GC_THRESHOLD] * 4
    assert gc.get_threshold()[0] != WORKER_GC_THRESHOLD


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


def test_the_shard_processes_started_early_have_imported_their_module_and_are_handed_out_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(parallel, "usable_cores", lambda: 4)
    parallel.start_shard_pool(2, "tabnanny")  # a module a fresh process has not imported
    parallel.start_shard_pool(2, "tabnanny")  # started once
    early = parallel.shard_pool(2)
    with early as pool:
        assert len(pool._processes) == 1  # already running, before any shard's work
        state = pool.submit(variable_and_loaded, WORKERS, "tabnanny").result()
        assert state == ("1", True)  # 4 cores: itself and one worker
    with parallel.shard_pool(2) as pool:  # none left: new processes, with the same share of workers
        assert pool is not early
        assert pool.submit(variable_and_loaded, WORKERS, "tabnanny").result() == ("1", False)


def test_a_batch_ends_at_its_count_or_its_weight_and_a_heavy_item_is_a_batch_of_its_own() -> None:
    sizes = {"a": 5, "b": 5, "c": 30, "d": 1, "e": 1, "f": 1}
    assert batched(list(sizes), 3) == [["a", "b", "c"], ["d", "e", "f"]]
    assert batched(list(sizes), 3, sizes.__getitem__, 10) == [["a", "b"], ["c"], ["d", "e", "f"]]
    assert batched([], 3, sizes.__getitem__, 10) == []


def test_the_inbox_plan_is_streamed_and_read_ahead_only_until_its_workers_are_known(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    from extraction_assets.lib.models import ReadFailure
    from extraction_assets.lib.readers import FileRead
    from extraction_assets.lib.stages.ingest import READ_CHUNK, _plan_ahead

    monkeypatch.setenv("EXTRACTION_WORKER_PROCESSES", "3")
    walked: list[int] = []

    def plan(reads: int):
        for n in range(reads):
            walked.append(n)
            if n % 5 == 0:
                yield ReadFailure(tenant_id="t", source_uri=f"t/{n}.bin", reason="unsupported file type .bin")
            yield FileRead(tmp_path / f"{n}.txt", "t", f"t/{n}.txt", None, tmp_path, (tmp_path / ".").stat())

    for reads in (1, READ_CHUNK, READ_CHUNK + 1, 3 * READ_CHUNK, 3 * READ_CHUNK + 1, 20 * READ_CHUNK):
        walked.clear()
        stream, workers = _plan_ahead(plan(reads))
        ahead = len(walked)
        entries = list(stream)
        assert workers == workers_for(reads, READ_CHUNK), reads
        assert [e.source_uri for e in entries] == [e.source_uri for e in plan(reads)], (
            "every entry, in the walk's order"
        )
        assert ahead <= 3 * READ_CHUNK + 1, "a large inbox is walked as it is read, not planned whole first"

    # the number of workers not set: a pool is worth starting from POOL_WORTH files, so the walk is read that far
    monkeypatch.delenv("EXTRACTION_WORKER_PROCESSES")
    monkeypatch.setattr(parallel, "pool_size", lambda: 2)
    monkeypatch.setattr(parallel, "_pool", None)  # as in a process that has started none yet
    for reads, expected in ((READ_CHUNK + 1, 0), (POOL_WORTH - 1, 0), (POOL_WORTH, 2), (20 * READ_CHUNK, 2)):
        walked.clear()
        stream, workers = _plan_ahead(plan(reads))
        assert workers == expected, reads
        assert len(walked) <= POOL_WORTH + 1, "walked only until the answer is known"
        assert len(list(stream)) == len(list(plan(reads)))
