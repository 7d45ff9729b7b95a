"""The rows every view of an evaluation shows (terminal, Dagster Markdown, HTML), built once.

"n/a" marks a figure that is not defined (precision on non-exhaustive gold, a rate with nothing to
count), so it is never mistaken for zero.
"""

from __future__ import annotations

from collections.abc import Sequence

from extraction_assets.lib.evaluation.metrics import MICRO
from extraction_assets.lib.evaluation.runner import EvalResult, PlacementField
from extraction_assets.lib.pii import markdown_table

FIELD_HEADERS = ("field", "compare", "support", "predicted", "precision", "recall", "F1", "F2")
REVIEW_HEADERS = ("field", "items", "wrong", "queued", "error capture", "queue share", "precision unqueued", "ECE")
PLACEMENT_HEADERS = (
    "field",
    "items",
    "inside gold evidence",
    "hit rate",
    "chance",
    "lift (x chance)",
    "95% interval (bootstrap over documents)",
)


def fmt(value: float | int | None, digits: int = 3) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, int):
        return str(value)
    return f"{value:.{digits}f}"


def field_rows(result: EvalResult) -> list[list[str]]:
    return [
        [
            "all fields (micro)" if f.field == MICRO else f.field,
            f.comparator,
            str(f.support),
            fmt(f.predicted),
            fmt(f.precision),
            fmt(f.recall),
            fmt(f.f1),
            fmt(f.f2),
        ]
        for f in result.fields
    ]


def figure_rows(result: EvalResult) -> list[list[str]]:
    """The run's other figures: what was read, grounding, review, calibration and cost."""
    return [
        ["documents", f"{result.documents} ({result.documents_failed} failed, {result.records_invalid} invalid lines)"],
        ["extractor", f"{result.extractor}; model {result.model or 'none'}"],
        ["few-shot examples in the prompt", str(result.examples) if result.examples else "none"],
        [
            "items proposed / stored / dropped",
            f"{result.items_proposed} / {result.items_stored} / {result.items_dropped}",
        ],
        ["grounding rate", fmt(result.grounding_rate)],
        ["hallucination rate (dropped as ungrounded)", fmt(result.hallucination_rate)],
        ["needs_review rate", fmt(result.needs_review_rate)],
        ["expected calibration error", f"{fmt(result.calibration.ece)} over {result.calibration.points} predictions"],
        ["latency per document (mean / p95)", f"{fmt(result.latency_ms_mean, 1)} / {fmt(result.latency_ms_p95, 1)} ms"],
        ["wall time", f"{result.wall_seconds:.1f} s"],
        [
            "model calls / cache hits (remembered failures)",
            f"{result.model_calls} / {result.cache_hits} ({result.remembered_failures})",
        ],
        ["tokens (prompt / completion)", f"{result.prompt_tokens} / {result.completion_tokens}"],
        ["estimated cost", "no prices configured" if result.estimated_cost is None else f"{result.estimated_cost:.4f}"],
        [
            "chunks (per document) / documents pending (budget)",
            f"{result.chunks} ({result.chunks / max(result.documents, 1):.2f}) / {result.documents_pending}",
        ],
        *(
            [["micro recall per pass", " / ".join(fmt(r) for r in result.recall_per_pass)]]
            * bool(result.recall_per_pass)
        ),
    ]


def review_rows(result: EvalResult) -> list[list[str]]:
    """What review does with wrong values, per field and pooled (mode `fields`)."""
    review = result.review
    if review is None:
        return []
    rows = [
        [
            f.field + ("" if f.calibrated else " (not calibrated)"),
            str(f.items),
            str(f.wrong),
            str(f.queued),
            fmt(f.error_capture),
            fmt(f.queue_share),
            fmt(f.precision_unqueued),
            fmt(f.ece),
        ]
        for f in review.fields
    ]
    pooled = [
        "all fields",
        str(review.items),
        str(review.wrong),
        str(review.queued),
        fmt(review.error_capture),
        fmt(review.queue_share),
        fmt(review.precision_unqueued),
        fmt(review.ece),
    ]
    return [*rows, pooled]


def placement_rows(result: EvalResult) -> list[list[str]]:
    """Where items land against chance (mode `evidence_turns`), per field and pooled."""
    placement = result.placement
    if placement is None:
        return []
    fields = [*placement.fields, *([placement.pooled] if placement.pooled else [])]
    return [
        [f.field, str(f.items), str(f.hits), fmt(f.hit_rate), fmt(f.chance), fmt(f.lift, 2), _interval(f)]
        for f in fields
    ]


def _interval(placed: PlacementField) -> str:
    if placed.lift_low is None or placed.lift_high is None:
        return "n/a"
    return f"{fmt(placed.lift_low, 2)} to {fmt(placed.lift_high, 2)}"


def placement_summary(result: EvalResult) -> str:
    placement = result.placement
    if placement is None:
        return ""
    return (
        f"{fmt(placement.items_per_document, 2)} items a document (at most {placement.items_per_document_max}); "
        f"{placement.documents_over_cap} of {placement.documents} documents over {placement.cap}"
    )


def confidence_summary(result: EvalResult) -> str:
    """One sentence: whether the version's confidence is a calibrated probability, and what its fit measured."""
    note = result.confidence
    if note is None:
        return ""
    if note.status != "calibrated":
        return f"Confidence is not calibrated for {result.schema_version}: {note.reason}. Today's rules decide review."
    cv = note.cross_validated
    measured = (
        f" At fit time, cross-validated by document on {', '.join(note.data)}: error capture "
        f"{fmt(cv.get('error_capture'))}, queue share {fmt(cv.get('queue_share'))}, precision unqueued "
        f"{fmt(cv.get('precision_unqueued'))}, ECE {fmt(cv.get('ece'))}."
        if cv
        else ""
    )
    missing = "".join(f" Field {name} is not calibrated: {why}." for name, why in note.not_calibrated.items())
    return (
        f"Confidence is a calibrated probability of being right; items under {fmt(note.threshold)} go to review "
        f"(chosen for {note.review}).{measured}{missing}"
    )


def review_figures(result: EvalResult) -> dict[str, float | int | str]:
    """The figures a materialization plots across runs: error capture, queue share, precision of what is not
    queued and ECE (mode `fields`); items a document and lift over chance (mode `evidence_turns`); whether the
    version's confidence is calibrated."""
    figures: dict[str, float | int | str] = {}
    if result.review is not None:
        for name in ("error_capture", "queue_share", "precision_unqueued", "ece"):
            if (value := getattr(result.review, name)) is not None:
                figures[name] = value
        for f in result.review.fields:
            if f.ece is not None:
                figures[f"ece_{f.field}"] = f.ece
    if result.placement is not None:
        if result.placement.items_per_document is not None:
            figures["items_per_document"] = result.placement.items_per_document
        figures["items_per_document_max"] = result.placement.items_per_document_max
        for placed in [*result.placement.fields, *([result.placement.pooled] if result.placement.pooled else [])]:
            if placed.lift is not None:
                figures[f"lift_{placed.field}"] = placed.lift
            if placed.lift_low is not None and placed.lift_high is not None:
                figures[f"lift_{placed.field}_low"] = placed.lift_low
                figures[f"lift_{placed.field}_high"] = placed.lift_high
    if result.confidence is not None:
        note = result.confidence
        figures["confidence"] = "calibrated" if note.status == "calibrated" else f"not calibrated: {note.reason}"
    return figures


def markdown_summary(results: Sequence[EvalResult]) -> str:
    """Per-dataset field tables, then the figures, for a materialization's metadata."""
    parts = []
    for result in results:
        parts.append(f"#### {result.dataset} ({result.mode}, {result.documents} documents)")
        parts.append(markdown_table(FIELD_HEADERS, field_rows(result)))
        if result.review is not None:
            parts.append(markdown_table(REVIEW_HEADERS, review_rows(result)))
        if result.placement is not None:
            parts.append(markdown_table(PLACEMENT_HEADERS, placement_rows(result)))
            parts.append(placement_summary(result))
        parts.append(markdown_table(["figure", "value"], figure_rows(result)))
        if summary := confidence_summary(result):
            parts.append(f"> {summary}")
        parts += [f"> {note}" for note in result.notes]
    return "\n\n".join(parts) if parts else "_no dataset scores this schema version_"
