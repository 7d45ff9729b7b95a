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

from extraction_assets.lib.evaluation.metrics import ReliabilityBin

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height))


def _png(figure: Figure) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")
    return buffer.getvalue()


def reliability_png(bins: Sequence[ReliabilityBin], title: str) -> bytes:
    """Accuracy per confidence bin against the diagonal of perfect calibration; bar labels are item counts."""
    figure = _figure(4.8, 4.0)
    axes = figure.add_subplot()
    axes.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=1, label="perfectly calibrated")
    filled = [b for b in bins if b.count and b.accuracy is not None]
    bars = axes.bar(
        [(b.low + b.high) / 2 for b in filled],
        [b.accuracy or 0.0 for b in filled],
        width=[b.high - b.low for b in filled],
        edgecolor="#1f4e79",
        color="#5b9bd5",
        alpha=0.8,
        label="accuracy",
    )
    axes.bar_label(bars, labels=[str(b.count) for b in filled], fontsize=7)
    axes.plot(
        [b.mean_confidence or 0.0 for b in filled],
        [b.accuracy or 0.0 for b in filled],
        "o",
        color="#c00000",
        label="mean confidence",
    )
    axes.set(xlim=(0, 1), ylim=(0, 1.05), xlabel="confidence", ylabel="share correct", title=title)
    axes.legend(loc="upper left", fontsize=7)
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
