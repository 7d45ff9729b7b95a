"""The rows every view of an evaluation shows (terminal, Dagster Markdown, HTML), built once.

"n/a" marks a figure that is not defined (precision on non-exhaustive gold, a rate with nothing to
count), so it is never mistaken for zero.
"""

from __future__ import annotations

from collections.abc import Sequence

from extraction_assets.lib.evaluation.metrics import MICRO
from extraction_assets.lib.evaluation.runner import EvalResult
from extraction_assets.lib.reporting import markdown_table

FIELD_HEADERS = ("field", "compare", "support", "predicted", "precision", "recall", "F1", "F2")


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


def markdown_summary(results: Sequence[EvalResult]) -> str:
    """Per-dataset field tables, then the figures, for a materialization's metadata."""
    parts = []
    for result in results:
        parts.append(f"#### {result.dataset} ({result.mode}, {result.documents} documents)")
        parts.append(markdown_table(FIELD_HEADERS, field_rows(result)))
        parts.append(markdown_table(["figure", "value"], figure_rows(result)))
        parts += [f"> {note}" for note in result.notes]
    return "\n\n".join(parts) if parts else "_no dataset scores this schema version_"
