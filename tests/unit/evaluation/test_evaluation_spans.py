"""Span-level scoring: one-to-one matching by overlap, per-kind counts, F-beta."""

from __future__ import annotations

import pytest

from extraction_assets.lib.evaluation import (
    PRESIDIO_TO_KIND,
    VALIDATED_KINDS,
    Span,
    f_beta,
    match_spans,
    score_documents,
    spans_from_labels,
)


def test_labels_map_to_our_kinds_and_others_are_left_out() -> None:
    entities = [
        {"type": "PERSON", "start": 0, "end": 4},
        {"type": "EMAIL_ADDRESS", "start": 10, "end": 20},
        {"type": "IBAN_CODE", "start": 30, "end": 52},
    ]
    assert spans_from_labels(entities, PRESIDIO_TO_KIND) == [Span("EMAIL", 10, 20), Span("IBAN", 30, 52)]
    assert set(VALIDATED_KINDS) == set(PRESIDIO_TO_KIND.values())


def test_matching_is_one_to_one_best_overlap_first() -> None:
    gold = [Span("PHONE", 0, 10)]
    # two fragments of one value: the better one matches, the other is a false positive
    predicted = [Span("PHONE", 0, 4), Span("PHONE", 2, 10)]
    assert match_spans(gold, predicted, min_iou=0.3) == [(0, 1)]


def test_kinds_must_agree_and_overlap_must_reach_the_threshold() -> None:
    gold = [Span("PHONE", 0, 10)]
    assert match_spans(gold, [Span("CREDIT_CARD", 0, 10)]) == []
    assert match_spans(gold, [Span("PHONE", 0, 4)], min_iou=0.5) == []  # 4/10 overlap
    assert match_spans(gold, [Span("PHONE", 0, 6)], min_iou=0.5) == [(0, 0)]
    assert match_spans(gold, [Span("PHONE", 0, 9)], min_iou=1.0) == []
    assert match_spans(gold, [Span("PHONE", 10, 20)], min_iou=0.0) == []  # touching is not overlapping


def test_scores_count_hits_misses_and_spares_per_kind() -> None:
    documents = [
        ([Span("EMAIL", 0, 5), Span("PHONE", 10, 20)], [Span("EMAIL", 0, 5)]),  # phone missed
        ([Span("EMAIL", 0, 5)], [Span("EMAIL", 0, 5), Span("EMAIL", 8, 12)]),  # one spare e-mail
        ([], [Span("PERSON", 0, 3)]),  # a kind outside the scored set is ignored
    ]
    scores = score_documents(documents, kinds=("EMAIL", "PHONE", "IBAN"))
    email, phone, iban = scores["EMAIL"], scores["PHONE"], scores["IBAN"]
    assert (email.gold, email.predicted, email.true_positives) == (2, 3, 2)
    assert email.precision == pytest.approx(2 / 3) and email.recall == 1.0
    assert (phone.gold, phone.predicted, phone.precision, phone.recall, phone.f_beta) == (1, 0, None, 0.0, None)
    assert (iban.gold, iban.predicted, iban.precision, iban.recall) == (0, 0, None, None)
    assert email.f_beta == pytest.approx(f_beta(2 / 3, 1.0, 2.0))


def test_f_beta_weighs_recall_when_beta_is_above_one() -> None:
    assert f_beta(1.0, 1.0, 2.0) == 1.0
    assert f_beta(0.0, 0.0, 2.0) == 0.0
    assert f_beta(0.5, 1.0, 2.0) == pytest.approx(5 * 0.5 / (4 * 0.5 + 1.0))
    recall_heavy, precision_heavy = f_beta(0.5, 1.0, 2.0), f_beta(1.0, 0.5, 2.0)
    assert recall_heavy is not None and precision_heavy is not None and recall_heavy > precision_heavy
    assert f_beta(0.5, 1.0, 1.0) == pytest.approx(f_beta(1.0, 0.5, 1.0))
