"""SIGKILL at random points of every stage, with and without the Dagster instance: re-runs end where a clean run does.

A small inbox goes through `extraction-assets run` (two documents per batch, see `crash_driver.py`) killed at a
random write of ingest, scrub, extract and the review queue, each kill followed by a re-run that is killed in
turn; a last re-run finishes. The warehouse then holds the same rows, with the same ids, as a clean run's
(timestamps aside), and with the instance no run is left in progress and no pool slot stays taken.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from extraction_assets.lib.settings import DEFAULT_PROMPTS, PACKAGE_DIR, SAMPLE_INBOX, Settings
from extraction_assets.lib.warehouse import TABLES
from extraction_assets.runner import run_pipeline
from tests.integration.forked import ForkServer

pytestmark = pytest.mark.long(30)
SCHEMA = "pulse@v1"
FILES = (
    "acme/pulses/2026-11-23-dana.json",
    "acme/pulses/2026-11-24-marcus.json",
    "acme/notes/2026-11-24-ops-standup.md",
    "saigon-foods/pulses/tuan-48.jsonl",
    "volga-parts/pulses/2026-11-24-ivanova.json",
)
STUCK_S = 120
STAGES = ("ingest", "scrub", "extract", "review_queue")
KILLS_PER_STAGE = {False: 1, True: 2}  # without the instance, ten kills already recovered; the slots need more


@pytest.fixture(scope="module")
def small_inbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    inbox = tmp_path_factory.mktemp("crash") / "inbox"
    for rel in FILES:
        (inbox / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(SAMPLE_INBOX / rel, inbox / rel)
    return inbox


# kept only for a file stamped within 2 s of a write (`stages.ingest`): whether it is depends on when the run read it;
# a queue's fingerprint hashes its rows' timestamps (`review_queue.queue_inputs`)
WHEN_READ = {"content_sha256", "fingerprint"}


def snapshot(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows, sorted, without its timestamp columns (when a row was written differs by run) and the
    columns that depend on when it was written (`WHEN_READ`)."""
    with duckdb.connect(str(path), read_only=True) as con:
        tables: dict[str, list[tuple[Any, ...]]] = {}
        for table in TABLES:
            columns = [
                name
                for name, kind in con.execute(
                    "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?", [table]
                ).fetchall()
                if not kind.startswith("TIMESTAMP") and name not in WHEN_READ
            ]
            rows = con.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall()
            tables[table] = sorted(rows, key=repr)
    return tables


@pytest.fixture(scope="module")
def clean(small_inbox: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[Any, ...]]]:
    warehouse = tmp_path_factory.mktemp("clean") / "w.duckdb"
    settings = Settings(warehouse=warehouse, inbox=small_inbox, prompts_dir=DEFAULT_PROMPTS)
    assert all(s.success for s in run_pipeline(settings, [SCHEMA], instance=dg.DagsterInstance.ephemeral()))
    tables = snapshot(warehouse)
    assert tables["extracted_items"] and tables["evidence"] and tables["review_queue"]
    return tables


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ForkServer]:
    """The server that forks each run from a process that imported the pipeline once (see `crash_driver.py`)."""
    with ForkServer("tests.integration.crash_driver", dict(os.environ), tmp_path_factory.mktemp("runs")) as server:
        yield server


def _run(
    driver: ForkServer,
    env: dict[str, str],
    tmp: Path,
    stage: str | None = None,
    nth: int = 1,
    delay: float = 0,
) -> int:
    """One `extraction-assets run`, killed `delay` seconds after its `nth` write of `stage` begins (the run waits at
    that write until the test has seen it)."""
    marks, go = tmp / "marks", tmp / "go"
    marks.write_text("")
    go.unlink(missing_ok=True)
    env = {**env, "CRASH_MARKS": str(marks), "CRASH_GO": str(go)} | ({"CRASH_AT": f"{stage}:{nth}"} if stage else {})
    run = driver.start(["run", "--schema", SCHEMA], env)
    deadline = time.monotonic() + STUCK_S
    while True:
        announced = marks.read_text().split()
        if stage and announced.count(stage) >= nth:  # the run waits at that write until it is told to go
            go.write_text("")
            time.sleep(delay)
            os.kill(run.pid, signal.SIGKILL)
            break
        if "exit" in announced:  # the run ended (before that write)
            break
        if time.monotonic() > deadline:
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
            pytest.fail(f"the run made no progress in {STUCK_S} s (announced {announced}); waiting for a pool slot?")
        time.sleep(0.005)
    code = run.wait()
    said = run.said()
    assert "Traceback" not in said, said[-3000:]
    return code


@pytest.mark.parametrize("with_instance", [False, True], ids=["no-instance", "dagster-instance"])
def test_kill_9_anywhere_then_rerun_equals_a_clean_run(
    with_instance: bool,
    small_inbox: Path,
    clean: dict[str, list[tuple[Any, ...]]],
    runs: ForkServer,
    tmp_path: Path,
) -> None:
    rng = random.Random(18 + with_instance)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_"))} | {
        "EXTRACTION_WAREHOUSE": str(tmp_path / "w.duckdb"),
        "EXTRACTION_INBOX": str(small_inbox),
        "EXTRACTION_PROMPTS": str(DEFAULT_PROMPTS),
    }
    home = tmp_path / "dagster"
    if with_instance:
        home.mkdir()
        shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", home / "dagster.yaml")
        env["DAGSTER_HOME"] = str(home)
    killed = 0
    for stage in STAGES:
        for _ in range(KILLS_PER_STAGE[with_instance]):
            nth = 1 if stage == "review_queue" else rng.randint(1, 2)
            code = _run(runs, env, tmp_path, stage, nth, rng.uniform(0, 0.005))
            killed += code == -signal.SIGKILL
    assert killed >= len(STAGES), "most kills landed in a run"
    assert _run(runs, env, tmp_path) == 0
    assert snapshot(tmp_path / "w.duckdb") == clean
    if with_instance:
        instance = dg.DagsterInstance.from_config(str(home))
        assert not instance.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
        info = instance.event_log_storage.get_concurrency_info("duckdb")
        assert not info.claimed_slots and not info.pending_steps
