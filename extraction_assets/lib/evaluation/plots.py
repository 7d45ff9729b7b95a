"""PNG pictures of evaluation results: the reliability diagram and the history of a version's scores.

Figures are drawn on matplotlib's Agg canvas directly (no pyplot global state), so drawing is safe in
a Dagster run worker or a thread and never needs a display. matplotlib (about 0.5 s to import) loads
when the first picture is drawn, not with the code location.
"""

from __future__ import annotations

import base64
import io
from collections import defaultdict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.calibration.figures import CurvePoint, FieldFigures
from extraction_assets.lib.evaluation.metrics import ReliabilityBin

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure  # matplotlib loads with the first picture (module docstring)

    return Figure(figsize=(width, height))


def _png(figure: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # with the first picture

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def _reliability(axes: Any, bins: Sequence[tuple[float, float, int, float | None, float | None]], title: str) -> None:
    """Accuracy per bin (low, high, count, mean certainty, accuracy) against the diagonal; bar labels are counts."""
    axes.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=1, label="perfectly calibrated")
    filled = [b for b in bins if b[2] and b[4] is not None]
    bars = axes.bar(
        [(b[0] + b[1]) / 2 for b in filled],
        [b[4] or 0.0 for b in filled],
        width=[b[1] - b[0] for b in filled],
        edgecolor="#1f4e79",
        color="#5b9bd5",
        alpha=0.8,
        label="accuracy",
    )
    axes.bar_label(bars, labels=[str(b[2]) for b in filled], fontsize=7)
    axes.plot([b[3] or 0.0 for b in filled], [b[4] or 0.0 for b in filled], "o", color="#c00000", label="mean stated")
    axes.set(xlim=(0, 1), ylim=(0, 1.05), title=title)


def reliability_png(bins: Sequence[ReliabilityBin], title: str) -> bytes:
    """Accuracy per confidence bin against the diagonal of perfect calibration; bar labels are item counts."""
    figure = _figure(4.8, 4.0)
    axes = figure.add_subplot()
    _reliability(axes, [(b.low, b.high, b.count, b.mean_confidence, b.accuracy) for b in bins], title)
    axes.set(xlabel="probability of being right (confidence where none)", ylabel="share correct")
    axes.legend(loc="upper left", fontsize=7)
    return _png(figure)


def field_reliability_png(fields: Sequence[FieldFigures], title: str) -> bytes:
    """One reliability diagram per field, three to a row: where each field's stated probability meets its accuracy."""
    columns = min(3, max(1, len(fields)))
    rows = -(-len(fields) // columns)
    figure = _figure(3.2 * columns, 3.0 * rows)
    for number, field in enumerate(fields, start=1):
        axes = figure.add_subplot(rows, columns, number)
        bins = [(b.low, b.high, b.count, b.mean_certainty, b.accuracy) for b in field.bins]
        stated = "probability" if field.calibrated else "confidence"
        ece = "n/a" if field.ece is None else f"{field.ece:.3f}"
        _reliability(axes, bins, f"{field.field} ({stated}), ECE {ece}")
        axes.title.set_fontsize(8)
        axes.tick_params(labelsize=7)
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return _png(figure)


def capture_curve_png(
    measured: Sequence[CurvePoint],
    operating: tuple[float, float] | None,
    title: str,
    fit: Sequence[Sequence[float]] = (),
) -> bytes:
    """Share of wrong values caught by review against share of items queued, items queued from the least likely
    right up; the review threshold's point on it, and the curve it was chosen from at fit time (cross-validated)."""
    figure = _figure(5.2, 4.0)
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=1, label="queueing at random")
    if fit:
        axes.plot([p[0] for p in fit], [p[1] for p in fit], color="#a5a5a5", label="at fit time (cross-validated)")
    axes.plot([p.queue_share for p in measured], [p.error_capture for p in measured], color="#1f4e79", label="here")
    if operating is not None:
        axes.plot(*operating, "o", color="#c00000", label="the review threshold")
    axes.set(
        xlim=(0, 1), ylim=(0, 1.05), xlabel="share of items queued", ylabel="share of wrong values caught", title=title
    )
    axes.legend(loc="lower right", fontsize=7)
    return _png(figure)


def history_png(rows: Sequence[dict[str, Any]], metric: str = "f1") -> bytes:
    """One line per (dataset, schema version): the pooled score of every run over time."""
    series: dict[str, list[tuple[Any, float]]] = defaultdict(list)
    for row in rows:
        value = row.get(metric) if row.get(metric) is not None else row.get("recall")
        if value is not None:
            series[f"{row['dataset']} {row['schema_version']}"].append((row["run_at"], float(value)))
    figure = _figure(7.0, 3.6)
    axes = figure.add_subplot()
    for label, points in sorted(series.items()):
        axes.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
    axes.set(ylim=(0, 1.05), ylabel=f"pooled {metric} (recall where {metric} is undefined)", title="history")
    if series:
        axes.legend(fontsize=7, loc="lower left")
    figure.autofmt_xdate()
    return _png(figure)


def data_uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")
