"""Runs of the UI under the daemon `make ui` runs (`instance/daemon.py`) and the shipped `dagster.yaml`: a run
waiting for the `duckdb` pool stays queued (no process, no spinning), and a run whose worker is killed is failed by
run monitoring, which gives the pool to the next run."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner
from dagster._cli.job import job_launch_command

from extraction_assets.instance import open_instance
from extraction_assets.instance.daemon import command as daemon_command
from extraction_assets.instance.launcher import run_worker_pid
from extraction_assets.lib.settings import PACKAGE_DIR
from tests.waiting import wait_until

pytestmark = pytest.mark.long(25)
LOCATION = '''
import time
from pathlib import Path

import dagster as dg

HOLD = Path(__file__).with_name("hold")


@dg.asset(pool="duckdb")
def held() -> None:
    """Holds the pool while the file `hold` exists."""
    while HOLD.exists():
        time.sleep(0.2)


defs = dg.Definitions(
    assets=[held], jobs=[dg.define_asset_job("held_job", selection=[held])], executor=dg.in_process_executor
)
'''


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    (tmp_path / "dagster").mkdir()
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", tmp_path / "dagster" / "dagster.yaml")
    (tmp_path / "location.py").write_text(LOCATION)
    (tmp_path / "workspace.yaml").write_text(
        f"load_from:\n  - python_file:\n      relative_path: location.py\n      working_directory: {tmp_path}\n"
    )
    (tmp_path / "hold").touch()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXTRACTION_")} | {
        "DAGSTER_HOME": str(tmp_path / "dagster")
    }
    yield tmp_path, env
    (tmp_path / "hold").unlink(missing_ok=True)


def _daemon(root: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        daemon_command(root / "workspace.yaml"),
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its code server and run workers share its process group
    )


def _kill(daemon: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    os.killpg(daemon.pid, sig)
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(daemon.pid, signal.SIGKILL)
        daemon.wait()


def test_a_queued_run_waits_queued_and_a_killed_run_is_failed_and_gives_the_pool_back(
    home: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, env = home
    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
    instance = open_instance()  # as `make ui` opens the home before the daemon starts: the pools get their limit
    for _ in range(2):  # `dagster job launch`, in this process (the code server it loads the job from runs apart)
        launched = CliRunner().invoke(job_launch_command, ["-w", str(root / "workspace.yaml"), "-j", "held_job"])
        assert launched.exit_code == 0, launched.output
    first, second = sorted(instance.get_runs(), key=lambda run: run.tags.get("dagster/run_id", run.run_id))[:2]

    def status(run_id: str) -> dg.DagsterRunStatus:
        run = instance.get_run_by_id(run_id)
        assert run is not None, run_id
        return run.status

    daemon = _daemon(root, env)
    try:
        wait_until(
            "one run started",
            lambda: dg.DagsterRunStatus.STARTED in {status(first.run_id), status(second.run_id)},
            180,
            every=0.5,
        )
        running, waiting = (first, second) if status(first.run_id) == dg.DagsterRunStatus.STARTED else (second, first)
        wait_until("the worker's pid", lambda: run_worker_pid(instance, running.run_id) is not None, 60, every=0.5)
        time.sleep(8)  # several turns of the daemon's run queue
        assert status(waiting.run_id) == dg.DagsterRunStatus.QUEUED, "a run started while the pool was taken"
    finally:  # `make ui` killed with everything it started: daemon, code server and the run's worker
        _kill(daemon, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):  # in case it left the group
        os.kill(run_worker_pid(instance, running.run_id) or 0, signal.SIGKILL)
    assert status(running.run_id) == dg.DagsterRunStatus.STARTED  # nothing is left to say it ended
    daemon = _daemon(root, env)  # `make ui` again
    try:
        wait_until(
            "the killed run failed", lambda: status(running.run_id) == dg.DagsterRunStatus.FAILURE, 180, every=0.5
        )
        wait_until(
            "the next run started", lambda: status(waiting.run_id) == dg.DagsterRunStatus.STARTED, 120, every=0.5
        )
        (root / "hold").unlink()
        wait_until("the next run ended", lambda: status(waiting.run_id) == dg.DagsterRunStatus.SUCCESS, 120, every=0.5)
    finally:
        _kill(daemon, signal.SIGTERM)
    messages = [entry.message for entry in instance.all_logs(running.run_id)]
    assert any("is gone" in message for message in messages), messages[-8:]
