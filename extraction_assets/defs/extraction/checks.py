"""Checks on extraction, per schema-version partition: every item has evidence, quotes match their source,
confidences sit in their band, caps hold, statuses agree with reasons, and no evidence crosses tenants.

Each check reads the partition it runs for (the one just materialized), so a run costs what its partition
holds, not what the whole warehouse holds; a backfill of every partition checks every row.
"""

import warnings
from collections.abc import Callable

import dagster as dg

from extraction_assets.defs.check_results import violations_result
from extraction_assets.defs.partitions import POOL, schema_versions
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.schemas import load_schema
from extraction_assets.lib.warehouse import invariants

# partitioned checks are a preview feature of Dagster 1.13 (pinned below 1.14); said once in ARCHITECTURE.md
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")


def _check(
    asset: str, description: str, blocking: bool = False
) -> Callable[[Callable[..., dg.AssetCheckResult]], dg.AssetChecksDefinition]:
    """A check of one partition, in the warehouse's `duckdb` pool."""
    return dg.asset_check(
        asset=asset, pool=POOL, blocking=blocking, partitions_def=schema_versions, description=description
    )


@_check("extracted_items", "every item asserting a value cites at least one evidence row", blocking=True)
def every_item_has_evidence(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        found = invariants.items_without_evidence(con, context.partition_key)
    return violations_result(found, "items without evidence")


@_check("extracted_items", "heuristic items in the heuristic band, model items in the model band, none at 1.0")
def confidence_within_band(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.AssetCheckResult:
    schema = load_schema(pipeline.prompts_path, context.partition_key)
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.confidence_out_of_band(con, schema), "items outside their band")


@_check("extracted_items", "no document has more items than its schema's max_items")
def items_per_document_capped(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.AssetCheckResult:
    schema = load_schema(pipeline.prompts_path, context.partition_key)
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.documents_over_cap(con, schema), "documents over their max_items")


@_check("extracted_items", "machine-owned items are needs_review exactly when they have review reasons")
def review_status_consistent(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        found = invariants.review_status_mismatches(con, context.partition_key)
    return violations_result(found, "items whose status and reasons disagree")


@_check("grounded_evidence", "every quote equals raw_documents.text[char_start:char_end]", blocking=True)
def quotes_match_source(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        found = invariants.quote_mismatches(con, context.partition_key)
    return violations_result(found, "quotes that differ from the source slice")


@_check("grounded_evidence", "tenant scope is never widened: item, evidence and document share one tenant", True)
def tenant_scope_kept(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        found = invariants.cross_tenant_evidence(con, context.partition_key)
    return violations_result(found, "evidence rows crossing tenants")
