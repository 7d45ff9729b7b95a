"""A schema version's calibration fitted on the registry's labelled data (`extraction-assets calibrate`).

Every registry dataset that judges the version's values (mode `fields`) is run through the production path with
the heuristic pack and without a calibration (so each item shows today's confidence and review status); every
judged item becomes an example (its features, whether it was right, today's queue decision). `calibration.fit`
fits the fields and the threshold; the file written beside the prompt file records the data it came from, the
figures in sample and cross-validated by document, per file. A version whose data judges nothing is written as
`not_calibrated` with its reason, and keeps today's behaviour. Needs scikit-learn (the `calibrate` extra).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from extraction_assets.lib.calibration.figures import ReviewFigures
from extraction_assets.lib.calibration.fit import DEFAULT_C, FOLDS, Example, fit_version
from extraction_assets.lib.calibration.model import (
    FORMAT,
    Provenance,
    VersionCalibration,
    calibration_path,
)
from extraction_assets.lib.evaluation.gold import GoldRecord, count_records
from extraction_assets.lib.evaluation.registry import DatasetEntry, Registry
from extraction_assets.lib.evaluation.runner import run_eval
from extraction_assets.lib.evaluation.scoring import Verdict
from extraction_assets.lib.extraction.extractors import HeuristicExtractor
from extraction_assets.lib.heuristics import get_pack, pack_version
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["CalibrationRun", "calibrate_version", "collect_examples", "same_fit", "write_calibration"]

THRESHOLD_RULE = "below_threshold"
Step = Callable[[str], None]


@dataclass
class CalibrationRun:
    calibration: VersionCalibration
    path: Path


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def collect_examples(
    schema: SchemaVersion, entries: list[DatasetEntry], on_step: Step = lambda _s: None
) -> tuple[list[Any], list[dict[str, Any]]]:
    """(examples, the data files they came from) for every `fields` dataset of the schema, on each labelled file."""
    today = schema.model_copy(update={"calibration": None})
    examples: list[Example] = []
    data: list[dict[str, Any]] = []
    for entry in entries:
        if entry.mode != "fields":
            continue
        for path in entry.labelled_paths():
            label = f"{entry.name}/{path.name}"
            on_step(f"extracting {label}")

            def collect(record: GoldRecord, verdicts: list[Verdict], file: str = label, data: str = entry.name) -> None:
                for v in verdicts:
                    p = v.prediction
                    examples.append(
                        Example(
                            doc=f"{data}:{record.id}",
                            file=file,
                            field=p.field,
                            features=p.features,
                            correct=v.correct,
                            confidence=p.confidence,
                            legacy_queued=p.status == "needs_review",
                            other_reasons=any(not r.startswith(THRESHOLD_RULE) for r in p.reasons),
                        )
                    )

            run_eval(entry, path, today, HeuristicExtractor(), samples=0, collect=collect)
            data.append({"dataset": entry.name, "file": label, "sha256": _sha256(path), "records": count_records(path)})
    return examples, data


def _compact(figures: ReviewFigures, pooled: bool, with_curve: bool = False) -> dict[str, Any]:
    """What a calibration file keeps of a figure set: the four figures; pooled over every file, per field too; and
    the cross-validated curve the threshold was chosen on."""
    keep = ("items", "wrong", "queued", "queued_wrong", "error_capture", "queue_share", "precision_unqueued", "ece")
    found: dict[str, Any] = {k: getattr(figures, k) for k in keep}
    if pooled:
        found["fields"] = {
            f.field: {k: getattr(f, k) for k in keep} for f in sorted(figures.fields, key=lambda f: f.field)
        }
    if with_curve:
        found["curve"] = [[p.queue_share, p.error_capture, p.threshold] for p in figures.curve]
    return found


def calibrate_version(
    schema: SchemaVersion, registry: Registry, on_step: Step = lambda _s: None, fitted_at: str | None = None
) -> VersionCalibration:
    """The version's calibration from its labelled data (not written: `write_calibration`)."""
    from sklearn import __version__ as sklearn_version  # the calibrate extra, loaded by a fit alone

    entries = registry.for_schema(schema.key)
    examples, data = collect_examples(schema, entries, on_step)
    names = [f.name for f in schema.fields]
    if not examples:
        scored = [e.name for e in entries]
        why = (
            f"no registry dataset judges its values (datasets scoring it: {', '.join(scored)}; none in mode `fields`)"
            if scored
            else "no registry dataset scores it"
        )
        return VersionCalibration(
            schema_version=schema.key,
            status="not_calibrated",
            reason=why,
            not_calibrated=dict.fromkeys(names, "no labelled items"),
        )
    if schema.review is None:
        raise ValueError(f"{schema.key}: its front matter has no `review:` cost (max_error_rate or queue_share)")
    band = (schema.heuristic_band.low, schema.heuristic_band.high)
    pools = get_pack(schema.heuristic).calibration_pools
    fitted = fit_version(examples, schema.review, band, names, on_step=on_step, pools=pools)
    provenance = Provenance(
        data=data,
        pack_version=pack_version(schema.heuristic),
        method=f"per field: L2-regularized logistic regression (C={DEFAULT_C}) on standardized evidence features"
        + "".join(f"; {', '.join(pool)} fitted as one with an indicator per field" for pool in pools)
        + f"; threshold from the out-of-fold probabilities ({FOLDS} folds by document)",
        folds=FOLDS,
        fitted_at=fitted_at or datetime.now(UTC).date().isoformat(),
        fitter=f"scikit-learn {sklearn_version}",
    )
    figures = {
        variant: {
            file: _compact(found, pooled=file == "all", with_curve=file == "all" and variant == "cross_validated")
            for file, found in per_file.items()
        }
        for variant, per_file in fitted.figures.items()
    }
    not_calibrated = dict(fitted.not_calibrated)
    if not fitted.fields:
        return VersionCalibration(
            schema_version=schema.key,
            status="not_calibrated",
            reason="no field has enough labelled items",
            not_calibrated=not_calibrated,
        )
    return VersionCalibration(
        schema_version=schema.key,
        status="calibrated",
        review=schema.review,
        threshold=fitted.threshold,
        fields=fitted.fields,
        not_calibrated=not_calibrated,
        provenance=provenance,
        figures=figures,
    )


def _canonical(calibration: VersionCalibration) -> str:
    return json.dumps(calibration.model_dump(mode="json", exclude_none=True), indent=1, ensure_ascii=False) + "\n"


def write_calibration(prompt_file: Path, calibration: VersionCalibration) -> Path:
    path = calibration_path(prompt_file)
    path.write_text(_canonical(calibration), encoding="utf-8")
    return path


def same_fit(stored: VersionCalibration, refit: VersionCalibration) -> bool:
    """Whether a refit reproduces a stored file: everything but the date of the fit."""

    def dated_out(c: VersionCalibration) -> dict[str, Any]:
        data = c.model_dump(mode="json", exclude_none=True)
        if "provenance" in data:
            data["provenance"].pop("fitted_at", None)
        return data

    return dated_out(stored) == dated_out(refit)


assert FORMAT == 1  # the file format this module writes
