"""Fitting calibrations from labelled items (scikit-learn, the optional `calibrate` extra; never needed at run time).

`fit_field` fits one field from (features, correct) pairs: an L2-regularized logistic regression on standardized
features (few features, one weight each, so the model is monotone in each and cannot memorize a document).
`fit_version` fits every field of a schema version that has enough labelled items, chooses the review threshold
from the cost of an error, and measures what it does twice: in sample, and by k-fold cross-validation by document
(each fold scored by models and a threshold fitted without it), the honest estimate for documents never seen; and,
with more than one labelled file, each file scored by models and a threshold fitted on the other files alone (a
check that the cross-validated figures do not flatter documents that resemble their neighbours in the same file).
Fields a pack weighs alike (`Pools`: contract@v1's two parties, its three dates) are fitted as one model with an
indicator per field, folded into each field's intercept (`fit_pool`): a field with few wrong values borrows the weights
of its kin instead of getting its base rate, and each field's stored model is still one logistic model of its own.
Folds come from a hash of the document id, so a refit on the same data gives the same file. Which fields are
calibrated is decided once, on all labelled items (`why_not`); each fold and each file's neighbours then fit those
fields on what they hold (a field's base rate where too few to weigh its features), so a field just large enough to
ship is measured as shipped instead of as uncalibrated in folds that hold four fifths of its items.
"""

from __future__ import annotations

import hashlib
import sys
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from extraction_assets.lib.calibration.figures import Judged, ReviewFigures, review_figures
from extraction_assets.lib.calibration.model import FieldCalibration, ReviewCost, probability_of

__all__ = [
    "DEFAULT_C",
    "FOLDS",
    "MIN_EACH",
    "MIN_ITEMS",
    "Example",
    "FittedVersion",
    "Pools",
    "ThresholdError",
    "choose_threshold",
    "fit_field",
    "fit_pool",
    "fit_version",
    "fold_of",
]

DEFAULT_C = 0.5  # inverse L2 strength on standardized features
FOLDS = 5
MIN_ITEMS = 30  # labelled items a field needs to be calibrated
MIN_EACH = 5  # ... and right and wrong ones, at least this many each, to weigh its features (else its base rate)
Pools = Sequence[Sequence[str]]  # groups of fields fitted as one model (see `fit_pool`)
DIGITS = 6  # stored parameters are rounded: a refit on another machine gives the same file


@dataclass(frozen=True)
class Example:
    """One labelled item: the document it came from, its field, features and verdict, and how the version without
    a calibration treats it."""

    doc: str
    file: str
    field: str
    features: Mapping[str, float]
    correct: bool
    confidence: float  # the pack's own confidence (today's)
    legacy_queued: bool  # queued by today's rules
    other_reasons: bool  # queued for a reason a probability does not change (weak evidence, a type violation ...)


def fold_of(doc: str, folds: int = FOLDS) -> int:
    return int(hashlib.sha256(doc.encode("utf-8")).hexdigest()[:12], 16) % folds


class ThresholdError(ValueError):
    """The cost asked for cannot be met on the labelled data; the message says what can."""


def why_not(examples: Sequence[Example]) -> str | None:
    """Why a field's labelled items are too few to calibrate it, or None when they suffice."""
    if len(examples) < MIN_ITEMS:
        return f"{len(examples)} labelled items (at least {MIN_ITEMS} needed)"
    return None


@contextmanager
def _pandas_mark_lifted() -> Iterator[None]:
    """A process that opened a warehouse may mark pandas absent with a None entry in `sys.modules` (see
    `warehouse.opening`); scikit-learn reads that entry as a module and fails. The mark is lifted while it fits."""
    marked = "pandas" in sys.modules and sys.modules["pandas"] is None
    if marked:
        del sys.modules["pandas"]
    try:
        yield
    finally:
        if marked and "pandas" not in sys.modules:
            sys.modules["pandas"] = None  # type: ignore[assignment]


def fit_field(field: str, rows: Sequence[tuple[Mapping[str, float], bool]], c: float = DEFAULT_C) -> FieldCalibration:
    """A field's calibration from (features, correct) pairs. Features constant over the rows carry no information
    and are left out; a feature absent from a row counts 0. With fewer than MIN_EACH right or wrong rows the
    features cannot be weighed: the field gets its base rate (add-one smoothed), the same for every value."""
    # scikit-learn (the calibrate extra) loads with a fit: applying a calibration needs none of it
    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_limits  # scikit-learn's own dependency

    names = sorted({name for features, _ in rows for name in features})
    x = np.array([[float(features.get(n, 0.0)) for n in names] for features, _ in rows], dtype=float)
    y = np.array([bool(ok) for _, ok in rows])
    if not len(y):
        raise ValueError(f"{field}: no labelled rows")
    wrong = int((~y).sum())
    spread = x.std(axis=0) if len(names) else np.zeros(0)
    weighable = min(wrong, len(y) - wrong) >= MIN_EACH
    kept = [i for i, s in enumerate(spread) if s > 1e-9] if weighable else []
    x = x[:, kept]
    center = x.mean(axis=0)
    scale = x.std(axis=0)
    standard = (x - center) / scale if kept else np.zeros((len(rows), 0))
    model = LogisticRegression(C=c, max_iter=1000)
    if kept:
        # one BLAS thread: the problem is a few features by at most thousands of rows, where a second thread only
        # spins (a contract refit cost 12.5 CPU-seconds with the default threads on 2 cores, 1.7 with one)
        with warnings.catch_warnings(), _pandas_mark_lifted(), threadpool_limits(limits=1):
            warnings.simplefilter("ignore")
            model.fit(standard, y)
        coef, intercept = model.coef_[0].tolist(), float(model.intercept_[0])
    else:  # nothing to weigh: the field's base rate
        rate = (y.sum() + 1) / (len(y) + 2)
        coef, intercept = [], float(np.log(rate / (1 - rate)))
    return FieldCalibration(
        field=field,
        features=[names[i] for i in kept],
        center=[round(float(v), DIGITS) for v in center],
        scale=[round(float(v), DIGITS) for v in scale],
        coef=[round(float(v), DIGITS) for v in coef],
        intercept=round(intercept, DIGITS),
        items=len(rows),
        wrong=int((~y).sum()),
    )


def _indicator(field: str) -> str:
    return f"field={field}"


def fit_pool(
    members: Mapping[str, Sequence[tuple[Mapping[str, float], bool]]], c: float = DEFAULT_C
) -> dict[str, FieldCalibration]:
    """One model fitted on the rows of several fields, each row also holding an indicator of its field; each field
    gets that model with its indicators folded into its intercept (they are constant within the field), so its
    stored model scores its values exactly as the pooled one does. Fields the pack weighs alike (two parties, three
    dates) learn from each other's wrong values: a field with too few to weigh its features alone is no longer left
    at its base rate."""
    rows = [
        ({**features, _indicator(name): 1.0}, ok) for name, found in sorted(members.items()) for features, ok in found
    ]
    pooled = fit_field("+".join(sorted(members)), rows, c)
    kept = [i for i, n in enumerate(pooled.features) if n not in {_indicator(m) for m in members}]
    fitted = {}
    for name, found in sorted(members.items()):
        shift = sum(
            w * (float(n == _indicator(name)) - center) / scale
            for n, center, scale, w in zip(pooled.features, pooled.center, pooled.scale, pooled.coef, strict=True)
            if n.startswith("field=")
        )
        fitted[name] = FieldCalibration(
            field=name,
            features=[pooled.features[i] for i in kept],
            center=[pooled.center[i] for i in kept],
            scale=[pooled.scale[i] for i in kept],
            coef=[pooled.coef[i] for i in kept],
            intercept=round(pooled.intercept + shift, DIGITS),
            items=len(found),
            wrong=sum(not ok for _, ok in found),
        )
    return fitted


def _by_field(examples: Sequence[Example]) -> dict[str, list[Example]]:
    by_field: dict[str, list[Example]] = defaultdict(list)
    for e in examples:
        by_field[e.field].append(e)
    return by_field


def _calibrated(examples: Sequence[Example]) -> frozenset[str]:
    """The fields with enough labelled items to be calibrated."""
    return frozenset(name for name, members in _by_field(examples).items() if why_not(members) is None)


def _fit_fields(
    examples: Sequence[Example], c: float, fields: frozenset[str], pools: Pools = ()
) -> dict[str, FieldCalibration]:
    """A model for each of `fields` that `examples` hold (decided on all labelled items, see `_calibrated`); the
    fields of a pool that two or more of them hold are fitted together (`fit_pool`)."""
    rows = {
        name: [(e.features, e.correct) for e in members]
        for name, members in sorted(_by_field(examples).items())
        if name in fields
    }
    models: dict[str, FieldCalibration] = {}
    for pool in pools:
        members = {name: rows[name] for name in pool if name in rows}
        if len(members) > 1:
            models |= fit_pool(members, c)
    return models | {name: fit_field(name, found, c) for name, found in rows.items() if name not in models}


def _probabilities(models: Mapping[str, FieldCalibration], examples: Sequence[Example]) -> list[float | None]:
    return [probability_of(models[e.field].score(e.features)) if e.field in models else None for e in examples]


def _out_of_fold(
    examples: Sequence[Example], folds: int, c: float, fields: frozenset[str], pools: Pools = ()
) -> list[float | None]:
    """Each example's probability from models fitted on the other folds (a field not in `fields`: None)."""
    found: list[float | None] = [None] * len(examples)
    for k in range(folds):
        train = [e for e in examples if fold_of(e.doc, folds) != k]
        held = [i for i, e in enumerate(examples) if fold_of(e.doc, folds) == k]
        models = _fit_fields(train, c, fields, pools)
        for i, p in zip(held, _probabilities(models, [examples[i] for i in held]), strict=True):
            found[i] = p
    return found


def choose_threshold(probabilities: Sequence[float | None], examples: Sequence[Example], cost: ReviewCost) -> float:
    """The probability under which items go to review, from the capture/queue curve of the calibrated items.

    `max_error_rate`: the lowest threshold whose drafts (items not queued) hold at most that share of wrong values;
    `queue_share`: the highest threshold that queues at most that share. Items queued for other reasons count as
    queued whatever the threshold."""
    pairs = [(p, e) for p, e in zip(probabilities, examples, strict=True) if p is not None]
    candidates = sorted({0.0, *(p for p, _ in pairs)})
    best = 0.0
    lowest: tuple[float, float] | None = None  # (error rate of the drafts, queue share) at its best
    for t in candidates:
        queued = sum(1 for p, e in pairs if e.other_reasons or p < t)
        kept = [e for p, e in pairs if not (e.other_reasons or p < t)]
        if cost.queue_share is not None:
            if queued > cost.queue_share * len(pairs):
                return best
            best = t
            continue
        if not kept:
            break
        rate = sum(not e.correct for e in kept) / len(kept)
        if rate <= cost.max_error_rate:  # type: ignore[operator]
            return t
        if lowest is None or rate < lowest[0]:
            lowest = (rate, queued / len(pairs))
    if cost.queue_share is not None:
        return best
    found = "no drafts at all" if lowest is None else f"{lowest[0]:.3f} (queueing {lowest[1]:.0%} of items)"
    raise ThresholdError(
        f"max_error_rate {cost.max_error_rate:g} cannot be met on the labelled data: the lowest error rate among "
        f"drafts is {found}; ask for a larger max_error_rate or a queue_share"
    )


def _judged(
    examples: Sequence[Example], probabilities: Sequence[float | None], threshold: float, band: tuple[float, float]
) -> list[Judged]:
    low, high = band
    return [
        Judged(
            field=e.field,
            confidence=e.confidence if p is None else round(low + (high - low) * p, 4),
            probability=p,
            queued=e.legacy_queued if p is None else (e.other_reasons or p < threshold),
            correct=e.correct,
        )
        for e, p in zip(examples, probabilities, strict=True)
    ]


@dataclass
class FittedVersion:
    fields: dict[str, FieldCalibration]
    not_calibrated: dict[str, str]
    threshold: float
    # {"in_sample" | "cross_validated" | "transferred" | "today": {file | "all": ...}}
    figures: dict[str, dict[str, ReviewFigures]]


def _by_file(examples: Sequence[Example], judged: Sequence[Judged]) -> dict[str, ReviewFigures]:
    files = sorted({e.file for e in examples})
    figures = {"all": review_figures(judged)}
    for name in files:
        figures[name] = review_figures([j for e, j in zip(examples, judged, strict=True) if e.file == name])
    return figures


def _deployed(
    train: Sequence[Example], cost: ReviewCost, folds: int, c: float, fields: frozenset[str], pools: Pools = ()
) -> tuple[dict[str, FieldCalibration], float]:
    """What `fit_version` ships: models on all of `train`, the threshold from their out-of-fold probabilities."""
    probabilities = _out_of_fold(train, folds, c, fields, pools)
    return _fit_fields(train, c, fields, pools), choose_threshold(probabilities, train, cost)


def _transferred(
    examples: Sequence[Example],
    cost: ReviewCost,
    band: tuple[float, float],
    folds: int,
    c: float,
    fields: frozenset[str],
    pools: Pools = (),
) -> dict[str, ReviewFigures]:
    """Each labelled file scored by models and a threshold fitted on the other files alone; empty with one file. A
    cost the other files cannot meet leaves that file out (its figures would be of no shipped threshold)."""
    files = sorted({e.file for e in examples})
    if len(files) < 2:
        return {}
    judged: list[Judged] = []
    held: list[Example] = []
    for name in files:
        train = [e for e in examples if e.file != name]
        test = [e for e in examples if e.file == name]
        try:
            models, threshold = _deployed(train, cost, folds, c, fields, pools)
        except ThresholdError:
            continue
        judged += _judged(test, _probabilities(models, test), threshold, band)
        held += test
    return _by_file(held, judged) if held else {}


def fit_version(
    examples: Sequence[Example],
    cost: ReviewCost,
    band: tuple[float, float],
    fields: Sequence[str],
    folds: int = FOLDS,
    c: float = DEFAULT_C,
    on_step: Callable[[str], None] = lambda _step: None,
    pools: Pools = (),
) -> FittedVersion:
    """Every field of a version with enough labelled items, the threshold for `cost`, and the figures: in sample (the
    shipped models and threshold on all items), cross-validated (fold k scored by models and threshold fitted without
    it), transferred (each file scored by models and threshold fitted on the other files) and today's (the version
    without calibration)."""
    on_step("fitting the fields")
    not_calibrated: dict[str, str] = {}
    grouped = _by_field(examples)
    for name in fields:
        members = grouped.get(name, [])
        why = why_not(members) if members else "no labelled items"
        if why is not None:
            not_calibrated[name] = why
    today = [
        Judged(field=e.field, confidence=e.confidence, probability=None, queued=e.legacy_queued, correct=e.correct)
        for e in examples
    ]
    if len(not_calibrated) == len(fields):  # nothing to fit: the version keeps today's rules
        return FittedVersion(fields={}, not_calibrated=not_calibrated, threshold=0.0, figures={})
    calibrated = _calibrated(examples)
    models, threshold = _deployed(examples, cost, folds, c, calibrated, pools)
    on_step("cross-validating")
    outer: list[float | None] = [None] * len(examples)
    outer_threshold: list[float] = [threshold] * len(examples)
    for k in range(folds):
        train = [e for e in examples if fold_of(e.doc, folds) != k]
        held = [i for i, e in enumerate(examples) if fold_of(e.doc, folds) == k]
        fold_models, fold_threshold = _deployed(train, cost, folds, c, calibrated, pools)
        for i, p in zip(held, _probabilities(fold_models, [examples[i] for i in held]), strict=True):
            outer[i], outer_threshold[i] = p, fold_threshold
    cross = [
        Judged(
            field=j.field,
            confidence=j.confidence,
            probability=j.probability,
            queued=examples[i].legacy_queued
            if j.probability is None
            else examples[i].other_reasons or j.probability < outer_threshold[i],
            correct=j.correct,
        )
        for i, j in enumerate(_judged(examples, outer, threshold, band))
    ]
    on_step("fitting on each file's neighbours")
    transferred = _transferred(examples, cost, band, folds, c, calibrated, pools)
    figures = {
        "in_sample": _by_file(examples, _judged(examples, _probabilities(models, examples), threshold, band)),
        "cross_validated": _by_file(examples, cross),
        **({"transferred": transferred} if transferred else {}),
        "today": _by_file(examples, today),
    }
    return FittedVersion(
        fields=models, not_calibrated=not_calibrated, threshold=round(threshold, DIGITS), figures=figures
    )
