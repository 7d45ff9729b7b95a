"""The audit trail's check: the append-only log has not shrunk, no row of it has changed, and no item a person
owns was changed without it. The last intact head is also kept in a file beside the warehouse.

It is a check of the review queue asset, evaluated by the queue's step once per run (the log is one chain for
every schema version), so it is not tied to any one version's partition."""

import dagster as dg

from extraction_assets.defs.resources import WarehouseResource
from extraction_assets.lib.review import check_chain, keep_outside_head, read_outside_head, record_head
from extraction_assets.lib.review.audit import OUTSIDE_HEAD_SUFFIX
from extraction_assets.lib.warehouse import beside_warehouse, transaction

AUDIT_SPEC = dg.AssetCheckSpec(
    "audit_log_intact",
    asset="review_queue",
    description="audit_log's hash chain (HMAC when EXTRACTION_AUDIT_KEY is set) recomputes, still extends the "
    "heads recorded by the last check in the warehouse and beside it, and every human-owned item matches its "
    "last audit row",
)


def audit_log_result(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    outside = beside_warehouse(warehouse.path, OUTSIDE_HEAD_SUFFIX)
    with warehouse.connect(read_only=True) as con:  # the whole log is read with readers sharing the file
        report = check_chain(con, read_outside_head(outside) if outside else None)
    recorded = False
    if report.intact and report.head != report.previous:  # a head that moved is written in a short transaction
        with warehouse.connect() as con, transaction(con):
            recorded = record_head(con, report)
    if outside:
        keep_outside_head(outside, report)
    for problem in report.problems:
        context.log.error(f"audit_log: {problem}")
    previous = report.previous
    return dg.AssetCheckResult(
        asset_key=AUDIT_SPEC.asset_key,
        check_name=AUDIT_SPEC.name,
        passed=report.intact,
        metadata={
            "rows": report.head.row_count,
            "head_hash": report.head.head_hash or "",
            "previous_rows": previous.row_count if previous else 0,
            "previous_head_hash": (previous.head_hash or "") if previous else "",
            "head_recorded": recorded,
            "problems": dg.MetadataValue.json(report.problems[:20]),
        },
        description="; ".join(report.problems[:3]) if report.problems else None,
    )
