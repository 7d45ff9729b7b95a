"""Metric arithmetic on hand-made counts whose answers are worked out by hand."""

from __future__ import annotations

import pytest

from extraction_assets.lib.evaluation import (
    MICRO,
    FieldCounts,
    FieldScore,
    calibration,
    f_beta,
    field_scores,
    mean,
    percentile,
    ratio,
)


def test_precision_recall_f1_from_counts() -> None:
    # 6 right, 2 wrong predictions, 4 gold values missed: P = 6/8, R = 6/10, F1 = 2PR/(P+R)
    score = FieldScore.from_counts("total", "amount", FieldCounts(tp=6, fp=2, fn=4))
    assert score.precision == 0.75
    assert score.recall == 0.6
    assert score.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35, abs=1e-4)
    assert score.f2 == pytest.approx(5 * 0.75 * 0.6 / (4 * 0.75 + 0.6), abs=1e-4)
    assert (score.support, score.predicted) == (10, 8)


def test_empty_denominators_are_not_defined_rather_than_zero() -> None:
    nothing = FieldScore.from_counts("date", "date", FieldCounts())
    assert (nothing.precision, nothing.recall, nothing.f1) == (None, None, None)
    recall_only = FieldScore.from_counts("decision", "span_overlap", FieldCounts(tp=1, fp=None, fn=3))
    assert recall_only.precision is None and recall_only.predicted is None
    assert recall_only.recall == 0.25
    assert recall_only.f1 is None


def test_f_beta_edges() -> None:
    assert f_beta(0.0, 0.0) == 0.0
    assert f_beta(None, 0.5) is None
    assert f_beta(1.0, 0.5, beta=2.0) == pytest.approx(5 * 0.5 / (4 + 0.5), abs=1e-4)
    assert ratio(1, 3) == 0.3333
    assert ratio(1, 0) is None


def test_micro_average_pools_the_counts() -> None:
    scores = field_scores(
        {"a": FieldCounts(tp=1, fp=1, fn=0), "b": FieldCounts(tp=3, fp=0, fn=1)}, {"a": "exact", "b": "date"}
    )
    assert [s.field for s in scores] == ["a", "b", MICRO]
    micro = scores[-1]
    assert (micro.tp, micro.fp, micro.fn) == (4, 1, 1)
    assert micro.precision == 0.8 and micro.recall == 0.8
    # pooling with a recall-only field leaves precision undefined
    pooled = field_scores({"a": FieldCounts(tp=1, fp=0, fn=0), "b": FieldCounts(tp=1, fp=None, fn=1)}, {})
    assert pooled[-1].precision is None and pooled[-1].recall == pytest.approx(0.6667, abs=1e-4)


def test_expected_calibration_error_by_hand() -> None:
    # bin [0.6, 0.7): confidences 0.6 and 0.6, one right -> |0.5 - 0.6| = 0.1, weight 2/4
    # bin [0.9, 1.0]: confidences 0.9 and 1.0, both right -> |1.0 - 0.95| = 0.05, weight 2/4
    result = calibration([(0.6, True), (0.6, False), (0.9, True), (1.0, True)])
    assert result.ece == pytest.approx(0.5 * 0.1 + 0.5 * 0.05, abs=1e-4)
    assert result.points == 4
    filled = [b for b in result.bins if b.count]
    assert [(b.low, b.count, b.accuracy) for b in filled] == [(0.6, 2, 0.5), (0.9, 2, 1.0)]
    assert len(result.bins) == 10
    assert calibration([]).ece is None


def test_perfect_calibration_has_zero_error() -> None:
    pairs = [(0.75, True)] * 3 + [(0.75, False)]
    assert calibration(pairs).ece == 0.0


def test_percentile_and_mean() -> None:
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 0.95) == 40.0
    assert percentile(values, 0.5) == 20.0
    assert percentile([], 0.95) is None
    assert mean(values) == 25.0
    assert mean([]) is None
