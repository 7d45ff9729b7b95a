"""The shipped instance: its launcher tells a killed run worker from a live one, and the pool is limited per run."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Collection
from pathlib import Path

import dagster as dg
from dagster._core.events import EngineEventData
from dagster._core.launcher import WorkerStatus
from dagster._core.storage.dagster_run import RunOpConcurrency

from extraction_assets.instance.launcher import WorkerCheckingRunLauncher, process_alive, run_worker_pid
from extraction_assets.instance.pool import _pool_full
from extraction_assets.lib.settings import PACKAGE_DIR


def _instance(tmp_path: Path) -> dg.DagsterInstance:
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", home / "dagster.yaml")
    return dg.DagsterInstance.from_config(str(home))


def _started_run(
    instance: dg.DagsterInstance, worker_pid: int | None, pools: Collection[str] = frozenset()
) -> dg.DagsterRun:
    run = dg.DagsterRun(
        job_name="__ASSET_JOB",
        run_id=str(uuid.uuid4()),
        status=dg.DagsterRunStatus.STARTED,
        run_op_concurrency=RunOpConcurrency(
            root_key_counts={pool: 1 for pool in pools}, has_unconstrained_root_nodes=False, all_pools=set(pools)
        ),
    )
    instance.add_run(run)
    if worker_pid is not None:
        instance.report_engine_event(
            f"Started process for run (pid: {worker_pid}).", run, EngineEventData.in_process(worker_pid)
        )
    return run


def _gone_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_live_process_is_alive_and_a_reaped_or_unreaped_killed_one_is_not() -> None:
    assert process_alive(os.getpid())
    assert not process_alive(_gone_pid())
    zombie = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    os.kill(zombie.pid, signal.SIGKILL)
    time.sleep(0.5)  # killed, not yet waited for: a zombie, as a killed worker of a code server can stay
    try:
        assert not process_alive(zombie.pid)
    finally:
        zombie.wait()


def test_the_shipped_instance_checks_run_workers_and_limits_the_pool_per_run(tmp_path: Path) -> None:
    instance = _instance(tmp_path)
    assert isinstance(instance.run_launcher, WorkerCheckingRunLauncher)
    assert instance.run_launcher.supports_check_run_worker_health
    granularity = instance.get_concurrency_config().pool_config.pool_granularity
    assert granularity is not None and granularity.value == "run"
    assert instance.run_monitoring_enabled
    assert isinstance(instance.run_coordinator, dg.QueuedRunCoordinator)
    assert instance.run_coordinator.dequeue_interval_seconds == 1


def test_a_run_whose_worker_is_gone_is_failed_and_a_live_or_unreported_one_is_running(tmp_path: Path) -> None:
    instance = _instance(tmp_path)
    launcher = instance.run_launcher
    dead = _started_run(instance, _gone_pid())
    alive = _started_run(instance, os.getpid())
    starting = _started_run(instance, None)
    assert run_worker_pid(instance, alive.run_id) == os.getpid()
    result = launcher.check_run_worker_health(dead)
    assert result.status == WorkerStatus.FAILED and "is gone" in (result.msg or "")
    assert launcher.check_run_worker_health(alive).status == WorkerStatus.RUNNING
    assert launcher.check_run_worker_health(starting).status == WorkerStatus.RUNNING


def test_with_a_per_run_limit_a_run_in_progress_using_the_pool_takes_its_turn(tmp_path: Path) -> None:
    instance = _instance(tmp_path)
    _started_run(instance, os.getpid(), pools={"other"})
    assert _pool_full(instance, "duckdb") == set()
    holder = _started_run(instance, os.getpid(), pools={"duckdb"})
    assert _pool_full(instance, "duckdb") == {holder.run_id}
    instance.report_run_failed(holder)
    assert _pool_full(instance, "duckdb") == set()
