"""Evaluation runs in the warehouse: stored with their metrics, replaced when stored again, read back."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from extraction_assets.lib.evaluation import (
    MICRO,
    EvalResult,
    FieldCounts,
    WarehouseModelCache,
    calibration,
    field_scores,
    latest_metrics,
    micro_history,
    store_eval,
)
from extraction_assets.lib.warehouse import open_warehouse
from tests.one_row import one_row


def _result(version: str, day: int, tp: int) -> EvalResult:
    return EvalResult(
        dataset="sroie",
        schema_version=version,
        extractor="heuristic-receipt-v2",
        model=None,
        mode="fields",
        source="dev.jsonl",
        run_at=datetime(2026, 11, day),
        documents=4,
        fields=field_scores({"total": FieldCounts(tp=tp, fp=4 - tp, fn=4 - tp)}, {"total": "amount"}),
        calibration=calibration([(0.7, True)]),
        grounding_rate=1.0,
    )


def test_runs_are_stored_keyed_and_replaced_not_duplicated(tmp_path: Path) -> None:
    with open_warehouse(tmp_path / "w.duckdb") as con:
        first = store_eval(con, _result("receipt@v1", 1, 2), report_path="r.html")
        assert store_eval(con, _result("receipt@v1", 1, 2)) == first  # same run again: replaced
        store_eval(con, _result("receipt@v1", 2, 3))  # a later run of the same version
        store_eval(con, _result("receipt@v2", 3, 4))
        runs = one_row(con.execute("SELECT count(*) FROM eval_runs"))[0]
        metrics = one_row(con.execute("SELECT count(*) FROM eval_metrics"))[0]
        row = con.execute("SELECT grounding_rate, documents, ece FROM eval_runs WHERE run_id = ?", [first]).fetchone()
        latest = latest_metrics(con)
        history = micro_history(con)
    assert runs == 3 and metrics == 6  # one field plus the micro row per run
    assert row == (1.0, 4, 0.3)
    totals = {(r["schema_version"], r["field"]): r["tp"] for r in latest}
    assert totals == {
        ("receipt@v1", "total"): 3,
        ("receipt@v1", MICRO): 3,
        ("receipt@v2", "total"): 4,
        ("receipt@v2", MICRO): 4,
    }
    assert [(h["schema_version"], h["f1"]) for h in history] == [
        ("receipt@v1", 0.5),
        ("receipt@v1", 0.75),
        ("receipt@v2", 1.0),
    ]


def test_model_answers_round_trip_through_the_cache_table(tmp_path: Path) -> None:
    cache = WarehouseModelCache(tmp_path / "w.duckdb")
    entry = {
        "request_hash": "h1",
        "model": "m",
        "mode": "json",
        "request": {"q": 1},
        "response": {"a": 2},
        "doc_id": "d1",
    }
    cache.store([entry])
    cache.store([])
    assert cache.load("m", ["d1"]) == {"h1": {"request_hash": "h1", "response": {"a": 2}}}
    assert cache.load("other-model", ["d1"]) == {}
    assert cache.load("m", ["d2"]) == {}


def test_a_full_run_is_the_versions_score_and_a_slice_says_it_is_one(tmp_path: Path) -> None:
    from extraction_assets.lib.evaluation import compare_versions

    full = _result("receipt@v1", 1, 2)
    sliced = _result("receipt@v1", 2, 4).model_copy(update={"document_limit": 1, "documents": 1})
    with open_warehouse(tmp_path / "w.duckdb") as con:
        store_eval(con, full)
        store_eval(con, sliced)  # later, and better, but only the first record
        rows = latest_metrics(con)
        (comparison,) = compare_versions(rows)
        assert [c.label for c in comparison.columns] == ["receipt@v1 (heuristic-receipt-v2; 4 docs)"]
        cell = comparison.fields["total"][0]
        assert cell is not None and cell.f1 == full.fields[0].f1  # not the slice's
        con.execute("DELETE FROM eval_runs WHERE document_limit IS NULL")
        (only_slice,) = compare_versions(latest_metrics(con))
        assert only_slice.columns[0].label == "receipt@v1 (heuristic-receipt-v2; SLICE of 1 docs)"
