"""Versions side by side: ordering, the previous version of the same schema, per-field deltas."""

from __future__ import annotations

from datetime import datetime

import pytest

from extraction_assets.lib.evaluation import MICRO, compare_versions, comparison_markdown, version_order


def _row(version: str, field: str, f1: float | None, recall: float, day: int, dataset: str = "sroie") -> dict:
    return {
        "dataset": dataset,
        "schema_version": version,
        "extractor_version": f"heuristic-{version}",
        "model": None,
        "run_at": datetime(2026, 11, day),
        "field": field,
        "support": 10,
        "precision": f1,
        "recall": recall,
        "f1": f1,
    }


def test_versions_sort_by_number_not_text() -> None:
    keys = ["receipt@v10", "receipt@v2", "receipt@v1"]
    assert sorted(keys, key=version_order) == ["receipt@v1", "receipt@v2", "receipt@v10"]


def test_deltas_against_the_previous_version() -> None:
    rows = [
        _row("receipt@v10", "total", 0.95, 0.95, 3),
        _row("receipt@v1", "total", 0.80, 0.80, 1),
        _row("receipt@v2", "total", 0.90, 0.90, 2),
        _row("receipt@v2", "date", 0.70, 0.70, 2),
        _row("receipt@v1", MICRO, 0.8, 0.8, 1),
    ]
    (comparison,) = compare_versions(rows)
    assert [c.schema_version for c in comparison.columns] == ["receipt@v1", "receipt@v2", "receipt@v10"]
    total = comparison.fields["total"]
    assert total[0] is not None and total[0].delta == {}
    assert total[1] is not None and total[1].delta["f1"] == pytest.approx(0.10)
    assert total[2] is not None and total[2].delta["f1"] == pytest.approx(0.05)
    date = comparison.fields["date"]
    assert date[0] is None and date[1] is not None and date[1].delta == {}  # nothing to compare with
    assert list(comparison.fields)[-1] == MICRO
    markdown = comparison_markdown([comparison])
    assert "ΔF1 +0.100" in markdown and "#### sroie" in markdown


def test_recall_only_cells_show_the_recall_delta() -> None:
    rows = [
        _row("pulse@v1", "decision", None, 0.2, 1, dataset="qmsum"),
        _row("pulse@v2", "decision", None, 0.5, 2, dataset="qmsum"),
    ]
    (comparison,) = compare_versions(rows)
    assert "ΔR +0.300" in comparison_markdown([comparison])
    assert "materialize eval_report" in comparison_markdown([])
