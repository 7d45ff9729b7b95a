"""Challenger versions in the Dagster UI: `challenger_comparison` sets each challenger beside its schema's current
versions on the dev sets and on the reviewers' decisions, and lists who promoted what; `challenger_job`, launched
for a challenger's partition, goes from its prompt file to that comparison in one run (extract it, queue where it
disagrees, score it, compare)."""

import warnings
from typing import Any

import dagster as dg
from pydantic import Field

from extraction_assets.defs.evaluation.assets import eval_report
from extraction_assets.defs.partitions import POOL, SHARDS, schema_versions
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, WarehouseResource
from extraction_assets.lib.stages import EvalRequest, compare_challengers, reports_dir


class ChallengerConfig(dg.Config):
    challenger: str = Field(default="", description="only this challenger (default: every one)")
    max_documents: int | None = None  # score only the first N records of each dev set (default: all)


@dg.asset(
    group_name="evaluation",
    kinds={"duckdb", "python"},
    pool=POOL,
    deps=[eval_report],
    description="Each challenger version beside its schema's current versions, on the dev sets and on every "
    "tenant's reviewed decisions (missed-item recall included), the items queued where they disagree, and the "
    "promotions people made (each one audited).",
)
def challenger_comparison(
    context: dg.AssetExecutionContext,
    config: ChallengerConfig,
    warehouse: WarehouseResource,
    pipeline: PipelineResource,
    extractor: ExtractorResource,
) -> dg.MaterializeResult:
    request = EvalRequest(max_documents=config.max_documents, reports_dir=reports_dir(warehouse.path))
    report = compare_challengers(
        warehouse.connect,
        warehouse.path,
        pipeline.prompts_path,
        extractor.build(batch=False),
        request,
        only=config.challenger or None,
        on_progress=lambda name, done, total: context.log.info(f"{name}: {done}/{total}") if done == total else None,
    )
    for message in report.messages:
        context.log.warning(message)
    metadata: dict[str, Any] = {
        "challengers": len(report.comparisons),
        # JSON, not a Markdown table: table cells are masked, and a version key reads like an e-mail address
        "roles": dg.MetadataValue.json(report.roles),
        "promotions": dg.MetadataValue.json(report.promotions),
    }
    for comparison in report.comparisons:
        name = comparison.challenger
        metadata[f"{name}/against"] = ", ".join(comparison.currents) or "no current version"
        metadata[f"{name}/comparison"] = dg.MetadataValue.md(comparison.comparison_markdown)
        metadata[f"{name}/disagreements_queued"] = sum(comparison.disagreements.values())
        for dataset, versions in comparison.scores.items():
            for figure in ("f1", "missed_item_recall"):
                if (value := versions.get(name, {}).get(figure)) is not None:
                    metadata[f"{name}/{dataset}/{figure}"] = value
        metadata[f"{name}/promote"] = dg.MetadataValue.md(
            f"`extraction-assets challenger {name} --promote --note WHY` (audited; it supersedes "
            f"{', '.join(comparison.currents) or 'nothing'})"
        )
    return dg.MaterializeResult(metadata=metadata)


# The job holds the extraction's single-run assets and eval_report (one run per partition); Dagster warns that it
# takes the smaller, one partition a run, which is what the job is for: it is launched for one challenger's partition.
warnings.filterwarnings("ignore", message="Asset job challenger_job materializes assets with varying BackfillPolicies")
challenger_job = dg.define_asset_job(
    "challenger_job",
    selection=(dg.AssetSelection.groups("extraction", "review") if SHARDS == 1 else dg.AssetSelection.groups("review"))
    | dg.AssetSelection.assets(eval_report, challenger_comparison),
    partitions_def=schema_versions,
    description="A challenger version from its prompt file to its comparison, in one run: launch it for the "
    "challenger's partition (extract it, queue where it disagrees with the current version, score it on the dev "
    "sets and on the reviewers' decisions, set it beside the current version).",
)
