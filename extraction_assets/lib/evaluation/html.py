"""The evaluation report for people: one self-contained HTML file (inline CSS, plot as a data URI).

Every string from a document or a dataset goes through Jinja's autoescaping, so a document holding
markup shows as text and never runs. Sample documents show gold spans and predicted spans side by
side over the same excerpts, so a reviewer sees at a glance what was missed and what was invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from jinja2 import Environment, PackageLoader
from pydantic import BaseModel

from extraction_assets.lib.evaluation.metrics import MICRO
from extraction_assets.lib.evaluation.plots import capture_curve_png, data_uri, field_reliability_png, reliability_png
from extraction_assets.lib.evaluation.report import (
    FIELD_HEADERS,
    PLACEMENT_HEADERS,
    REVIEW_HEADERS,
    confidence_summary,
    field_rows,
    figure_rows,
    placement_rows,
    placement_summary,
    review_rows,
)
from extraction_assets.lib.evaluation.runner import DocumentSample, EvalResult
from extraction_assets.lib.evaluation.scoring import Mark

WHOLE_TEXT_CHARS = 4000  # shorter documents are shown whole; longer ones as excerpts around the spans
CONTEXT_CHARS = 160
MAX_EXCERPTS = 40
PALETTE = ("#ffd54f", "#81d4fa", "#a5d6a7", "#f48fb1", "#ce93d8", "#ffab91", "#b0bec5", "#e6ee9c", "#80cbc4", "#bcaaa4")


class Run(BaseModel):
    """A stretch of text with the marks covering it (none: plain text)."""

    text: str
    labels: list[str] = []
    verdict: str = ""  # ok, bad or "" (gold, or not judged)
    title: str = ""


class Excerpt(BaseModel):
    start: int
    end: int
    gold: list[Run]
    predicted: list[Run]


def excerpt_windows(length: int, marks: Sequence[Mark]) -> list[tuple[int, int]]:
    """Merged windows around the marks (the whole text when it is short or has no marks)."""
    if length <= WHOLE_TEXT_CHARS or not marks:
        return [(0, min(length, WHOLE_TEXT_CHARS))] if length else []
    windows: list[tuple[int, int]] = []
    for mark in sorted(marks, key=lambda m: m.start):
        start, end = max(0, mark.start - CONTEXT_CHARS), min(length, mark.end + CONTEXT_CHARS)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], end))
        else:
            windows.append((start, end))
    return windows[:MAX_EXCERPTS]


def highlight_runs(text: str, start: int, end: int, marks: Sequence[Mark]) -> list[Run]:
    """Split `text[start:end]` at every mark boundary; each run lists the marks covering it."""
    cuts = sorted({start, end, *(p for m in marks for p in (m.start, m.end) if start < p < end)})
    runs = []
    for lo, hi in pairwise(cuts):
        covering = [m for m in marks if m.start < hi and m.end > lo]
        verdicts = {m.correct for m in covering}
        verdict = "bad" if False in verdicts else "ok" if True in verdicts else ""
        runs.append(
            Run(
                text=text[lo:hi],
                labels=sorted({m.label for m in covering}),
                verdict=verdict,
                title="; ".join(f"{m.label}: {m.detail}" if m.detail else m.label for m in covering),
            )
        )
    return runs


def sample_excerpts(sample: DocumentSample) -> list[Excerpt]:
    windows = excerpt_windows(len(sample.text), [*sample.gold_marks, *sample.predicted_marks])
    return [
        Excerpt(
            start=lo,
            end=hi,
            gold=highlight_runs(sample.text, lo, hi, sample.gold_marks),
            predicted=highlight_runs(sample.text, lo, hi, sample.predicted_marks),
        )
        for lo, hi in windows
    ]


_ENV = Environment(
    loader=PackageLoader("extraction_assets.lib.evaluation", "templates"),
    autoescape=True,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render_html(result: EvalResult) -> str:
    labels = [f.field for f in result.fields if f.field != MICRO]
    colors = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}
    index = {label: i for i, label in enumerate(labels)}

    def classes(run: Run) -> str:
        return " ".join([*(f"l{index[label]}" for label in run.labels[:1] if label in index), run.verdict]).strip()

    title = f"{result.dataset} on {result.schema_version}"
    plot = curve = per_field = None
    if result.calibration.points:
        plot = data_uri(reliability_png(result.calibration.bins, title))
    review = result.review
    if review is not None and review.items:
        fit = result.confidence.cross_validated.get("curve", []) if result.confidence else []
        operating = (review.queue_share or 0.0, review.error_capture or 0.0) if review.wrong else None
        curve = data_uri(capture_curve_png(review.curve, operating, title, fit))
        per_field = data_uri(field_reliability_png(review.fields, f"reliability per field: {title}"))
    return _ENV.get_template("report.html.j2").render(
        r=result,
        field_headers=FIELD_HEADERS,
        fields=field_rows(result),
        figures=figure_rows(result),
        review_headers=REVIEW_HEADERS,
        review=review_rows(result),
        placement_headers=PLACEMENT_HEADERS,
        placement=placement_rows(result),
        placement_summary=placement_summary(result),
        confidence=confidence_summary(result),
        curve=curve,
        per_field=per_field,
        plot=plot,
        colors=colors,
        classes=classes,
        samples=[{"sample": s, "excerpts": sample_excerpts(s)} for s in result.samples],
    )
