"""Evaluation assets: each schema version scored against the registry's gold data, then all versions compared."""

from pathlib import Path
from typing import Any
from urllib.parse import quote

import dagster as dg
from pydantic import Field

from extraction_assets.defs.partitions import POOL, schema_versions
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, WarehouseResource
from extraction_assets.lib.stages import EvalRequest, evaluate_version, reports_dir


class EvalReportConfig(dg.Config):
    max_documents: int | None = None  # score only the first N records of each dataset (default: all)
    registry: str = ""  # registry file (default: evals/registry.yaml)
    datasets: list[str] = Field(
        default_factory=list
    )  # only these registry entries (default: every entry that scores the version)
    sample_documents: int = 5  # documents shown with highlighted spans in the HTML report


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
    # the evaluation stack (jinja2, matplotlib, the scorers) and the detectors load with the step, not the code location
    from extraction_assets.lib.evaluation import MICRO, data_uri, markdown_summary, review_figures
    from extraction_assets.lib.evaluation.reviewed import ADDED_FIELD
    from extraction_assets.lib.pii import markdown_table

    key = context.partition_key
    request = EvalRequest(
        registry=Path(config.registry) if config.registry else None,
        datasets=tuple(config.datasets),
        max_documents=config.max_documents,
        sample_documents=config.sample_documents,
        reports_dir=reports_dir(warehouse.path),
    )

    def progress(name: str, done: int, total: int) -> None:
        if total and (done == total or done % max(1, total // 10) == 0):
            context.log.info(f"{key} on {name}: {done}/{total} documents")

    built = extractor.build(batch=False)
    report = evaluate_version(warehouse.connect, warehouse.path, pipeline.prompts_path, key, built, request, progress)
    metadata: dict[str, Any] = {}
    for scored in report.scored:
        result, name = scored.result, scored.result.dataset
        micro = next(f for f in result.fields if f.field == MICRO)
        metadata[f"{name}/documents"] = result.documents  # every figure says what it was measured on
        metadata[f"{name}/slice"] = bool(result.document_limit)  # True: the first N records only
        for figure in ("f1", "recall"):  # numbers the UI plots across materializations
            if (value := getattr(micro, figure)) is not None:
                metadata[f"{name}/{figure}"] = value
        for figure, value in review_figures(result).items():  # what review does with wrong values; items vs chance
            metadata[f"{name}/{figure}"] = value
        added = next((f for f in result.fields if f.field == ADDED_FIELD and f.support), None)
        if added is not None:  # scored on reviewers' decisions: how much of what the extractor missed it finds
            metadata[f"{name}/missed_item_recall"] = added.recall
        metadata[f"{name}/report"] = _report_link(scored.html, pipeline.reports_url)
        if scored.reliability_png is not None:
            metadata[f"{name}/reliability"] = dg.MetadataValue.md(f"![reliability]({data_uri(scored.reliability_png)})")
    for message in report.messages:
        context.log.warning(message)
    results = [s.result for s in report.scored]
    return dg.MaterializeResult(
        metadata={
            "datasets_scored": len(results),
            "documents": sum(r.documents for r in results),
            "scores": dg.MetadataValue.md(markdown_summary(results)),
            "skipped": dg.MetadataValue.md(markdown_table(["message"], [[m] for m in report.messages], width=400)),
            **metadata,
        }
    )


def _report_link(html: Path, reports_url: str | None) -> dg.MetadataValue:
    """A link that opens the HTML report where its folder is served (`extraction-assets ui` serves it), else its
    path (a materialization outside the UI)."""
    if reports_url:
        return dg.MetadataValue.url(f"{reports_url.rstrip('/')}/{quote(html.name)}")
    return dg.MetadataValue.path(str(html))


@dg.asset(
    group_name="evaluation",
    kinds={"duckdb", "python"},
    pool=POOL,
    deps=[eval_report],
    description="Every evaluated schema version side by side, with per-field deltas against the previous version.",
)
def eval_comparison(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    from extraction_assets.lib.evaluation import (  # the evaluation stack loads with the step
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
