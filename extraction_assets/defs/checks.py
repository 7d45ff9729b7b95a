"""Asset checks: the warehouse invariants, reported on every materialization.

They check the whole warehouse (every schema version), since an invariant broken in one partition
is broken for every reader of the table.
"""

import dagster as dg

from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.models import Document
from extraction_assets.lib.schemas import SchemaVersion, discover_schemas
from extraction_assets.lib.warehouse import invariants


def _schemas(pipeline: PipelineResource) -> list[SchemaVersion]:
    return list(discover_schemas(pipeline.prompts_path)[0].values())


def _result(violations: list, what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not violations,
        metadata={"violations": len(violations), "examples": dg.MetadataValue.json([str(v) for v in violations[:10]])},
        description=f"{len(violations)} {what}" if violations else None,
    )


@dg.asset_check(asset="raw_documents", pool=POOL, blocking=True, description="doc_id is the tenant-scoped content hash")
def doc_ids_are_content_hashes(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        rows = con.execute("SELECT doc_id, tenant_id, kind, text FROM raw_documents").fetchall()
    bad = [doc_id for doc_id, tenant, kind, text in rows if Document.make_id(tenant, kind, text) != doc_id]
    return _result(bad, "documents whose id is not their content hash")


@dg.asset_check(
    asset="scrubbed_documents", pool=POOL, blocking=True, description="no e-mail, card or phone left unmasked"
)
def no_unmasked_pii(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return _result(invariants.unmasked_pii(con), "unmasked values in scrubbed text")


@dg.asset_check(asset="extracted_items", pool=POOL, blocking=True)
def every_item_has_evidence(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return _result(invariants.items_without_evidence(con), "items without evidence")


@dg.asset_check(asset="extracted_items", pool=POOL)
def confidence_within_band(warehouse: WarehouseResource, pipeline: PipelineResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        bad = [v for schema in _schemas(pipeline) for v in invariants.confidence_out_of_band(con, schema)]
    return _result(bad, "items outside their extractor's band")


@dg.asset_check(asset="extracted_items", pool=POOL)
def items_per_document_capped(warehouse: WarehouseResource, pipeline: PipelineResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        bad = [v for schema in _schemas(pipeline) for v in invariants.documents_over_cap(con, schema)]
    return _result(bad, "documents over their schema's max_items")


@dg.asset_check(asset="extracted_items", pool=POOL)
def review_status_consistent(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return _result(invariants.review_status_mismatches(con), "items whose status and reasons disagree")


@dg.asset_check(asset="grounded_evidence", pool=POOL, blocking=True)
def quotes_match_source(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return _result(invariants.quote_mismatches(con), "quotes that differ from the source slice")


@dg.asset_check(
    asset="grounded_evidence",
    pool=POOL,
    blocking=True,
    description="tenant scope is never widened",
)
def tenant_scope_kept(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return _result(invariants.cross_tenant_evidence(con), "evidence rows crossing tenants")
