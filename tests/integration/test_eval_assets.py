"""End to end: materialize eval_report (per schema version) and eval_comparison into a temporary DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from evals.fake_llm import FakeLLMServer
from extraction_assets.cli import main
from extraction_assets.definitions import build_definitions
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from tests.dagster_results import materializable
from tests.eval_seed import write_registry
from tests.one_row import one_row


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    return write_registry(tmp_path)


def _materialize(settings: Settings, instance: dg.DagsterInstance, selection: str, partition: str | None, config):
    defs = build_definitions(settings)
    return dg.materialize(
        materializable(defs, checks=False),
        instance=instance,
        resources=defs.resources,
        selection=[selection],
        partition_key=partition,
        run_config={"ops": {"eval_report": {"config": config}}} if config else None,
    )


def _metadata(result: dg.ExecuteInJobResult, asset: str) -> dict:
    event = next(
        e
        for e in result.get_asset_materialization_events()
        if e.event_specific_data.materialization.asset_key.to_user_string() == asset
    )
    return {k: v.value for k, v in event.event_specific_data.materialization.metadata.items()}


def test_eval_report_scores_stores_and_compares(settings: Settings, registry: Path) -> None:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("schema_versions", ["pulse@v1", "receiptz@v1", "pii@v1"])
    config = {"registry": str(registry), "max_documents": 3, "sample_documents": 2}
    result = _materialize(settings, instance, "eval_report", "pulse@v1", config)
    assert result.success
    meta = _metadata(result, "eval_report")
    assert meta["datasets_scored"] == 1 and meta["documents"] == 3  # the slice, not the 4 records
    assert "| decision |" in meta["scores"] and "grounding rate" in meta["scores"]
    assert "not_here" in meta["skipped"] and "does not exist" in meta["skipped"]
    assert meta["standups/recall"] == 1.0
    assert (meta["standups/documents"], meta["standups/slice"]) == (3, True)  # a slice says it is one
    report = Path(meta["standups/report"])
    assert report.is_file() and report.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")

    # the scrubber is scored without a prompt file, its reliability drawn (a version without one: the stage test)
    pii = _metadata(_materialize(settings, instance, "eval_report", "pii@v1", config), "eval_report")
    assert pii["datasets_scored"] == 1 and pii["pii/f1"] == 1.0
    assert "pii/reliability" in pii and "data:image/png;base64," in pii["pii/reliability"]

    with open_warehouse(settings.warehouse) as con:
        runs = rows_as_dicts(con, "SELECT dataset, schema_version, documents, report_path FROM eval_runs ORDER BY 1")
        recall = one_row(
            con.execute("SELECT recall FROM eval_metrics WHERE dataset = 'standups' AND field = 'decision'")
        )[0]
    assert [(r["dataset"], r["schema_version"], r["documents"]) for r in runs] == [
        ("pii", "pii@v1", 1),
        ("standups", "pulse@v1", 3),
    ]
    assert recall == 1.0

    comparison = _metadata(_materialize(settings, instance, "eval_comparison", None, None), "eval_comparison")
    assert comparison["datasets"] == 2 and comparison["configurations"] == 2
    assert "#### standups" in comparison["comparison"] and "pulse@v1" in comparison["comparison"]
    assert "data:image/png;base64," in comparison["history"]
    # where the reports folder is served (`extraction-assets ui` serves it), the metadata links to the report there
    served = settings.model_copy(update={"reports_url": "http://127.0.0.1:3001/"})
    linked = _metadata(_materialize(served, instance, "eval_report", "pulse@v1", config), "eval_report")
    assert linked["standups/report"] == f"http://127.0.0.1:3001/{report.name}"


def test_a_rerun_of_an_eval_is_answered_from_the_model_cache(
    tmp_path: Path, registry: Path, prompts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = tmp_path / "gold" / "standups.jsonl"
    args = ["eval", "--dataset", str(dataset), "--registry-entry", "standups", "--registry", str(registry)]
    args += ["--warehouse", str(tmp_path / "w.duckdb"), "--prompts", str(prompts), "--limit", "2"]
    with FakeLLMServer(prompts_dir=prompts) as fake:
        monkeypatch.setenv("EXTRACTION_LLM_BASE_URL", fake.base_url)
        monkeypatch.setenv("EXTRACTION_LLM_MODEL", "fake-model")
        assert main([*args, "--json", str(tmp_path / "first.json")]) == 0
        calls = len(fake.requests)
        assert main([*args, "--json", str(tmp_path / "again.json")]) == 0
        assert len(fake.requests) == calls  # nothing reached the model the second time
    first = json.loads((tmp_path / "first.json").read_text(encoding="utf-8"))
    again = json.loads((tmp_path / "again.json").read_text(encoding="utf-8"))
    assert first["model"] == "fake-model" and first["model_calls"] == calls > 0
    assert again["model_calls"] == 0 and again["cache_hits"] == again["documents"] == 2
    assert again["fields"] == first["fields"]
