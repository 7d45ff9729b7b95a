"""Control characters from a tenant or a model only show, never act: a model's titles with a right-to-left override
in the Dagster UI's previews (real assets, a real endpoint on 127.0.0.1), and an escape sequence in an inbox file's
name on the command line's terminal output and in the run's log."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
from dagster._serdes import serialize_value

from evals.fake_llm import FakeLLMServer, Faults
from extraction_assets.lib.settings import SAMPLE_INBOX, Settings
from tests.integration.test_model_path import _extractor as model_extractor
from tests.integration.test_model_path import _run as run_model_path

PULSE = "pulse@v1"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: what follows reads backwards
ESCAPES = "\x1b[2J\x1b[31m"  # clear the screen, then red


def _previews(instance: dg.DagsterInstance, asset: str) -> list[str]:
    records = instance.fetch_materializations(dg.AssetKey(asset), limit=10).records
    return [str(r.asset_materialization.metadata["preview"].value) for r in records if r.asset_materialization]


def test_a_models_bidirectional_controls_show_as_marks_in_the_ui_previews(tmp_path: Path, prompts: Path) -> None:
    inbox = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX / "acme" / "pulses", inbox / "acme" / "pulses")
    settings = Settings(warehouse=tmp_path / "w.duckdb", inbox=inbox, prompts_dir=prompts)
    instance = dg.DagsterInstance.ephemeral()
    with FakeLLMServer(Faults(title_prefix=RLO), prompts_dir=prompts) as fake:
        run_model_path(settings, model_extractor(fake), instance)  # ingest, then the partition's extraction and queue
    items, queue = _previews(instance, "extracted_items"), _previews(instance, "review_queue")
    assert items and queue
    for preview in (*items, *queue):
        assert RLO not in preview
    assert "⟦U+202E⟧" in items[0], "the model's control is shown where it was"
    shown = "\n".join(serialize_value(e) for run in instance.get_runs() for e in instance.all_logs(run.run_id))
    assert RLO not in shown and "\\u202e" not in shown.lower(), "nowhere in the run's events either"


def test_an_escape_sequence_in_a_file_name_never_reaches_the_terminal(tmp_path: Path, prompts: Path) -> None:
    inbox = tmp_path / "inbox"
    (inbox / "evil").mkdir(parents=True)
    (inbox / "evil" / f"{ESCAPES}pwned.txt").write_bytes(b"binary\x00content")  # a dead letter, named on screen
    shutil.copytree(SAMPLE_INBOX / "acme" / "notes", inbox / "acme" / "notes")
    (tmp_path / "dagster").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_HOME"))}
    env |= {"DAGSTER_HOME": str(tmp_path / "dagster"), "COLUMNS": "200"}
    command = [str(Path(sys.executable).with_name("extraction-assets")), "run", "--schema", PULSE, "--verbose"]
    command += ["--inbox", str(inbox), "--prompts", str(prompts), "--warehouse", str(tmp_path / "w.duckdb")]
    done = subprocess.run(command, capture_output=True, env=env, timeout=600, check=False)
    said = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 0, said[-3000:]
    assert "\x1b" not in said, "no escape sequence of the file's name (not a terminal: none of the console's own)"
    assert "evil/⟦U+001B⟧[2J⟦U+001B⟧[31mpwned.txt: binary content" in said, "the name is shown, its controls marked"
