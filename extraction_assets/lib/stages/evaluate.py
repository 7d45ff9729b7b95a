"""Evaluate one schema version: every registry dataset for it scored through the production scrub -> extract ->
ground path, each stored in eval_runs/eval_metrics with a self-contained HTML report (and a reliability plot)
beside the warehouse."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaError, SchemaVersion
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
    if schema is not None:
        score_on_reviews(connect, schema, request, report)
    return report


def score_on_reviews(connect: Connect, schema: SchemaVersion, request: EvalRequest, report: EvalStageReport) -> None:
    """The version's stored items on each tenant's reviewers' decisions (`evaluation.reviewed`), stored like any
    dataset's run (`reviewed:<tenant>`), with its report."""
    from extraction_assets.lib.evaluation import render_html, store_eval
    from extraction_assets.lib.evaluation.reviewed import reviewed_tenants, score_version_on_reviews

    with connect(read_only=True) as con:
        scored = [score_version_on_reviews(con, schema, tenant) for tenant in reviewed_tenants(con, schema.schema_name)]
    for score in scored:
        if score is None:
            continue
        result = score.result
        request.reports_dir.mkdir(parents=True, exist_ok=True)
        html = request.reports_dir / f"{result.dataset.replace(':', '-')}-{schema.key.replace('@', '-')}.html"
        html.write_text(render_html(result), encoding="utf-8")
        with connect() as con:
            store_eval(con, result, report_path=str(html))
        report.scored.append(ScoredDataset(result, html, None))


def _schema(prompts_dir: Path, key: str) -> tuple[SchemaVersion | None, str | None]:
    try:
        return load_schema(prompts_dir, key), None
    except (SchemaError, OSError) as exc:
        return None, f"{key} has no usable prompt file ({exc})"


@dataclass
class ChallengerComparison:
    """A challenger beside its schema's current versions: every dataset both were scored on (the registry's dev
    sets, and each tenant's reviewers' decisions), the items queued where they disagree."""

    challenger: str
    currents: list[str]
    evaluated: list[str]  # versions scored on the dev sets by this comparison (the others had a run already)
    comparison_markdown: str
    disagreements: dict[str, int]
    scores: dict[str, dict[str, dict[str, float | None]]]  # dataset -> version -> {precision, recall, f1, ...}


@dataclass
class ChallengerReport:
    comparisons: list[ChallengerComparison] = field(default_factory=list)
    roles: dict[str, str] = field(default_factory=dict)  # version -> current / challenger / superseded
    promotions: list[dict[str, object]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def compare_challengers(
    connect: Connect,
    warehouse: Path | str,
    prompts_dir: Path,
    built: Extractor,
    request: EvalRequest,
    only: str | None = None,
    on_progress: Callable[[str, int, int], None] = lambda _name, _done, _total: None,
) -> ChallengerReport:
    """Each challenger (or `only` one) beside its current versions: a version not yet scored on the dev sets with the
    configured extractor is scored (`evaluate_version`), every one is scored again on the reviewers' decisions (their
    decisions move), then the versions' latest scores side by side (`evaluation.compare_versions`)."""
    from extraction_assets.lib.evaluation import (
        DEFAULT_REGISTRY,
        MICRO,
        compare_versions,
        comparison_markdown,
        latest_metrics,
        load_registry,
    )
    from extraction_assets.lib.evaluation.reviewed import ADDED_FIELD, DATASET_PREFIX
    from extraction_assets.lib.review.challengers import disagreements, read_promotions, read_roles
    from extraction_assets.lib.stages.review import sync_version_roles

    with connect() as con:
        sync_version_roles(con, prompts_dir)
        roles = read_roles(con)
        promotions = read_promotions(con)
    report = ChallengerReport(
        roles={key: role.role for key, role in sorted(roles.items())},
        promotions=[p.model_dump() for p in promotions],
    )
    challengers = [r for r in roles.values() if r.role == "challenger" and (only is None or r.schema_version == only)]
    if only is not None and not challengers:
        report.messages.append(
            f"{only} is not a challenger (its role: {roles[only].role if only in roles else 'none'})"
        )
    for role in sorted(challengers, key=lambda r: r.schema_version):
        versions = [*role.rivals, role.schema_version]
        evaluated = []
        for key in versions:
            schema, problem = _schema(prompts_dir, key)
            if schema is None:
                report.messages.append(problem or key)
                continue
            with connect(read_only=True) as con:
                scored = {
                    r[0]
                    for r in con.execute(
                        """SELECT DISTINCT dataset FROM eval_runs WHERE schema_version = ? AND extractor_version = ?
                           AND NOT starts_with(dataset, ?)""",
                        [key, built.version(schema), DATASET_PREFIX],
                    ).fetchall()
                }
            part = EvalStageReport()
            wanted = {e.name for e in load_registry(request.registry or DEFAULT_REGISTRY).for_schema(key)}
            missing = tuple(sorted(wanted - scored))
            if missing:
                datasets_request = EvalRequest(
                    registry=request.registry,
                    datasets=missing,
                    max_documents=request.max_documents,
                    sample_documents=request.sample_documents,
                    reports_dir=request.reports_dir,
                )
                part = evaluate_version(connect, warehouse, prompts_dir, key, built, datasets_request, on_progress)
                evaluated.append(key)
            else:
                score_on_reviews(connect, schema, request, part)
            report.messages += part.messages
        with connect(read_only=True) as con:
            rows = [r for r in latest_metrics(con) if r["schema_version"] in versions]
            queued = {key: disagreements(con, key) for key in versions}
        tables = compare_versions(rows)
        scores: dict[str, dict[str, dict[str, float | None]]] = {}
        for row in rows:
            into = scores.setdefault(row["dataset"], {}).setdefault(row["schema_version"], {})
            if row["field"] == MICRO:
                into.update(precision=row["precision"], recall=row["recall"], f1=row["f1"])
            elif row["field"] == ADDED_FIELD and row["support"]:
                into["missed_item_recall"] = row["recall"]
        report.comparisons.append(
            ChallengerComparison(
                challenger=role.schema_version,
                currents=role.rivals,
                evaluated=evaluated,
                comparison_markdown=comparison_markdown(tables),
                disagreements=queued,
                scores=scores,
            )
        )
    return report
