"""Span-level scoring of PII detections: per-kind precision, recall and F-beta against gold spans.

Used by the PII benchmark and by the eval of `pii@v1`, so both count the same way.

Matching rule: a predicted span matches a gold span of the same kind in the same document when
their overlap is at least `min_iou` of their union (intersection over union; 1.0 = identical
boundaries). Matching is one-to-one, best overlap first, so two predictions cut from one gold value
count as one hit and one false positive. Unmatched predictions are false positives, unmatched gold
spans false negatives. Kinds outside `kinds` are ignored on both sides.

Empty denominators follow the one convention of every eval score (`metrics.f_beta`): with no
prediction of a kind, precision is not defined (None); with no gold span of a kind, recall is None.
Supports (`gold`, `predicted`) travel with every score, so a
figure on a handful of spans is never mistaken for a strong one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from pydantic import BaseModel

from extraction_assets.lib.evaluation.metrics import f_beta

# Presidio's entity labels (its analyzer output and its evaluation data) -> the scrubber's kinds.
PRESIDIO_TO_KIND: dict[str, str] = {
    "CREDIT_CARD": "CREDIT_CARD",
    "IBAN_CODE": "IBAN",
    "US_SSN": "US_SSN",
    "EMAIL_ADDRESS": "EMAIL",
    "PHONE_NUMBER": "PHONE",
    "IP_ADDRESS": "IP_ADDRESS",
}
# The kinds both scrubbers claim to validate; the targets and the side-by-side comparison are on these.
VALIDATED_KINDS: tuple[str, ...] = tuple(PRESIDIO_TO_KIND.values())


class Span(NamedTuple):
    """A labelled half-open character range `[start, end)` of one document."""

    kind: str
    start: int
    end: int


class KindScore(BaseModel):
    """Counts and rates for one kind over a set of documents."""

    kind: str
    gold: int
    predicted: int
    true_positives: int
    precision: float | None  # None: nothing predicted (not defined, as in every eval score)
    recall: float | None  # None: nothing in the gold
    f_beta: float | None
    beta: float


def spans_from_labels(entities: Iterable[Mapping[str, Any]], mapping: Mapping[str, str]) -> list[Span]:
    """Labelled entities (`{type, start, end}`) as spans of our kinds; labels absent from `mapping` are left out."""
    return [Span(mapping[e["type"]], int(e["start"]), int(e["end"])) for e in entities if e.get("type") in mapping]


def _iou(a: Span, b: Span) -> float:
    inter = min(a.end, b.end) - max(a.start, b.start)
    if inter <= 0:
        return 0.0
    return inter / (max(a.end, b.end) - min(a.start, b.start))


def match_spans(gold: Sequence[Span], predicted: Sequence[Span], min_iou: float = 0.5) -> list[tuple[int, int]]:
    """One-to-one (gold index, predicted index) pairs of the same kind, best overlap first."""
    overlaps = ((_iou(g, p), gi, pi) for gi, g in enumerate(gold) for pi, p in enumerate(predicted) if g.kind == p.kind)
    candidates = sorted((-iou, gi, pi) for iou, gi, pi in overlaps if iou > 0 and iou >= min_iou)
    used_gold: set[int] = set()
    used_pred: set[int] = set()
    pairs: list[tuple[int, int]] = []
    for _, gi, pi in candidates:
        if gi in used_gold or pi in used_pred:
            continue
        used_gold.add(gi)
        used_pred.add(pi)
        pairs.append((gi, pi))
    return sorted(pairs)


def score_documents(
    documents: Iterable[tuple[Sequence[Span], Sequence[Span]]],
    kinds: Sequence[str] = VALIDATED_KINDS,
    beta: float = 2.0,
    min_iou: float = 0.5,
) -> dict[str, KindScore]:
    """Per-kind scores over `(gold spans, predicted spans)` pairs, one pair per document."""
    wanted = set(kinds)
    gold_n = dict.fromkeys(kinds, 0)
    pred_n = dict.fromkeys(kinds, 0)
    hits = dict.fromkeys(kinds, 0)
    for gold, predicted in documents:
        gold = [s for s in gold if s.kind in wanted]
        predicted = [s for s in predicted if s.kind in wanted]
        for span in gold:
            gold_n[span.kind] += 1
        for span in predicted:
            pred_n[span.kind] += 1
        for gi, _ in match_spans(gold, predicted, min_iou):
            hits[gold[gi].kind] += 1
    scores: dict[str, KindScore] = {}
    for kind in kinds:
        precision = hits[kind] / pred_n[kind] if pred_n[kind] else None
        recall = hits[kind] / gold_n[kind] if gold_n[kind] else None
        scores[kind] = KindScore(
            kind=kind,
            gold=gold_n[kind],
            predicted=pred_n[kind],
            true_positives=hits[kind],
            precision=precision,
            recall=recall,
            f_beta=f_beta(precision, recall, beta),
            beta=beta,
        )
    return scores
