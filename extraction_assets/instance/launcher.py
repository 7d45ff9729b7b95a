"""The run launcher of the shipped `dagster.yaml`: Dagster's default launcher, plus a worker health check.

The default launcher starts each run of the UI (and of sensors and schedules) as a process of the code server and
cannot tell whether that process is still there, so run monitoring never fails a run whose worker was killed
(SIGKILL, the out-of-memory killer): it stays STARTED, and the `duckdb` pool stays taken by it for good. The run
worker records its process id when it starts ("Started process for run (pid: N)."); this launcher reads it and
answers the daemon's health check from it, so run monitoring fails such a run and the pool is given back.

The check looks at processes of the machine it runs on: the code servers of `make ui` are local processes.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from dagster._core.launcher import CheckRunHealthResult, WorkerStatus
from dagster._serdes.config_class import ConfigurableClassData

STARTED_PROCESS = "Started process for run"  # the message of the engine event the run worker reports first


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (a killed child its parent has not reaped yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):  # no /proc (not Linux), or it ended meanwhile: what kill said stands
        return stat.parent.exists() or not Path("/proc").is_dir()
    return state not in ("Z", "X")


def run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The process id the run's worker reported when it started (the latest, if the run was resumed)."""
    pid: int | None = None
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        event = entry.dagster_event
        if event is None or not (event.message or "").startswith(STARTED_PROCESS):
            continue
        value = event.engine_event_data.metadata.get("pid")
        if value is not None and str(value.value).isdigit():
            pid = int(str(value.value))
    return pid


class WorkerCheckingRunLauncher(dg.DefaultRunLauncher):
    """`DefaultRunLauncher` whose runs' workers are checked by process id, so run monitoring sees a killed one."""

    def __init__(self, inst_data: ConfigurableClassData | None = None) -> None:
        super().__init__(inst_data=inst_data)
        self._pids: dict[str, int] = {}  # run id -> worker pid, read once per run

    @property
    def supports_check_run_worker_health(self) -> bool:
        return True

    def check_run_worker_health(self, run: dg.DagsterRun) -> CheckRunHealthResult:
        pid = self._pids.get(run.run_id) or run_worker_pid(self._instance, run.run_id)
        if pid is None:  # not reported yet (the worker is starting): nothing says it is gone
            return CheckRunHealthResult(WorkerStatus.RUNNING, "the run worker has not reported its process yet")
        self._pids[run.run_id] = pid
        if process_alive(pid):
            return CheckRunHealthResult(WorkerStatus.RUNNING, run_worker_id=str(pid))
        self._pids.pop(run.run_id, None)
        return CheckRunHealthResult(
            WorkerStatus.FAILED, f"the run worker (pid {pid}) is gone (killed?)", run_worker_id=str(pid)
        )
