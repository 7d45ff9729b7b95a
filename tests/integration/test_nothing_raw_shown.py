"""No planted personal value reaches a place a person looks: the Dagster instance's run logs and metadata (what
the UI shows, with no sign-in), the command line's output, the dead letters and an export of the review queue."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
from dagster._serdes import serialize_value

from extraction_assets.lib.warehouse import open_warehouse
from tests.integration.test_pii_assets import _detected_values
from tests.planted_pii import TENANT, plant_pii_inbox

CLI = [sys.executable, "-m", "extraction_assets.cli"]


def _cli(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=540, check=False)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a check failed; the output is still scanned
    return done.stdout + done.stderr


def _found(values: set[str], text: str) -> list[str]:
    return sorted(v for v in values if v in text)


def test_no_planted_value_in_the_instance_the_output_or_the_dead_letters(tmp_path: Path, inbox: Path) -> None:
    planted = set(plant_pii_inbox(inbox))
    values = _detected_values(inbox) | planted
    home = tmp_path / "dagster-home"
    home.mkdir()
    warehouse = tmp_path / "warehouse.duckdb"
    env = {**os.environ, "DAGSTER_HOME": str(home), "COLUMNS": "200"}
    output = _cli(["run", "--inbox", str(inbox), "--warehouse", str(warehouse), "--verbose"], env)
    output += _cli(["summary", "--warehouse", str(warehouse)], env)
    export = tmp_path / "export.jsonl"
    output += _cli(["review", "export", "--tenant", TENANT, "--warehouse", str(warehouse), "--out", str(export)], env)
    output += _cli(["review", "list", "--tenant", TENANT, "--warehouse", str(warehouse)], env)
    assert _found(values, output) == []
    assert _found(values, export.read_text(encoding="utf-8")) == []

    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        events = [serialize_value(entry) for run in runs for entry in instance.all_logs(run.run_id)]
    assert len(runs) == 1 and len(events) > 100  # one pass, one run
    shown = "\n".join(events)
    assert "[EMAIL_1]" in shown and "unreadable" in shown  # the previews and the dead file's report are there
    assert _found(values, shown) == []

    with open_warehouse(warehouse, read_only=True) as con:
        letters = con.execute("SELECT source_uri, reason, detail FROM dead_letters").fetchall()
        planted_docs = con.execute("SELECT count(*) FROM raw_documents WHERE tenant_id = ?", [TENANT]).fetchone()
    assert planted_docs is not None and planted_docs[0] >= 6
    assert any(TENANT in str(uri) for uri, _, _ in letters)
    # the table keeps the file's path (the raw zone, as raw_documents does); what a letter says is masked
    assert _found(values, "\n".join(f"{reason} {detail}" for _, reason, detail in letters)) == []
