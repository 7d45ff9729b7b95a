"""The `duckdb` pool after a crash, and a run's turn at it without spinning.

A step holds its pool slot in the instance's storage until it ends; a run killed with SIGKILL never ends, so
its slot would be held for good and every later run would wait for it. The command line runs its steps in its
own process, which Dagster's run monitoring cannot watch, so the runner tags each run with its process id and,
before each step, fails the runs of this machine whose process is gone and frees every slot a finished run
still holds (what the daemon's `free_slots_after_run_end_seconds` does for the UI's runs).

Dagster 1.13's in-process executor re-checks a blocked slot claim in a loop that never sleeps (one core at
100% for as long as it waits), so the runner waits for its turn before it launches a step: runs of the command
line queue on a file lock (the kernel lets a killed holder's lock go), then poll the pool with backoff. The
shipped `dagster.yaml` limits the pool per run (`granularity: run`: the daemon keeps the UI's runs queued while
another run using the pool is in progress, and no step claims a slot), so the turn also waits for every other
run in progress that uses the pool.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
from dagster._core.instance.config import PoolGranularity
from dagster._core.storage.dagster_run import FINISHED_STATUSES, IN_PROGRESS_RUN_STATUSES

from extraction_assets.instance.launcher import process_alive
from extraction_assets.lib.warehouse.worker_lock import exclusive_turn

logger = logging.getLogger("extraction_assets.instance")

PID_TAG = "extraction_assets/pid"
HOST_TAG = "extraction_assets/host"
TURN_LOCK = ".extraction-assets-pool.lock"
MAX_POLL_S = 5.0


def run_tags() -> dict[str, str]:
    """Tags that let a later process tell whether this run's process is still alive."""
    return {PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()}


def release_dead_runs(instance: dg.DagsterInstance, pool: str) -> list[str]:
    """Fail this machine's in-progress runs whose process is gone, free the slots finished runs still hold in
    `pool`, and return the ids of the runs whose slots were given back."""
    records = instance.get_run_records(
        dg.RunsFilter(statuses=IN_PROGRESS_RUN_STATUSES, tags={HOST_TAG: socket.gethostname()})
    )
    for record in records:
        run = record.dagster_run
        pid = int(run.tags.get(PID_TAG) or 0)
        if pid and pid != os.getpid() and not process_alive(pid):
            instance.report_run_failed(
                run, message=f"the process that ran it (pid {pid}) is gone (killed?): marked failed, slots freed"
            )
            logger.warning(f"run {run.run_id} was left in progress by process {pid}, which is gone: marked failed")
    if not instance.event_log_storage.supports_global_concurrency_limits:
        return []
    info = instance.event_log_storage.get_concurrency_info(pool)
    holders = info.active_run_ids | {step.run_id for step in info.pending_steps}
    if not holders:
        return []
    finished = instance.get_run_records(dg.RunsFilter(run_ids=sorted(holders), statuses=FINISHED_STATUSES))
    released = [record.dagster_run.run_id for record in finished]
    for run_id in released:
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)
        logger.warning(f"pool {pool!r}: gave back the slot held by run {run_id}, which has ended")
    return released


def _runs_using(instance: dg.DagsterInstance, pool: str) -> set[str]:
    """The runs in progress whose steps use `pool` (what a per-run limit counts)."""
    records = instance.get_run_records(dg.RunsFilter(statuses=IN_PROGRESS_RUN_STATUSES))
    return {
        record.dagster_run.run_id
        for record in records
        if record.dagster_run.run_op_concurrency and pool in (record.dagster_run.run_op_concurrency.all_pools or ())
    }


def _pool_full(instance: dg.DagsterInstance, pool: str) -> set[str]:
    """The runs holding every slot of `pool`, or with a per-run limit every run's turn (empty: the pool has room,
    or no limit)."""
    if not instance.event_log_storage.supports_global_concurrency_limits:
        return set()
    info = instance.event_log_storage.get_concurrency_info(pool)
    limit = info.slot_count or info.limit  # slots are created on the first claim; until then, the default limit
    if limit is None:
        return set()
    if info.active_slot_count + info.assigned_step_count >= limit:
        return info.active_run_ids | info.assigned_run_ids
    if instance.get_concurrency_config().pool_config.pool_granularity == PoolGranularity.RUN:
        using = _runs_using(instance, pool)
        return using if len(using) >= limit else set()
    return set()


@contextmanager
def _queue(home: Path, say: Callable[[str], None]) -> Iterator[None]:
    """One command-line run at a time launches its step: the others sleep on a file lock (no CPU)."""
    with exclusive_turn(home / TURN_LOCK, say, "to finish its step (pool turn)"):
        yield


@contextmanager
def pool_turn(
    instance: dg.DagsterInstance, pool: str | None, say: Callable[[str], None] = logger.warning
) -> Iterator[None]:
    """Wait (sleeping) until a slot of `pool` is free, giving back the slots of dead runs first; then the caller
    launches its run. A throwaway instance shares no pool with anyone, and no pool (a DuckLake warehouse takes
    many writers) means no turn to wait for."""
    if pool is None or instance.is_ephemeral or instance.root_directory is None:
        yield
        return
    with _queue(Path(instance.root_directory), say):
        delay, told = 0.1, False
        while True:
            release_dead_runs(instance, pool)
            holders = _pool_full(instance, pool)
            if not holders:
                break
            if not told:
                say(
                    f"waiting for pool {pool!r}, held by run {', '.join(sorted(holders))}; a run whose process is "
                    "gone gives its slot back by itself (README: a stuck slot)"
                )
                told = True
            time.sleep(delay)
            delay = min(delay * 1.5, MAX_POLL_S)
        yield
