"""The evaluation report for people: one self-contained HTML file (inline CSS, plot as a data URI).

Every string from a document or a dataset goes through Jinja's autoescaping, so a document holding
markup shows as text and never runs. Sample documents show gold spans and predicted spans side by
side over the same excerpts, so a reviewer sees at a glance what was missed and what was invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from jinja2 import Environment
from pydantic import BaseModel

from extraction_assets.lib.evaluation.metrics import MICRO
from extraction_assets.lib.evaluation.plots import data_uri, reliability_png
from extraction_assets.lib.evaluation.report import FIELD_HEADERS, field_rows, figure_rows
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


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>Evaluation: {{ r.dataset }} on {{ r.schema_version }}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; padding: 0 1em; }
table { border-collapse: collapse; margin: .6em 0 1.2em; }
th, td { border: 1px solid #ccc; padding: .25em .6em; text-align: left; vertical-align: top; }
th { background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.note { background: #fff8e1; border-left: 4px solid #ffb300; padding: .4em .8em; margin: .5em 0; }
.msg { color: #8a1c1c; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.text { white-space: pre-wrap; font: 12px/1.5 ui-monospace, monospace; border: 1px solid #ddd; padding: .6em;
  background: #fcfcfc; overflow-wrap: anywhere; margin-bottom: .4em; }
.gap { color: #999; font-style: italic; }
mark { border-radius: 2px; padding: 0 1px; }
mark.ok { outline: 2px solid #2e7d32; } mark.bad { outline: 2px dashed #c62828; }
{% for label, color in colors.items() %}mark.l{{ loop.index0 }} { background: {{ color }}; }
{% endfor %}
.legend span { margin-right: 1em; }
</style></head><body>
<h1>Evaluation: {{ r.dataset }} on {{ r.schema_version }}</h1>
<p>Extractor <b>{{ r.extractor }}</b>, model <b>{{ r.model or "none" }}</b>, mode <b>{{ r.mode }}</b>,
run {{ r.run_at.strftime("%Y-%m-%d %H:%M:%S") }} UTC, {{ r.documents }} documents from <code>{{ r.source }}</code>
{%- if r.document_limit %} (first {{ r.document_limit }}){% endif %}.</p>
{% for note in r.notes %}<div class="note">{{ note }}</div>{% endfor %}
<h2>Scores per field</h2>
<table><tr>{% for h in field_headers %}<th>{{ h }}</th>{% endfor %}</tr>
{% for row in fields %}<tr>{% for cell in row %}<td{% if loop.index > 2 %} class="num"{% endif %}>{{ cell }}</td>
{% endfor %}</tr>{% endfor %}</table>
<p>Precision: share of predictions that match gold. Recall: share of gold values found. F1 and F2: their harmonic
means (F2 weighs recall higher). Support: gold values; "n/a": not defined.</p>
<h2>Grounding, review, calibration, cost</h2>
<table>{% for name, value in figures %}<tr><th>{{ name }}</th><td>{{ value }}</td></tr>{% endfor %}</table>
{% if plot %}<h2>Reliability</h2>
<p>Predictions grouped by confidence: a well-calibrated extractor's bars meet the diagonal.</p>
<img alt="reliability diagram" src="{{ plot }}">{% endif %}
{% if r.messages %}<h2>Messages</h2>
<ul>{% for m in r.messages %}<li class="msg">{{ m }}</li>{% endfor %}</ul>{% endif %}
{% macro column(runs) -%}
<div class="text">{% for run in runs %}{% if run.labels %}<mark class="{{ classes(run) }}"
 title="{{ run.title }}">{{ run.text }}</mark>{% else %}{{ run.text }}{% endif %}{% endfor %}</div>
{%- endmacro %}
<h2>Sample documents</h2>
<p class="legend">
{% for label, color in colors.items() %}<span><mark class="l{{ loop.index0 }}">{{ label }}</mark></span>{% endfor %}
<span><mark class="ok">matches gold</mark></span><span><mark class="bad">does not match gold</mark></span></p>
{% for s in samples %}
<h3>{{ s.sample.record_id }}
{%- if s.sample.status != "processed" %} ({{ s.sample.status }}: {{ s.sample.error }}){% endif %}</h3>
<table><tr><th>field</th><th>gold</th><th>predicted</th><th>tp / fp / fn</th></tr>
{% for o in s.sample.outcomes %}<tr><td>{{ o.field }}</td><td>{{ o.gold | join(" | ") | truncate(300) }}</td>
<td>{{ o.predicted | join(" | ") | truncate(300) }}</td>
<td class="num">{{ o.counts.tp }} / {{ "n/a" if o.counts.fp is none else o.counts.fp }} / {{ o.counts.fn }}</td>
</tr>{% endfor %}
</table>
<div class="pair"><div><b>gold</b></div><div><b>predicted</b></div></div>
{% for x in s.excerpts %}
<div class="gap">characters {{ x.start }}–{{ x.end }} of {{ s.sample.text | length }}</div>
<div class="pair">{{ column(x.gold) }}{{ column(x.predicted) }}</div>
{% endfor %}
{% endfor %}
</body></html>
"""

_ENV = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)


def render_html(result: EvalResult) -> str:
    labels = [f.field for f in result.fields if f.field != MICRO]
    colors = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}
    index = {label: i for i, label in enumerate(labels)}

    def classes(run: Run) -> str:
        return " ".join([*(f"l{index[label]}" for label in run.labels[:1] if label in index), run.verdict]).strip()

    plot = None
    if result.calibration.points:
        plot = data_uri(reliability_png(result.calibration.bins, f"{result.dataset} on {result.schema_version}"))
    return _ENV.from_string(_TEMPLATE).render(
        r=result,
        field_headers=FIELD_HEADERS,
        fields=field_rows(result),
        figures=figure_rows(result),
        plot=plot,
        colors=colors,
        classes=classes,
        samples=[{"sample": s, "excerpts": sample_excerpts(s)} for s in result.samples],
    )
