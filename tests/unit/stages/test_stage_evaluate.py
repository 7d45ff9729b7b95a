"""`evaluate_version` as a stage: a small registry scored into a temporary DuckDB warehouse, reports written beside
it, with no Dagster in the way."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from extraction_assets.lib.extraction import OrchestratedExtractor
from extraction_assets.lib.stages import EvalRequest, EvalStageReport, evaluate_version, reports_dir
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from tests.eval_seed import write_registry


def _evaluate(tmp_path: Path, prompts: Path, key: str, **request: object) -> EvalStageReport:
    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse):  # a warehouse the pipeline made (reviewers' decisions are read from it too)
        pass
    progress: list[tuple[str, int, int]] = []
    report = evaluate_version(
        partial(open_warehouse, warehouse),
        warehouse,
        prompts,
        key,
        OrchestratedExtractor(None),
        EvalRequest(registry=write_registry(tmp_path), reports_dir=reports_dir(warehouse), **request),  # type: ignore[arg-type]
        lambda name, done, total: progress.append((name, done, total)),
    )
    if report.scored:
        assert progress and progress[-1][1] == progress[-1][2], "progress reaches the end of each dataset"
    return report


def _runs(tmp_path: Path) -> list[dict[str, object]]:
    with open_warehouse(tmp_path / "w.duckdb", read_only=True) as con:
        return rows_as_dicts(con, "SELECT dataset, schema_version, documents, report_path FROM eval_runs ORDER BY 1")


def test_a_version_is_scored_on_its_datasets_stored_and_reported(tmp_path: Path, prompts: Path) -> None:
    report = _evaluate(tmp_path, prompts, "pulse@v1", max_documents=3, sample_documents=2)
    assert [s.result.dataset for s in report.scored] == ["standups"]
    scored = report.scored[0]
    assert scored.result.documents == 3 and scored.result.document_limit == 3, "the slice, not the 4 records"
    recall = {f.field: f.recall for f in scored.result.fields}
    assert recall["decision"] == 1.0 and recall["risk"] == 1.0
    assert scored.html.parent == tmp_path / "eval_reports" and scored.html.name == "standups-pulse-v1.html"
    assert scored.html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert report.messages == [m for m in report.messages if "not_here" in m] and "does not exist" in report.messages[0]
    assert _runs(tmp_path) == [
        {"dataset": "standups", "schema_version": "pulse@v1", "documents": 3, "report_path": str(scored.html)}
    ]
    with open_warehouse(tmp_path / "w.duckdb", read_only=True) as con:
        stored = con.execute(
            "SELECT field, recall FROM eval_metrics WHERE dataset = 'standups' ORDER BY field"
        ).fetchall()
    assert ("decision", 1.0) in stored and ("risk", 1.0) in stored


def test_one_dataset_asked_for_is_the_only_one_scored(tmp_path: Path, prompts: Path) -> None:
    report = _evaluate(tmp_path, prompts, "pulse@v1", datasets=("not_here",))
    assert report.scored == [] and len(report.messages) == 1 and "not_here" in report.messages[0]
    assert _runs(tmp_path) == []


def test_a_version_without_a_prompt_file_is_skipped_with_its_reason(tmp_path: Path, prompts: Path) -> None:
    report = _evaluate(tmp_path, prompts, "receiptz@v1")
    assert report.scored == [] and _runs(tmp_path) == []
    assert len(report.messages) == 1 and "receipts" in report.messages[0]
    assert "no usable prompt file" in report.messages[0]


def test_the_scrubber_is_scored_without_a_prompt_file_and_its_reliability_drawn(tmp_path: Path, prompts: Path) -> None:
    report = _evaluate(tmp_path, prompts, "pii@v1")
    assert [s.result.dataset for s in report.scored] == ["pii"] and not report.messages
    scored = report.scored[0]
    assert {f.field: f.f1 for f in scored.result.fields}["EMAIL"] == 1.0
    assert scored.reliability_png is not None and scored.reliability_png.startswith(b"\x89PNG")
    assert scored.html.with_suffix(".png").read_bytes() == scored.reliability_png
    assert [(r["dataset"], r["documents"]) for r in _runs(tmp_path)] == [("pii", 1)]
