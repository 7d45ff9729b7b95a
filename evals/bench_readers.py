"""Benchmark group `readers`: review commands while a run writes (target: p95 <= 2 s, no failure).

A warehouse is filled from 100 documents of the bench inbox (`bench_inbox.py`), then the inbox grows by 3,000
documents and an offline `extraction-assets run` goes through the new ones in a child process. Meanwhile
`review list` and `review show` run one after another, each a fresh process as a reviewer's shell starts it,
until the run ends. Each command's wall time and exit code is recorded; the same commands with no run
writing give the baseline (most of a command's time is starting Python and importing the review stack).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evals.bench_inbox import build_inbox
from evals.bench_throughput import Figures
from extraction_assets.lib.evaluation.metrics import percentile

BIN = Path(sys.executable).parent
TENANT = "tenant-1"
SEED_DOCUMENTS = 100
RUN_DOCUMENTS = 3000  # the new documents the writing run ingests, scrubs and extracts


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_LLM_", "DAGSTER_HOME"))}


def _review(warehouse: Path, *args: str) -> tuple[float, int, str]:
    command = [str(BIN / "extraction-assets"), "review", *args, "--tenant", TENANT, "--warehouse", str(warehouse)]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=_env())
    return time.perf_counter() - started, done.returncode, done.stdout


def _commands(warehouse: Path, item: str) -> tuple[list[float], int]:
    """One `review list` and one `review show`: (seconds of each, failures)."""
    seconds: list[float] = []
    failures = 0
    for args in (("list", "--json"), ("show", item, "--json")):
        took, code, _ = _review(warehouse, *args)
        seconds.append(took)
        failures += code != 0
    return seconds, failures


def _run(inbox: Path, warehouse: Path) -> subprocess.Popen[bytes]:
    command = [str(BIN / "extraction-assets"), "run", "--inbox", str(inbox), "--warehouse", str(warehouse)]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env())


def bench_readers() -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        inbox, warehouse = Path(tmp) / "inbox", Path(tmp) / "w.duckdb"
        build_inbox(inbox, SEED_DOCUMENTS)
        if _run(inbox, warehouse).wait():
            raise RuntimeError("the seed run failed")
        _, code, listed = _review(warehouse, "list", "--json")
        rows = json.loads(listed) if code == 0 else []
        if not rows:
            raise RuntimeError(f"no item to review for {TENANT} after the seed run")
        item = rows[0]["item_id"]
        idle: list[float] = []
        for _ in range(3):
            idle += _commands(warehouse, item)[0]
        build_inbox(inbox, SEED_DOCUMENTS + RUN_DOCUMENTS)
        started = time.perf_counter()
        run = _run(inbox, warehouse)
        during: list[float] = []
        failures = 0
        while run.poll() is None:
            seconds, failed = _commands(warehouse, item)
            during += seconds
            failures += failed
        run_s = time.perf_counter() - started
        if run.returncode:
            raise RuntimeError(f"the writing run failed ({run.returncode})")
    return {
        "run_documents": RUN_DOCUMENTS,
        "run_s": round(run_s, 1),
        "commands_during_run": len(during),
        "failures_during_run": failures,
        "p50_s_during_run": round(percentile(during, 0.5) or 0, 2),
        "p95_s_during_run": round(percentile(during, 0.95) or 0, 2),
        "max_s_during_run": round(max(during, default=0), 2),
        "p50_s_idle": round(percentile(idle, 0.5) or 0, 2),
        "measured_on": (
            f"`review list` and `review show` of {TENANT}, each a fresh process, back to back while an offline "
            f"`extraction-assets run` ingests, scrubs and extracts {RUN_DOCUMENTS} new documents of "
            f"the bench inbox (every schema version) into a warehouse holding {SEED_DOCUMENTS}; idle: the same "
            "commands with no run"
        ),
    }
