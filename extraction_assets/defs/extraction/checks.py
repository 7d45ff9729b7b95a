"""Checks on extraction, per schema-version partition: every item has evidence, quotes match their source,
confidences sit in their band, caps hold, statuses agree with reasons, and no evidence crosses tenants.

Each check reads the schema version it runs for (the one just materialized, every shard of it), so a run costs
what its partition holds, not what the whole warehouse holds; a backfill of every partition checks every row.
"""

import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import dagster as dg

from extraction_assets.defs.check_results import violations_result
from extraction_assets.defs.partitions import POOL, extraction_partition, extraction_partitions
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.schemas import SchemaVersion, load_schema
from extraction_assets.lib.warehouse import invariants

if TYPE_CHECKING:
    import duckdb

# partitioned checks are a preview feature of Dagster 1.13 (pinned below 1.14); said once in ARCHITECTURE.md
warnings.filterwarnings("ignore", message="Specifying a partitions_def on an AssetCheckSpec")


def _check(
    asset: str, description: str, blocking: bool = False
) -> Callable[[Callable[..., dg.AssetCheckResult]], dg.AssetChecksDefinition]:
    """A check of one partition, in the warehouse's `duckdb` pool."""
    return dg.asset_check(
        asset=asset, pool=POOL, blocking=blocking, partitions_def=extraction_partitions, description=description
    )


def _violations(
    context: dg.AssetCheckExecutionContext,
    warehouse: WarehouseResource,
    find: Callable[["duckdb.DuckDBPyConnection", str], Sequence[object]],
    what: str,
) -> dg.AssetCheckResult:
    """Run one invariant over the partition the check runs for."""
    with warehouse.connect(read_only=True) as con:
        return violations_result(find(con, extraction_partition(context.partition_key)[0]), what)


def _schema_violations(
    context: dg.AssetCheckExecutionContext,
    warehouse: WarehouseResource,
    pipeline: PipelineResource,
    find: Callable[["duckdb.DuckDBPyConnection", SchemaVersion], Sequence[object]],
    what: str,
) -> dg.AssetCheckResult:
    """Run one invariant that needs the partition's schema (its bands, its cap)."""
    schema = load_schema(pipeline.prompts_path, extraction_partition(context.partition_key)[0])
    return _violations(context, warehouse, lambda con, _key: find(con, schema), what)


@_check("extracted_items", "every item asserting a value cites at least one evidence row", blocking=True)
def every_item_has_evidence(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    return _violations(context, warehouse, invariants.items_without_evidence, "items without evidence")


@_check("extracted_items", "heuristic items in the heuristic band, model items in the model band, none at 1.0")
def confidence_within_band(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.AssetCheckResult:
    find = invariants.confidence_out_of_band
    return _schema_violations(context, warehouse, pipeline, find, "items outside their band")


@_check("extracted_items", "no document has more items than its schema's max_items")
def items_per_document_capped(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.AssetCheckResult:
    find = invariants.documents_over_cap
    return _schema_violations(context, warehouse, pipeline, find, "documents over their max_items")


@_check("extracted_items", "machine-owned items are needs_review exactly when they have review reasons")
def review_status_consistent(
    context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource
) -> dg.AssetCheckResult:
    find = invariants.review_status_mismatches
    return _violations(context, warehouse, find, "items whose status and reasons disagree")


@_check("grounded_evidence", "every quote equals raw_documents.text[char_start:char_end]", blocking=True)
def quotes_match_source(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _violations(context, warehouse, invariants.quote_mismatches, "quotes that differ from the source slice")


@_check("grounded_evidence", "tenant scope is never widened: item, evidence and document share one tenant", True)
def tenant_scope_kept(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return _violations(context, warehouse, invariants.cross_tenant_evidence, "evidence rows crossing tenants")
