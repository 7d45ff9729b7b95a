"""The Dagster instance under several processes: created once on a fresh home, and a run waits for the pool asleep."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from extraction_assets.instance.pool import HOST_TAG, PID_TAG, release_dead_runs
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PACKAGE_DIR, SAMPLE_INBOX, Settings
from tests.waiting import wait_until

pytestmark = pytest.mark.long(30)
# Imports the instance module once, then forks a process per home given (none has opened an instance): each opens
# its home at the same moment and prints the runs it finds; the parent prints each one's exit code. Forked, the nine
# skip the second or two of imports each would pay started as an interpreter of its own; what they share is code.
OPEN_AT_ONCE = """
import os, sys, time, traceback
from extraction_assets.instance import open_instance
at = time.time() + 1
children = []
for home in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.environ["DAGSTER_HOME"] = home
            time.sleep(max(0.0, at - time.time()))
            os.write(1, f"{home} {len(open_instance().get_runs())}\\n".encode())  # one write: lines never mix
        except BaseException:
            traceback.print_exc()
            code = 1
        os._exit(code)
    children.append(pid)
for pid in children:
    print("exit", os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), flush=True)
"""


def _home(path: Path) -> Path:
    path.mkdir(parents=True)
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", path / "dagster.yaml")
    return path


def test_processes_opening_a_fresh_shared_home_at_once_create_its_storage_once(tmp_path: Path) -> None:
    homes = [_home(tmp_path / f"home{n}") for n in range(3)]
    # nine processes, three on each fresh home, opening at once; the bound is generous: it catches a hang
    done = subprocess.run(
        [sys.executable, "-c", OPEN_AT_ONCE, *(str(home) for home in homes for _ in range(3))],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.split("\n")
    assert [line for line in lines if line.startswith("exit ")] == ["exit 0"] * 9, done.stderr[-3000:]
    opened = sorted(line for line in lines if line and not line.startswith("exit "))
    assert opened == sorted(f"{home} 0" for home in homes for _ in range(3)), done.stdout


def test_a_fresh_home_says_automation_is_on_and_keeps_a_persons_choice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dagster._daemon.asset_daemon import get_auto_materialize_paused, set_auto_materialize_paused

    from extraction_assets.instance import open_instance

    monkeypatch.setenv("DAGSTER_HOME", str(_home(tmp_path / "home")))
    with open_instance() as instance:
        assert not get_auto_materialize_paused(instance)  # what the UI's "Auto-materialize on/off" reads
        set_auto_materialize_paused(instance, True)  # a person switches it off in the UI
    with open_instance() as instance:
        assert get_auto_materialize_paused(instance)


def _fake_run(instance: dg.DagsterInstance, pid: int) -> str:
    """A run in progress that holds the `duckdb` pool's only slot, as a run of another process does."""
    run_id = str(uuid.uuid4())
    instance.add_run(
        dg.DagsterRun(
            job_name="__ASSET_JOB",
            run_id=run_id,
            status=dg.DagsterRunStatus.STARTED,
            tags={PID_TAG: str(pid), HOST_TAG: socket.gethostname()},
        )
    )
    instance.event_log_storage.set_concurrency_slots("duckdb", 1)
    assert instance.event_log_storage.claim_concurrency_slot("duckdb", run_id, "raw_documents").is_claimed
    return run_id


def test_a_run_waiting_for_the_pool_sleeps_then_goes_when_the_slot_is_given_back(tmp_path: Path) -> None:
    home = _home(tmp_path / "dagster")
    instance = dg.DagsterInstance.from_config(str(home))
    holder = _fake_run(instance, os.getpid())  # alive: its slot is not taken from it
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX / "acme" / "pulses", inbox / "acme" / "pulses")
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXTRACTION_")} | {
        "DAGSTER_HOME": str(home),
        "EXTRACTION_WAREHOUSE": str(tmp_path / "w.duckdb"),
        "EXTRACTION_INBOX": str(inbox),
        "EXTRACTION_PROMPTS": str(DEFAULT_PROMPTS),
    }
    log = tmp_path / "stderr"
    run = subprocess.Popen(
        [sys.executable, "-m", "extraction_assets.cli", "run", "--schema", "pulse@v1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    try:
        deadline = time.monotonic() + 120
        while "waiting for pool" not in log.read_text():
            assert run.poll() is None and time.monotonic() < deadline, "the run neither waited nor ran"
            time.sleep(0.2)
        cpu_before, wall_before = _cpu_seconds(run.pid), time.monotonic()
        time.sleep(3)
        cpu = (_cpu_seconds(run.pid) - cpu_before) / (time.monotonic() - wall_before)
        assert run.poll() is None, "the run went on while the only slot was taken"
        assert cpu < 0.3, f"a waiting run used {cpu:.0%} of a core"
    finally:
        instance.event_log_storage.free_concurrency_slots_for_run(holder)
    assert run.wait(timeout=300) == 0, log.read_text()[-2000:]
    assert f"waiting for pool 'duckdb', held by run {holder}" in " ".join(log.read_text().split())


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def test_the_slot_of_a_run_whose_process_is_gone_is_given_back_and_the_run_marked_failed(tmp_path: Path) -> None:
    instance = dg.DagsterInstance.from_config(str(_home(tmp_path / "dagster")))
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    run_id = _fake_run(instance, dead.pid)
    alive = _fake_run_without_slot(instance)
    assert release_dead_runs(instance, "duckdb") == [run_id]
    failed, running = instance.get_run_by_id(run_id), instance.get_run_by_id(alive)
    assert failed is not None and failed.status == dg.DagsterRunStatus.FAILURE
    assert running is not None and running.status == dg.DagsterRunStatus.STARTED
    assert not instance.event_log_storage.get_concurrency_info("duckdb").claimed_slots


def _fake_run_without_slot(instance: dg.DagsterInstance) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(
        dg.DagsterRun(
            job_name="__ASSET_JOB",
            run_id=run_id,
            status=dg.DagsterRunStatus.STARTED,
            tags={PID_TAG: str(os.getpid()), HOST_TAG: socket.gethostname()},
        )
    )
    return run_id


@pytest.fixture(autouse=True)
def _no_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)


def test_no_connection_is_open_while_a_batch_is_scrubbed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch of large files takes a while to scrub: the warehouse is free for readers and other runs meanwhile."""
    from contextlib import contextmanager

    import extraction_assets.defs.resources as resources
    import extraction_assets.lib.pii as pii
    from extraction_assets.runner import run_pipeline

    open_now: list[int] = [0]
    during_scrub: list[int] = []
    real_open, real_scrub = resources.open_warehouse, pii.scrub_batch

    @contextmanager
    def counted(*args: Any, **kwargs: Any) -> Iterator[duckdb.DuckDBPyConnection]:
        with real_open(*args, **kwargs) as con:
            open_now[0] += 1
            try:
                yield con
            finally:
                open_now[0] -= 1

    def scrub(*args: Any, **kwargs: Any) -> pii.ScrubBatch:
        during_scrub.append(open_now[0])
        return real_scrub(*args, **kwargs)

    monkeypatch.setattr(resources, "open_warehouse", counted)
    monkeypatch.setattr(pii, "scrub_batch", scrub)
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX / "acme" / "pulses", inbox / "acme" / "pulses")
    settings = Settings(warehouse=tmp_path / "w.duckdb", inbox=inbox, prompts_dir=DEFAULT_PROMPTS)
    ingest = run_pipeline(settings, ["pulse@v1"], instance=dg.DagsterInstance.ephemeral())[0]
    assert ingest.success
    assert during_scrub and set(during_scrub) == {0}


def test_two_runs_at_once_never_extract_the_same_documents(tmp_path: Path) -> None:
    """Two `extraction-assets run` processes on one warehouse (a UI run and a command-line run, say): the second
    starts while the first extracts (the model holds its answers until then), waits for the first's partition, says
    whom it waits for, then finds nothing to do. Every document is extracted once and the model is asked once per
    document's chunk."""
    from evals.fake_llm import FakeLLMServer, Faults
    from extraction_assets.runner import run_pipeline

    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX / "acme" / "pulses", inbox / "acme" / "pulses")
    settings = Settings(warehouse=tmp_path / "w.duckdb", inbox=inbox, prompts_dir=DEFAULT_PROMPTS)
    ingest = run_pipeline(settings, ["pulse@v1"], instance=dg.DagsterInstance.ephemeral(), stages=("ingest",))
    assert ingest[0].success  # ingested once, first: both runs start with extraction
    with FakeLLMServer(Faults(latency_ms=300)) as fake:
        env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
        env |= {"EXTRACTION_LLM_BASE_URL": fake.base_url, "EXTRACTION_LLM_MODEL": "fake-model", "COLUMNS": "200"}
        env["PYTHONUNBUFFERED"] = "1"  # the output is read while the process runs
        command = [sys.executable, "-m", "extraction_assets.cli", "run", "--schema", "pulse@v1"]
        command += ["--inbox", str(inbox), "--warehouse", str(settings.warehouse), "--verbose"]
        logs = [tmp_path / "first.out", tmp_path / "second.out"]
        fake.answering.clear()
        with logs[0].open("wb") as first_log, logs[1].open("wb") as second_log:
            first = subprocess.Popen(command, env=env, stdout=first_log, stderr=subprocess.STDOUT)
            wait_until("the first to extract", lambda: bool(fake.requests) or first.poll() is not None, 300)
            second = subprocess.Popen(command, env=env, stdout=second_log, stderr=subprocess.STDOUT)
            wait_until(  # the partition is the first's until the model answers it
                "the second to wait",
                lambda: "to finish extracting" in logs[1].read_text(errors="replace") or second.poll() is not None,
                300,
            )
            fake.answering.set()
            codes = [run.wait(timeout=300) for run in (first, second)]
        outputs = [log.read_text(errors="replace") for log in logs]
    assert codes == [0, 0], outputs
    assert sum("which is extracting" in o or "to finish extracting pulse@v1" in o for o in outputs) == 1, outputs
    import duckdb

    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        attempts = con.execute("SELECT max(attempts), count(*) FROM extraction_status").fetchone()
    assert attempts is not None and attempts[0] == 1 and attempts[1] >= 4  # each document extracted once
