"""The audit trail's check: the append-only log has not shrunk, no row of it has changed, and no item a person
owns was changed without it. The last intact head is also kept in a file beside the warehouse.

It is a check of the review queue asset, evaluated by the queue's step once per run (the log is one chain for
every schema version), so it is not tied to any one version's partition."""

import dagster as dg

from extraction_assets.defs.resources import WarehouseResource
from extraction_assets.lib.stages import check_audit_log

AUDIT_SPEC = dg.AssetCheckSpec(
    "audit_log_intact",
    asset="review_queue",
    description="audit_log's hash chain (HMAC when EXTRACTION_AUDIT_KEY is set) recomputes, still extends the "
    "heads recorded by the last check in the warehouse and beside it, and every human-owned item matches its "
    "last audit row",
)


def audit_log_result(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.AssetCheckResult:
    checked = check_audit_log(warehouse.connect, warehouse.path)
    report = checked.report
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
            "head_recorded": checked.recorded,
            "problems": dg.MetadataValue.json(report.problems[:20]),
        },
        description="; ".join(report.problems[:3]) if report.problems else None,
    )
