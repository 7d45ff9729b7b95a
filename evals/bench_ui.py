"""Benchmark group `ui`: what a person waits for in the Dagster UI and at the terminal.

Each figure is measured in fresh child processes, as the UI and a shell start them: loading the code
location, `extraction-assets --help`, and a no-op run of every partition (the warehouse is already up to
date) launched with `dagster asset materialize` against a Dagster instance in a temporary `DAGSTER_HOME`
that holds the shipped `dagster.yaml`, one run per partition, as a backfill launches them.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from extraction_assets.lib.schemas import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PACKAGE_DIR, SAMPLE_INBOX

Figures = dict[str, float | int | str]

BIN = Path(sys.executable).parent
EXTRACTION_SELECTION = "extracted_items,grounded_evidence,review_queue"


def _seconds(command: Sequence[str], env: Mapping[str, str] | None = None) -> float:
    """Wall time of one child process; a failure stops the benchmark with the child's own words."""
    started = time.perf_counter()
    done = subprocess.run(list(command), env=dict(env) if env else None, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def _median(command: Sequence[str], runs: int) -> float:
    return round(statistics.median(_seconds(command) for _ in range(runs)), 2)


def noop_backfill_seconds(partitions: Sequence[str], home: Path, warehouse: Path) -> float:
    """Fill the warehouse once, then time one `dagster asset materialize` per partition that finds nothing to do."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EXTRACTION_WAREHOUSE": str(warehouse),
        "EXTRACTION_INBOX": str(SAMPLE_INBOX),
        "EXTRACTION_PROMPTS": str(DEFAULT_PROMPTS),
    }
    _seconds([str(BIN / "extraction-assets"), "run"], env)  # everything done once; adds the partitions
    started = time.perf_counter()
    for key in partitions:
        command = [str(BIN / "dagster"), "asset", "materialize", "-m", "extraction_assets.definitions"]
        _seconds([*command, "--select", EXTRACTION_SELECTION, "--partition", key], env)
    return round(time.perf_counter() - started, 2)


def bench_ui(runs: int = 3) -> Figures:
    partitions = sorted(discover_schemas(DEFAULT_PROMPTS)[0])
    load_s = _median([sys.executable, "-c", "import extraction_assets.definitions"], runs)
    help_s = _median([str(BIN / "extraction-assets"), "--help"], runs)
    with tempfile.TemporaryDirectory() as tmp:
        backfill_s = noop_backfill_seconds(partitions, Path(tmp) / "dagster", Path(tmp) / "warehouse.duckdb")
    return {
        "code_location_load_s": load_s,
        "cli_help_s": help_s,
        "noop_backfill_s": backfill_s,
        "noop_backfill_partitions": len(partitions),
        "noop_run_s": round(backfill_s / len(partitions), 2),
        "measured_on": (
            f"median of {runs} fresh processes for load and --help; backfill: one `dagster asset materialize` "
            f"per partition ({len(partitions)}) of the extraction and review assets with their checks, "
            "on the sample inbox already extracted, DAGSTER_HOME with the shipped dagster.yaml"
        ),
    }
