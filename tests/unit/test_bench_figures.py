"""Figures the benchmarks compute by themselves: gold spans by part of the record, the top bin of the model band."""

from __future__ import annotations

from evals.bench_agreement import _top_bin
from evals.bench_chunks import spans_by_part
from extraction_assets.lib.evaluation.metrics import calibration


def test_gold_spans_are_counted_by_the_part_of_the_record_they_belong_to() -> None:
    gold = {
        "items": [{"evidence": [{"turns": [1, 3], "start": 10, "end": 50}]}],
        "topics": [{"topic": "budget", "evidence": [{"start": 0, "end": 400}, {"start": 400, "end": 900}]}],
        "domain": "Product",
    }
    assert list(spans_by_part(gold)) == [("items", 10, 50), ("topics", 0, 400), ("topics", 400, 900)]


def test_the_top_bin_of_the_model_band_says_how_often_its_values_are_right() -> None:
    pairs = [(0.9, True), (0.9, True), (0.9, False), (0.9, True), (0.8, False)]
    assert _top_bin(calibration(pairs), 0.9) == "4 values, mean confidence 0.9, accuracy 0.75"
    assert _top_bin(calibration([(0.8, True)]), 0.9) == "no values"
    assert _top_bin(calibration([(1.0, True)]), 1.0) == "1 values, mean confidence 1.0, accuracy 1.0"
