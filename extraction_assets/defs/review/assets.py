"""The review queue, partitioned by schema version: derived from the items that need a person, of every shard.

It is rebuilt by itself after every extraction of its partition (an eager automation condition, while
upstream blocking checks pass).
"""

import dagster as dg

from extraction_assets.defs.automation import AFTER_UPSTREAM
from extraction_assets.defs.partitions import EVERY_SHARD, POOL, schema_for_partition, schema_versions
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.reporting import markdown_table
from extraction_assets.lib.warehouse import rebuild_review_queue, review_queue_figures


@dg.asset(
    partitions_def=schema_versions,
    group_name="review",
    kinds={"duckdb", "python"},
    pool=POOL,
    deps=[dg.AssetDep(key, partition_mapping=EVERY_SHARD) for key in ("extracted_items", "grounded_evidence")],
    automation_condition=AFTER_UPSTREAM,
    description="Items that need a person, with the rules that sent them there, most urgent first.",
)
def review_queue(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.MaterializeResult:
    key = schema_for_partition(pipeline.prompts_path, context.partition_key).key
    with warehouse.connect() as con:
        queued = rebuild_review_queue(con, key)
        figures = review_queue_figures(con, key)
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": queued,
            "by_rule": dg.MetadataValue.json(figures["by_rule"]),
            "items_by_status": dg.MetadataValue.json(figures["items_by_status"]),
            "preview": dg.MetadataValue.md(
                markdown_table(
                    ["type", "title", "conf", "reasons", "source"], [list(r.values()) for r in figures["preview"]]
                )
            ),
        }
    )
