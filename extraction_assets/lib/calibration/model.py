"""A schema version's calibration as it is stored and applied: evidence features -> probability of being right.

Each field of a calibrated version has a regularized logistic regression over its evidence features (which rule
found the value, its rivals, value sanity), fitted on labelled data by `fit.py` and stored beside the prompt file
(`prompts/<schema>/<version>.calibration.json`). Applying it needs nothing but arithmetic, so the pipeline never
imports scikit-learn. The probability is kept as it is (`extracted_items.probability_correct`) and mapped
monotonically into the seed's confidence band; an item whose probability is under the version's threshold, chosen
at fit time from the cost of an error (the front matter's `review`), goes to review.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "CALIBRATION_SUFFIX",
    "FORMAT",
    "PROBABILITY_CEILING",
    "PROBABILITY_FLOOR",
    "FieldCalibration",
    "ReviewCost",
    "VersionCalibration",
    "band_confidence",
    "calibration_path",
    "load_calibration",
    "probability_of",
]

FORMAT = 1
CALIBRATION_SUFFIX = ".calibration.json"
MAX_CALIBRATION_BYTES = 1024 * 1024  # a fitted file is tens of kilobytes: a larger one is a mistake, not a calibration
# a probability is never certainty either way: 1.0 never occurs (seed 000), and 0 would say more than any data can
PROBABILITY_FLOOR = 0.001
PROBABILITY_CEILING = 0.999


class ReviewCost(BaseModel):
    """What an error costs, as a schema version's front matter says it (`review:`): exactly one of
    - `max_error_rate`: the share of wrong values tolerated among what is not reviewed (a draft nobody sees), or
    - `queue_share`: the share of items people can review;
    the fit turns it into a probability threshold from the labelled data's capture/queue curve."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_error_rate: float | None = Field(default=None, gt=0.0, lt=1.0)
    queue_share: float | None = Field(default=None, gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _one(self) -> ReviewCost:
        if (self.max_error_rate is None) == (self.queue_share is None):
            raise ValueError("review: give exactly one of max_error_rate or queue_share")
        return self

    def describe(self) -> str:
        if self.max_error_rate is not None:
            return f"max_error_rate {self.max_error_rate:g}"
        return f"queue_share {self.queue_share:g}"


class FieldCalibration(BaseModel):
    """One field's logistic model over standardized features: p = 1 / (1 + exp(-(b + sum w_i (x_i - c_i) / s_i)))."""

    model_config = ConfigDict(frozen=True)

    field: str
    features: list[str]
    center: list[float]
    scale: list[float]
    coef: list[float]
    intercept: float
    items: int  # labelled items it was fitted on
    wrong: int  # of which wrong

    @model_validator(mode="after")
    def _aligned(self) -> FieldCalibration:
        if not len(self.features) == len(self.center) == len(self.scale) == len(self.coef):
            raise ValueError(f"{self.field}: features, center, scale and coef differ in length")
        if any(s <= 0 for s in self.scale):
            raise ValueError(f"{self.field}: every scale must be positive")
        return self

    def score(self, features: Mapping[str, float]) -> float:
        """The linear score (log-odds of being right); a feature the mapping lacks counts 0."""
        total = self.intercept
        for name, center, scale, weight in zip(self.features, self.center, self.scale, self.coef, strict=True):
            total += weight * (float(features.get(name, 0.0)) - center) / scale
        return total

    def probability(self, features: Mapping[str, float]) -> float:
        """Probability that a value with these features is right, in [PROBABILITY_FLOOR, PROBABILITY_CEILING]."""
        return probability_of(self.score(features))


def probability_of(score: float) -> float:
    """The logistic function, bounded: monotone in the score, never 0 or 1."""
    p = 1.0 / (1.0 + math.exp(-score)) if score >= 0 else math.exp(score) / (1.0 + math.exp(score))
    return round(min(max(p, PROBABILITY_FLOOR), PROBABILITY_CEILING), 6)


def band_confidence(low: float, high: float, probability: float) -> float:
    """A probability mapped into the band [low, high] (linear, so monotone): the band says who extracted, the
    position in it how likely the value is right."""
    return round(low + (high - low) * probability, 4)


class Provenance(BaseModel):
    """Where a calibration came from: enough to fit it again and get the same file."""

    data: list[dict[str, Any]]  # {dataset, file, sha256, records}
    pack_version: str  # the heuristic pack whose features were fitted
    method: str
    folds: int
    fitted_at: str  # ISO date; the one entry a refit changes
    fitter: str  # library and version


class VersionCalibration(BaseModel):
    """A schema version's calibration file."""

    model_config = ConfigDict(frozen=True)

    format: Literal[1] = 1  # FORMAT
    schema_version: str
    status: Literal["calibrated", "not_calibrated"]
    reason: str = ""  # why a version is not calibrated
    review: ReviewCost | None = None
    threshold: float | None = None  # probability under which an item goes to review
    fields: dict[str, FieldCalibration] = Field(default_factory=dict)
    not_calibrated: dict[str, str] = Field(default_factory=dict)  # field -> why it keeps today's behaviour
    provenance: Provenance | None = None
    figures: dict[str, Any] = Field(default_factory=dict)  # in-sample and cross-validated, per file

    @model_validator(mode="after")
    def _consistent(self) -> VersionCalibration:
        if self.status == "calibrated" and (self.threshold is None or not self.fields):
            raise ValueError("a calibrated version needs a threshold and at least one field")
        return self

    def field(self, name: str) -> FieldCalibration | None:
        return self.fields.get(name) if self.status == "calibrated" else None

    @cached_property
    def tag(self) -> str:
        """A short fingerprint of what decides items (models and threshold), part of the extractor version: a refit
        that changes them re-extracts the version's documents. Computed once (the model is frozen): every document
        extracted asks for it."""
        decisive = {"fields": {k: v.model_dump() for k, v in sorted(self.fields.items())}, "threshold": self.threshold}
        return "cal-" + hashlib.sha256(json.dumps(decisive, sort_keys=True).encode()).hexdigest()[:8]


def calibration_path(prompt_file: Path) -> Path:
    """`prompts/receipt/v1.md` -> `prompts/receipt/v1.calibration.json`."""
    return prompt_file.with_name(prompt_file.stem + CALIBRATION_SUFFIX)


def load_calibration(prompt_file: Path) -> VersionCalibration | None:
    """The calibration beside a prompt file, or None when there is none. A file that cannot be read is an error: a
    version must never silently lose its calibration."""
    path = calibration_path(prompt_file)
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return _load(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=64)
def _load(path: str, _mtime_ns: int, size: int) -> VersionCalibration:
    if size > MAX_CALIBRATION_BYTES:
        raise ValueError(f"larger than {MAX_CALIBRATION_BYTES // 1024} KiB")
    return VersionCalibration.model_validate_json(Path(path).read_text(encoding="utf-8"))
