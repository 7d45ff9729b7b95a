"""The numbers an evaluation reports: per-field counts and scores, calibration, rates and cost.

Pure arithmetic on counts and (confidence, correct) pairs, so every figure can be checked by hand.
A ratio with a zero denominator is None ("not defined"), never 0: an empty field is not a failing one.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

MICRO = "_micro"  # the row that pools every field's counts


def ratio(numerator: float, denominator: float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def f_beta(precision: float | None, recall: float | None, beta: float = 1.0) -> float | None:
    """Weighted harmonic mean; beta > 1 weighs recall higher (F2 for PII, where a miss leaks data).

    The one convention of every score here: undefined (None) when precision or recall is undefined,
    0.0 when both are zero.
    """
    if precision is None or recall is None:
        return None
    if precision == 0 and recall == 0:
        return 0.0
    b2 = beta * beta
    return (1 + b2) * precision * recall / (b2 * precision + recall)


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


class FieldCounts(BaseModel):
    """Matches for one field. `fp` is None where precision is not defined (gold that is not exhaustive)."""

    tp: int = 0
    fp: int | None = 0
    fn: int = 0

    def add(self, other: FieldCounts) -> None:
        self.tp += other.tp
        self.fn += other.fn
        self.fp = None if self.fp is None or other.fp is None else self.fp + other.fp


class FieldScore(BaseModel):
    field: str
    comparator: str
    tp: int
    fp: int | None
    fn: int
    support: int  # gold positives: tp + fn
    predicted: int | None  # predictions made: tp + fp
    precision: float | None
    recall: float | None
    f1: float | None
    f2: float | None

    @classmethod
    def from_counts(cls, field: str, comparator: str, counts: FieldCounts) -> FieldScore:
        precision = None if counts.fp is None else ratio(counts.tp, counts.tp + counts.fp)
        recall = ratio(counts.tp, counts.tp + counts.fn)
        return cls(
            field=field,
            comparator=comparator,
            tp=counts.tp,
            fp=counts.fp,
            fn=counts.fn,
            support=counts.tp + counts.fn,
            predicted=None if counts.fp is None else counts.tp + counts.fp,
            precision=precision,
            recall=recall,
            f1=_rounded(f_beta(precision, recall, 1.0)),
            f2=_rounded(f_beta(precision, recall, 2.0)),
        )


def field_scores(counts: dict[str, FieldCounts], comparators: dict[str, str]) -> list[FieldScore]:
    """One score per field in the given order, then the micro-average over all of them."""
    scores = [FieldScore.from_counts(name, comparators.get(name, ""), c) for name, c in counts.items()]
    pooled = FieldCounts()
    for c in counts.values():
        pooled.add(c)
    scores.append(FieldScore.from_counts(MICRO, "all fields pooled", pooled))
    return scores


class ReliabilityBin(BaseModel):
    low: float
    high: float
    count: int
    mean_confidence: float | None
    accuracy: float | None


class Calibration(BaseModel):
    """Expected calibration error over equal-width confidence bins, and the bins a reliability plot draws."""

    ece: float | None
    points: int
    bins: list[ReliabilityBin] = Field(default_factory=list)


def calibration(pairs: Sequence[tuple[float, bool]], n_bins: int = 10) -> Calibration:
    """ECE = sum over bins of (bin share) * |accuracy - mean confidence|; a confidence of 1.0 falls in the last bin."""
    grouped: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for confidence, correct in pairs:
        index = min(int(max(confidence, 0.0) * n_bins), n_bins - 1)
        grouped[index].append((confidence, correct))
    bins, ece = [], 0.0
    for index, members in enumerate(grouped):
        mean_conf = sum(c for c, _ in members) / len(members) if members else None
        accuracy = sum(ok for _, ok in members) / len(members) if members else None
        if mean_conf is not None and accuracy is not None:
            ece += len(members) / len(pairs) * abs(accuracy - mean_conf)
        bins.append(
            ReliabilityBin(
                low=round(index / n_bins, 4),
                high=round((index + 1) / n_bins, 4),
                count=len(members),
                mean_confidence=None if mean_conf is None else round(mean_conf, 4),
                accuracy=None if accuracy is None else round(accuracy, 4),
            )
        )
    return Calibration(ece=round(ece, 4) if pairs else None, points=len(pairs), bins=bins)


def percentile(values: Iterable[float], share: float) -> float | None:
    """Nearest-rank percentile (share in [0, 1]); None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(share * len(ordered)))
    return round(ordered[rank - 1], 2)


def mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 2) if values else None
