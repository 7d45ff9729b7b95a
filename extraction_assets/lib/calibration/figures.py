"""What a review queue does with wrong values, in four figures and a curve, from judged items.

Pure arithmetic over (field, probability or confidence, queued, correct), so the eval report, the fit and the
benchmark compute them the same way:
- error capture: wrong values sent to review / all wrong values;
- queue share: items sent to review / all items;
- precision of what is not queued: right values among the items left as drafts;
- expected calibration error per field, of the probability of being right (the confidence where there is none);
- the capture/queue curve: with items queued from the least likely right up, the share of wrong values caught
  against the share of items queued.
A ratio with nothing to count is None, never 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from extraction_assets.lib.calibration.model import VersionCalibration

__all__ = [
    "FIT_HEADERS",
    "CurvePoint",
    "FieldFigures",
    "Judged",
    "ReviewFigures",
    "curve",
    "describe",
    "ece",
    "fit_rows",
    "reliability",
    "review_figures",
]

N_BINS = 10
CURVE_POINTS = 50


@dataclass(frozen=True)
class Judged:
    """One stored item whose value the gold can judge."""

    field: str
    confidence: float
    probability: float | None  # the calibrated probability of being right, None where the version has none
    queued: bool  # needs_review
    correct: bool

    @property
    def certainty(self) -> float:
        """What the item states about being right: its probability, else its confidence."""
        return self.confidence if self.probability is None else self.probability


class Bin(BaseModel):
    low: float
    high: float
    count: int
    mean_certainty: float | None
    accuracy: float | None


class FieldFigures(BaseModel):
    field: str
    items: int
    wrong: int
    queued: int
    queued_wrong: int
    error_capture: float | None
    queue_share: float | None
    precision_unqueued: float | None
    ece: float | None
    calibrated: bool  # the ECE is of a probability (else of the band confidence)
    bins: list[Bin] = Field(default_factory=list)


class CurvePoint(BaseModel):
    queue_share: float
    error_capture: float
    threshold: float  # items under this certainty are queued


class ReviewFigures(BaseModel):
    """The figures over all judged items of a version, per field, and the curve."""

    items: int
    wrong: int
    queued: int
    queued_wrong: int
    error_capture: float | None
    queue_share: float | None
    precision_unqueued: float | None
    ece: float | None
    fields: list[FieldFigures] = Field(default_factory=list)
    curve: list[CurvePoint] = Field(default_factory=list)


def _ratio(numerator: int | float, denominator: int | float) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def reliability(items: Sequence[Judged], n_bins: int = N_BINS) -> list[Bin]:
    grouped: list[list[Judged]] = [[] for _ in range(n_bins)]
    for item in items:
        grouped[min(int(max(item.certainty, 0.0) * n_bins), n_bins - 1)].append(item)
    return [
        Bin(
            low=round(i / n_bins, 4),
            high=round((i + 1) / n_bins, 4),
            count=len(members),
            mean_certainty=round(sum(m.certainty for m in members) / len(members), 4) if members else None,
            accuracy=round(sum(m.correct for m in members) / len(members), 4) if members else None,
        )
        for i, members in enumerate(grouped)
    ]


def ece(items: Sequence[Judged], n_bins: int = N_BINS) -> float | None:
    """Expected calibration error: sum over equal-width bins of (bin share) x |accuracy - mean certainty|."""
    if not items:
        return None
    total = sum(
        b.count / len(items) * abs((b.accuracy or 0.0) - (b.mean_certainty or 0.0))
        for b in reliability(items, n_bins)
        if b.count
    )
    return round(total, 4)


def curve(items: Sequence[Judged], points: int = CURVE_POINTS) -> list[CurvePoint]:
    """Queue the least likely right first: at each distinct certainty, the share queued and of wrong values caught."""
    wrong = sum(not i.correct for i in items)
    if not items:
        return []
    ordered = sorted(items, key=lambda i: i.certainty)
    found: list[CurvePoint] = [CurvePoint(queue_share=0.0, error_capture=0.0, threshold=0.0)]
    caught = 0
    for n, item in enumerate(ordered, start=1):
        caught += not item.correct
        if n < len(ordered) and ordered[n].certainty == item.certainty:
            continue  # a threshold cannot split equal certainties
        found.append(
            CurvePoint(
                queue_share=round(n / len(ordered), 4),
                error_capture=round(caught / wrong, 4) if wrong else 1.0,
                threshold=round(ordered[n].certainty if n < len(ordered) else 1.0, 4),
            )
        )
    if len(found) <= points:
        return found
    step = (len(found) - 1) / (points - 1)
    return [found[round(k * step)] for k in range(points)]


def _field_figures(name: str, items: Sequence[Judged]) -> FieldFigures:
    wrong = sum(not i.correct for i in items)
    queued = [i for i in items if i.queued]
    kept = [i for i in items if not i.queued]
    return FieldFigures(
        field=name,
        items=len(items),
        wrong=wrong,
        queued=len(queued),
        queued_wrong=sum(not i.correct for i in queued),
        error_capture=_ratio(sum(not i.correct for i in queued), wrong),
        queue_share=_ratio(len(queued), len(items)),
        precision_unqueued=_ratio(sum(i.correct for i in kept), len(kept)),
        ece=ece(items),
        calibrated=bool(items) and all(i.probability is not None for i in items),
        bins=reliability(items),
    )


def review_figures(items: Sequence[Judged]) -> ReviewFigures:
    by_field: dict[str, list[Judged]] = defaultdict(list)
    for item in items:
        by_field[item.field].append(item)
    pooled = _field_figures("", items)
    return ReviewFigures(
        items=pooled.items,
        wrong=pooled.wrong,
        queued=pooled.queued,
        queued_wrong=pooled.queued_wrong,
        error_capture=pooled.error_capture,
        queue_share=pooled.queue_share,
        precision_unqueued=pooled.precision_unqueued,
        ece=pooled.ece,
        fields=[_field_figures(name, members) for name, members in by_field.items()],
        curve=curve(items),
    )


FIT_HEADERS = ("measured", "field", "items", "wrong", "error capture", "queue share", "precision unqueued", "ECE")
_FIT_VARIANTS = (
    ("cross_validated", "cross-validated"),
    ("transferred", "fitted on the other files"),
    ("in_sample", "in sample"),
    ("today", "without calibration"),
)


def _cell(value: float | int | None) -> str:
    return "n/a" if value is None else str(value) if isinstance(value, int) else f"{value:.3f}"


def fit_rows(calibration: VersionCalibration) -> list[list[str]]:
    """A calibration file's figures on its labelled data (every file pooled), per field and for all fields: the
    honest cross-validated estimate first, then each file scored by a fit on the other files alone, then in sample,
    then the version without its calibration."""
    rows: list[list[str]] = []
    keys = ("items", "wrong", "error_capture", "queue_share", "precision_unqueued", "ece")
    for variant, label in _FIT_VARIANTS:
        pooled = calibration.figures.get(variant, {}).get("all")
        if not pooled:
            continue
        for name, found in pooled.get("fields", {}).items():
            rows.append([label, name, *(_cell(found.get(k)) for k in keys)])
        rows.append([label, "all fields", *(_cell(pooled.get(k)) for k in keys)])
    return rows


def describe(calibration: VersionCalibration | None) -> str:
    """One line: whether a version's confidence is a calibrated probability, and its threshold, or why not."""
    if calibration is None:
        return "not calibrated: no calibration file (confidence is the pack's rule constants)"
    if calibration.status != "calibrated":
        return f"not calibrated: {calibration.reason}"
    cost = calibration.review.describe() if calibration.review else "no cost"
    fitted = ", ".join(d["file"] for d in calibration.provenance.data) if calibration.provenance else "?"
    return f"calibrated: items under probability {calibration.threshold:.3f} are queued ({cost}; fitted on {fitted})"
