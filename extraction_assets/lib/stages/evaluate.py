"""Evaluate one schema version: every registry dataset for it scored through the production scrub -> extract ->
ground path, each stored in eval_runs/eval_metrics with a self-contained HTML report (and a reliability plot)
beside the warehouse."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.schemas import SchemaError, SchemaVersion, load_schema
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.warehouse import beside_warehouse

if TYPE_CHECKING:
    from extraction_assets.lib.evaluation import EvalResult
    from extraction_assets.lib.extraction import Extractor


def reports_dir(warehouse: Path | str) -> Path:
    """Where a warehouse's evaluation reports are written: beside the warehouse file (or a DuckLake's local catalog
    or data folder), else under `.data` (`extraction-assets ui` serves this folder)."""
    beside = beside_warehouse(warehouse, "")
    return (beside.resolve().parent if beside else Path(".data").resolve()) / "eval_reports"


@dataclass(frozen=True)
class EvalRequest:
    """Which datasets, how much of each, and where the reports go."""

    registry: Path | None = None  # None: evals/registry.yaml
    datasets: tuple[str, ...] = ()  # only these entries; empty: every entry that scores the version
    max_documents: int | None = None  # the first N records of each dataset; None: all
    sample_documents: int = 5  # documents shown with highlighted spans in the HTML report
    reports_dir: Path = Path(".data") / "eval_reports"


@dataclass
class ScoredDataset:
    """One dataset's result and the files written for it."""

    result: EvalResult
    html: Path
    reliability_png: bytes | None


@dataclass
class EvalStageReport:
    scored: list[ScoredDataset] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # datasets skipped, and why


def evaluate_version(
    connect: Connect,
    warehouse: Path | str,
    prompts_dir: Path,
    key: str,
    built: Extractor,
    request: EvalRequest,
    on_progress: Callable[[str, int, int], None] = lambda _name, _done, _total: None,
) -> EvalStageReport:
    """A dataset whose config is unusable (or a version without a prompt file, for extraction datasets) is skipped
    with its reason; the others are still scored."""
    from extraction_assets.lib.evaluation import (  # the evaluation stack loads with the step
        DEFAULT_REGISTRY,
        EvalConfigError,
        WarehouseModelCache,
        available_entries,
        load_registry,
        reliability_png,
        render_html,
        run_eval,
        store_eval,
    )

    registry = load_registry(request.registry or DEFAULT_REGISTRY)
    wanted = [e for e in registry.for_schema(key) if not request.datasets or e.name in request.datasets]
    entries, messages = available_entries(wanted)
    report = EvalStageReport(messages=messages)
    schema, schema_problem = _schema(prompts_dir, key)
    for entry in entries:
        if schema is None and entry.mode != "entity_spans":
            report.messages.append(f"dataset {entry.name!r} skipped: {schema_problem}")
            continue
        try:
            result = run_eval(
                entry,
                entry.resolved_path(),
                schema,
                built,
                schema_key=key,
                limit=request.max_documents,
                samples=request.sample_documents,
                on_progress=partial(on_progress, entry.name),
                cache=WarehouseModelCache(warehouse),
            )
        except EvalConfigError as exc:
            report.messages.append(f"dataset {entry.name!r} skipped: {exc}")
            continue
        request.reports_dir.mkdir(parents=True, exist_ok=True)
        html = request.reports_dir / f"{entry.name}-{key.replace('@', '-')}.html"
        html.write_text(render_html(result), encoding="utf-8")
        with connect() as con:
            store_eval(con, result, report_path=str(html))
        png = reliability_png(result.calibration.bins, f"{entry.name} on {key}") if result.calibration.points else None
        if png is not None:
            (request.reports_dir / html.with_suffix(".png").name).write_bytes(png)
        report.scored.append(ScoredDataset(result, html, png))
    return report


def _schema(prompts_dir: Path, key: str) -> tuple[SchemaVersion | None, str | None]:
    try:
        return load_schema(prompts_dir, key), None
    except (SchemaError, OSError) as exc:
        return None, f"{key} has no usable prompt file ({exc})"
