"""A model endpoint on 127.0.0.1 that sends its answers one byte at a time, against the real command line: a stuck
call costs its document (pending, extracted by the next run), never the run; SIGTERM stops a run as Ctrl-C does."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from evals.fake_llm import FakeLLMServer, Faults
from extraction_assets.lib.settings import SAMPLE_INBOX

pytestmark = pytest.mark.long(60)
PULSE = "pulse@v1"  # model_first: every document asks the model


@pytest.fixture
def pulses(tmp_path: Path) -> Path:
    """Two tenants' check-ins from the sample."""
    inbox = tmp_path / "inbox"
    for tenant in ("acme", "volga-parts"):
        shutil.copytree(SAMPLE_INBOX / tenant / "pulses", inbox / tenant / "pulses")
    return inbox


def _start(tmp_path: Path, fake: FakeLLMServer, inbox: Path, prompts: Path, **env: str) -> subprocess.Popen[bytes]:
    """`extraction-assets run` in a process of its own, SIGINT at its default (as from a terminal, not `&`)."""
    command = [str(Path(sys.executable).with_name("extraction-assets")), "run", "--schema", PULSE]
    command += ["--inbox", str(inbox), "--prompts", str(prompts), "--warehouse", str(tmp_path / "w.duckdb")]
    (tmp_path / "dagster").mkdir(exist_ok=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_HOME"))}
    model = {"EXTRACTION_LLM_BASE_URL": fake.base_url, "EXTRACTION_LLM_MODEL": "fake-model"}
    return subprocess.Popen(
        command,
        stdout=(tmp_path / "run.out").open("ab"),
        stderr=subprocess.STDOUT,
        env={**base, **model, "DAGSTER_HOME": str(tmp_path / "dagster"), "COLUMNS": "200", **env},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _finish(run: subprocess.Popen[bytes], seconds: float, out: Path) -> int:
    try:
        return run.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        run.kill()
        run.wait()
        raise AssertionError(f"still running after {seconds} s:\n{out.read_text(errors='replace')[-3000:]}") from None


def _count(warehouse: Path, sql: str) -> int:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        return int(con.execute(sql).fetchone()[0])  # type: ignore[index]


def test_stuck_calls_leave_their_documents_pending_and_the_next_run_extracts_them(
    tmp_path: Path, pulses: Path, prompts: Path
) -> None:
    warehouse, out = tmp_path / "w.duckdb", tmp_path / "run.out"
    limits = {"EXTRACTION_LLM_TIMEOUT": "2", "EXTRACTION_LLM_CONCURRENCY": "2"}
    with FakeLLMServer(Faults(drip_s=1.0), prompts_dir=prompts) as fake:
        first = _start(tmp_path, fake, pulses, prompts, **limits)
        assert _finish(first, 180, out) == 0, out.read_text(errors="replace")[-3000:]
        said = out.read_text(errors="replace")
        assert "because the endpoint ran out of EXTRACTION_LLM_TIMEOUT), the next run continues" in said
        documents = _count(warehouse, "SELECT count(*) FROM raw_documents")
        assert documents >= 7 and _count(warehouse, "SELECT count(DISTINCT tenant_id) FROM raw_documents") == 2
        assert _count(warehouse, "SELECT count(*) FROM extraction_status") == 0, "nothing failed, nothing processed"
        assert _count(warehouse, "SELECT count(*) FROM dead_letters WHERE stage IN ('extract', 'model')") == 0

        fake.configure(drip_s=0.0)  # the endpoint recovers
        # its answers are prompt now, but on a loaded machine a prompt answer can still take over 2 s: the second
        # run waits as a recovered endpoint deserves (the claim is that the pending documents are extracted)
        second = _start(tmp_path, fake, pulses, prompts, **{**limits, "EXTRACTION_LLM_TIMEOUT": "60"})
        assert _finish(second, 180, out) == 0, out.read_text(errors="replace")[-3000:]
    processed = "SELECT count(*) FROM extraction_status WHERE status = 'processed' AND model IS NOT NULL"
    assert _count(warehouse, processed) == documents
    assert _count(warehouse, "SELECT count(DISTINCT tenant_id) FROM extracted_items") == 2


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_ends_a_run_stuck_on_the_endpoint(
    tmp_path: Path, pulses: Path, prompts: Path, stop: signal.Signals
) -> None:
    """The calls in flight would each take minutes (a byte a second, a 600 s timeout): the stop gives them up."""
    warehouse, out = tmp_path / "w.duckdb", tmp_path / "run.out"
    with FakeLLMServer(Faults(drip_s=1.0), prompts_dir=prompts) as fake:
        run = _start(tmp_path, fake, pulses, prompts, EXTRACTION_LLM_TIMEOUT="600")
        asked = time.monotonic() + 180
        while not fake.requests and time.monotonic() < asked:  # the model calls are in flight
            assert run.poll() is None, out.read_text(errors="replace")[-3000:]
            time.sleep(0.2)
        time.sleep(1.0)
        run.send_signal(stop)
        code = _finish(run, 30, out)
    said = out.read_text(errors="replace")
    assert code == 130 and "interrupted: what was committed stays" in said, said[-3000:]
    assert _count(warehouse, "SELECT count(*) FROM raw_documents") >= 7, "the ingest committed before the stop stays"
