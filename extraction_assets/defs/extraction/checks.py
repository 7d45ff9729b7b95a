"""Checks on extraction: every item has evidence, quotes match their source, confidences sit in their band,
caps hold, statuses agree with reasons, and no evidence crosses tenants.

They check the whole warehouse (every schema version), since an invariant broken in one partition
is broken for every reader of the table.
"""

import dagster as dg

from extraction_assets.defs.check_results import known_schemas, violations_result
from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.warehouse import invariants


@dg.asset_check(
    asset="extracted_items",
    pool=POOL,
    blocking=True,
    description="every item has at least one evidence row (evidence or nothing)",
)
def every_item_has_evidence(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.items_without_evidence(con), "items without evidence")


@dg.asset_check(
    asset="extracted_items",
    pool=POOL,
    description="each confidence lies in its extractor's band (heuristic or model) of its schema",
)
def confidence_within_band(warehouse: WarehouseResource, pipeline: PipelineResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        bad = [v for schema in known_schemas(pipeline) for v in invariants.confidence_out_of_band(con, schema)]
    return violations_result(bad, "items outside their extractor's band")


@dg.asset_check(
    asset="extracted_items", pool=POOL, description="no document holds more items than its schema's max_items"
)
def items_per_document_capped(warehouse: WarehouseResource, pipeline: PipelineResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        bad = [v for schema in known_schemas(pipeline) for v in invariants.documents_over_cap(con, schema)]
    return violations_result(bad, "documents over their schema's max_items")


@dg.asset_check(
    asset="extracted_items",
    pool=POOL,
    description="a machine-owned item is needs_review exactly when it has review reasons, draft when it has none",
)
def review_status_consistent(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.review_status_mismatches(con), "items whose status and reasons disagree")


@dg.asset_check(
    asset="grounded_evidence",
    pool=POOL,
    blocking=True,
    description="every quote equals the raw text slice at its offsets",
)
def quotes_match_source(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.quote_mismatches(con), "quotes that differ from the source slice")


@dg.asset_check(
    asset="grounded_evidence",
    pool=POOL,
    blocking=True,
    description="tenant scope is never widened",
)
def tenant_scope_kept(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.cross_tenant_evidence(con), "evidence rows crossing tenants")
