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
    """Every row, every run: a row whose fingerprint (`checked_hash`, set by the writer once it verified the id)
    still matches it is unchanged since; any other row has its id recomputed (`invariants.ids_not_content_hashes`)."""
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.ids_not_content_hashes(con), "documents whose id is not their content hash")


@dg.asset_check(
    asset="scrubbed_documents", pool=POOL, blocking=True, description="no e-mail, card or phone left unmasked"
)
def no_unmasked_pii(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    """Every row, every run: a text whose fingerprint (`checked_hash`, set with the text the scrub checked) still
    matches it is unchanged since; any other text is searched again (`invariants.unmasked_pii`)."""
    with warehouse.connect(read_only=True) as con:
        return violations_result(invariants.unmasked_pii(con), "unmasked values in scrubbed text")
