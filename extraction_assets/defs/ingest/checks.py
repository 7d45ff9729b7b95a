"""Checks on ingest: document ids are content hashes, and no PII is left unmasked in the scrubbed text."""

import dagster as dg

from extraction_assets.defs.check_results import violations_result
from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import WarehouseResource
from extraction_assets.lib.warehouse import invariants


@dg.asset_check(
    asset="raw_documents",
    pool=POOL,
    blocking=True,
    description="doc_id is the tenant-scoped hash of content and record identity",
)
def doc_ids_are_content_hashes(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.ids_not_content_hashes(con), "documents whose id is not their content hash")


@dg.asset_check(
    asset="scrubbed_documents", pool=POOL, blocking=True, description="no e-mail, card or phone left unmasked"
)
def no_unmasked_pii(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.unmasked_pii(con), "unmasked values in scrubbed text")
