"""Figures the benchmarks compute by themselves: gold spans by part of the record, the top bin of the model band."""

from __future__ import annotations

from evals.bench_agreement import _top_bin
from evals.bench_chunks import evidence_targets
from extraction_assets.lib.evaluation.metrics import calibration


def test_what_must_lie_whole_in_a_chunk_is_a_cuad_span_or_a_qmsum_turn_inside_a_gold_span() -> None:
    gold = {
        "items": [{"evidence": [{"turns": [1, 2], "start": 10, "end": 50}]}],
        "topics": [{"topic": "budget", "evidence": [{"start": 0, "end": 400}]}],
        "domain": "Product",
    }
    turns = [(0, 9), (10, 30), (31, 50), (51, 399), (401, 500)]
    assert evidence_targets("qmsum_meetings", gold, turns) == {(0, 9), (10, 30), (31, 50), (51, 399)}
    assert evidence_targets("cuad", gold, turns) == {(10, 50), (0, 400)}


def test_the_top_bin_of_the_model_band_says_how_often_its_values_are_right() -> None:
    pairs = [(0.9, True), (0.9, True), (0.9, False), (0.9, True), (0.8, False)]
    assert _top_bin(calibration(pairs), 0.9) == "4 values, mean confidence 0.9, accuracy 0.75"
    assert _top_bin(calibration([(0.8, True)]), 0.9) == "no values"
    assert _top_bin(calibration([(1.0, True)]), 1.0) == "1 values, mean confidence 1.0, accuracy 1.0"
