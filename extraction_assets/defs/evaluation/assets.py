"""Evaluation assets: each schema version scored against the registry's gold data, then all versions compared."""

from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field

from extraction_assets.defs.partitions import POOL, schema_versions
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, WarehouseResource
from extraction_assets.lib.reporting import markdown_table
from extraction_assets.lib.schemas import SchemaError, SchemaVersion, load_schema
from extraction_assets.lib.warehouse import beside_warehouse


class EvalReportConfig(dg.Config):
    max_documents: int | None = None  # score only the first N records of each dataset (default: all)
    registry: str = ""  # registry file (default: evals/registry.yaml)
    datasets: list[str] = Field(
        default_factory=list
    )  # only these registry entries (default: every entry that scores the version)
    sample_documents: int = 5  # documents shown with highlighted spans in the HTML report


def reports_dir(warehouse: WarehouseResource) -> Path:
    """Beside the warehouse file (or a DuckLake's local catalog or data folder), else under `.data`."""
    beside = beside_warehouse(warehouse.path, "")
    return (beside.resolve().parent if beside else Path(".data").resolve()) / "eval_reports"


def _schema(pipeline: PipelineResource, key: str) -> tuple[SchemaVersion | None, str | None]:
    try:
        return load_schema(pipeline.prompts_path, key), None
    except (SchemaError, OSError) as exc:
        return None, f"{key} has no usable prompt file ({exc})"


@dg.asset(
    partitions_def=schema_versions,
    group_name="evaluation",
    kinds={"duckdb", "python"},
    pool=POOL,
    description="The schema version scored on every registry dataset for it: P/R/F1 per field, grounding, "
    "calibration and cost, stored in eval_runs/eval_metrics, with a self-contained HTML report.",
)
def eval_report(
    context: dg.AssetExecutionContext,
    config: EvalReportConfig,
    warehouse: WarehouseResource,
    pipeline: PipelineResource,
    extractor: ExtractorResource,
) -> dg.MaterializeResult:
    from extraction_assets.lib.evaluation import (
        DEFAULT_REGISTRY,
        MICRO,
        EvalConfigError,
        EvalResult,
        WarehouseModelCache,
        available_entries,
        data_uri,
        load_registry,
        markdown_summary,
        reliability_png,
        render_html,
        run_eval,
        store_eval,
    )

    key = context.partition_key
    registry = load_registry(Path(config.registry) if config.registry else DEFAULT_REGISTRY)
    wanted = [e for e in registry.for_schema(key) if not config.datasets or e.name in config.datasets]
    entries, messages = available_entries(wanted)
    schema, schema_problem = _schema(pipeline, key)
    built = extractor.build(batch=False)
    out_dir = reports_dir(warehouse)
    results: list[EvalResult] = []
    metadata: dict[str, Any] = {}
    for entry in entries:
        if schema is None and entry.mode != "entity_spans":
            messages.append(f"dataset {entry.name!r} skipped: {schema_problem}")
            continue

        def progress(done: int, total: int, name: str = entry.name) -> None:
            if total and (done == total or done % max(1, total // 10) == 0):
                context.log.info(f"{key} on {name}: {done}/{total} documents")

        try:
            result = run_eval(
                entry,
                entry.resolved_path(),
                schema,
                built,
                schema_key=key,
                limit=config.max_documents,
                samples=config.sample_documents,
                on_progress=progress,
                cache=WarehouseModelCache(warehouse.path),
            )
        except EvalConfigError as exc:
            messages.append(f"dataset {entry.name!r} skipped: {exc}")
            continue
        out_dir.mkdir(parents=True, exist_ok=True)
        html = out_dir / f"{entry.name}-{key.replace('@', '-')}.html"
        html.write_text(render_html(result), encoding="utf-8")
        with warehouse.connect() as con:
            store_eval(con, result, report_path=str(html))
        results.append(result)
        micro = next(f for f in result.fields if f.field == MICRO)
        metadata[f"{entry.name}/documents"] = result.documents  # every figure says what it was measured on
        metadata[f"{entry.name}/slice"] = bool(result.document_limit)  # True: the first N records only
        for figure in ("f1", "recall"):  # numbers the UI plots across materializations
            if (value := getattr(micro, figure)) is not None:
                metadata[f"{entry.name}/{figure}"] = value
        metadata[f"{entry.name}/report"] = dg.MetadataValue.path(str(html))
        if result.calibration.points:
            png = reliability_png(result.calibration.bins, f"{entry.name} on {key}")
            (out_dir / html.with_suffix(".png").name).write_bytes(png)
            metadata[f"{entry.name}/reliability"] = dg.MetadataValue.md(f"![reliability]({data_uri(png)})")
    for message in messages:
        context.log.warning(message)
    return dg.MaterializeResult(
        metadata={
            "datasets_scored": len(results),
            "documents": sum(r.documents for r in results),
            "scores": dg.MetadataValue.md(markdown_summary(results)),
            "skipped": dg.MetadataValue.md(markdown_table(["message"], [[m] for m in messages], width=400)),
            **metadata,
        }
    )


@dg.asset(
    group_name="evaluation",
    kinds={"duckdb", "python"},
    pool=POOL,
    deps=[eval_report],
    description="Every evaluated schema version side by side, with per-field deltas against the previous version.",
)
def eval_comparison(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    from extraction_assets.lib.evaluation import (
        compare_versions,
        comparison_markdown,
        data_uri,
        history_png,
        latest_metrics,
        micro_history,
    )

    with warehouse.connect() as con:
        comparisons = compare_versions(latest_metrics(con))
        history = micro_history(con)
    context.log.info(f"{len(comparisons)} datasets, {len(history)} runs in the history")
    metadata: dict[str, Any] = {
        "datasets": len(comparisons),
        "configurations": sum(len(c.columns) for c in comparisons),
        "comparison": dg.MetadataValue.md(comparison_markdown(comparisons)),
    }
    if history:
        metadata["history"] = dg.MetadataValue.md(f"![history]({data_uri(history_png(history))})")
    return dg.MaterializeResult(metadata=metadata)
