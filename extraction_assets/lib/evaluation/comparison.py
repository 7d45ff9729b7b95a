"""Every evaluated version side by side, with per-field deltas against the previous version of its schema.

A column is one configuration (schema version, extractor version, model) at its latest run; columns
of a dataset are ordered by schema, then version number (v2 before v10), then run time, and each is
compared with the column before it of the same schema.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from extraction_assets.lib.evaluation.metrics import MICRO
from extraction_assets.lib.evaluation.report import fmt
from extraction_assets.lib.pii import markdown_table

_DIGITS = re.compile(r"(\d+)")
METRICS = ("precision", "recall", "f1")


class Column(BaseModel):
    schema_version: str
    extractor_version: str
    model: str | None
    run_at: datetime
    documents: int | None = None  # how many documents the run scored
    document_limit: int | None = None  # set: the run scored only the first N records (a slice)

    @property
    def label(self) -> str:
        scope = f"SLICE of {self.documents} docs" if self.document_limit else f"{self.documents} docs"
        model = f", {self.model}" if self.model else ""
        return f"{self.schema_version} ({self.extractor_version}{model}; {scope})"


class Cell(BaseModel):
    precision: float | None
    recall: float | None
    f1: float | None
    support: int
    delta: dict[str, float | None] = {}  # metric -> change against the previous column; empty for the first


class DatasetComparison(BaseModel):
    dataset: str
    columns: list[Column]
    fields: dict[str, list[Cell | None]]  # field -> one cell per column (None: not scored there)


def version_order(schema_version: str) -> tuple[str, list[tuple[int, str]]]:
    name, _, version = schema_version.partition("@")
    return name, [(int(p), "") if p.isdigit() else (-1, p) for p in _DIGITS.split(version) if p]


def _delta(now: float | None, before: float | None) -> float | None:
    return None if now is None or before is None else round(now - before, 4)


def compare_versions(rows: Sequence[dict[str, Any]]) -> list[DatasetComparison]:
    """Rows of `eval_metrics` (latest run per configuration) -> one comparison per dataset."""
    by_dataset: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_dataset.setdefault(row["dataset"], []).append(row)
    comparisons = []
    for dataset, metric_rows in sorted(by_dataset.items()):
        configs = {(r["schema_version"], r["extractor_version"], r["model"]): r for r in metric_rows}
        ordered = sorted(configs.items(), key=lambda c: (version_order(c[0][0]), c[1]["run_at"]))
        columns = [
            Column(
                schema_version=s,
                extractor_version=e,
                model=m,
                run_at=r["run_at"],
                documents=r.get("documents"),
                document_limit=r.get("document_limit"),
            )
            for (s, e, m), r in ordered
        ]
        index = {(c.schema_version, c.extractor_version, c.model): i for i, c in enumerate(columns)}
        field_names = sorted({r["field"] for r in metric_rows}, key=lambda f: (f == MICRO, f))
        fields: dict[str, list[Cell | None]] = {f: [None] * len(columns) for f in field_names}
        for r in metric_rows:
            cell = Cell(precision=r["precision"], recall=r["recall"], f1=r["f1"], support=r["support"])
            fields[r["field"]][index[(r["schema_version"], r["extractor_version"], r["model"])]] = cell
        for cells in fields.values():
            for i, current in enumerate(cells):
                previous = _previous(columns, cells, i)
                if current is not None and previous is not None:
                    current.delta = {m: _delta(getattr(current, m), getattr(previous, m)) for m in METRICS}
        comparisons.append(DatasetComparison(dataset=dataset, columns=columns, fields=fields))
    return comparisons


def _previous(columns: list[Column], cells: list[Cell | None], i: int) -> Cell | None:
    """The cell of the nearest earlier column of the same schema."""
    schema = columns[i].schema_version.partition("@")[0]
    for j in range(i - 1, -1, -1):
        if columns[j].schema_version.partition("@")[0] == schema:
            return cells[j]
    return None


def _cell_text(cell: Cell | None) -> str:
    if cell is None:
        return "-"
    text = f"{fmt(cell.precision)} / {fmt(cell.recall)} / {fmt(cell.f1)}"
    shown = "f1" if cell.f1 is not None else "recall"
    change = cell.delta.get(shown)
    return text + (f" (Δ{'F1' if shown == 'f1' else 'R'} {change:+.3f})" if change is not None else "")


def comparison_markdown(comparisons: Sequence[DatasetComparison]) -> str:
    """One table per dataset: fields down, versions across, cells `P / R / F1 (ΔF1)`."""
    if not comparisons:
        return "_no evaluation has been stored yet: materialize eval_report first_"
    parts = []
    for comparison in comparisons:
        headers = ["field (P / R / F1)", *(c.label for c in comparison.columns)]
        rows = [
            ["all fields (micro)" if name == MICRO else name, *(_cell_text(c) for c in cells)]
            for name, cells in comparison.fields.items()
        ]
        parts += [f"#### {comparison.dataset}", markdown_table(headers, rows, width=60)]
    return "\n\n".join(parts)
