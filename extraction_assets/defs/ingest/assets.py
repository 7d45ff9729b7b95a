"""Ingest assets: the inbox becomes raw_documents, then PII-scrubbed text the extractors may see."""

from pathlib import Path

import dagster as dg

from extraction_assets.defs.data_versions import data_version
from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.reporting import visible_controls
from extraction_assets.lib.stages import ScrubProgress, Throttled, ingest_inbox, scrub_pending


@dg.asset(
    group_name="ingest",
    kinds={"duckdb", "python"},
    pool=POOL,
    description="One row per readable document of the inbox (one folder per tenant); content-hashed ids.",
)
def raw_documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.MaterializeResult:
    from extraction_assets.lib.pii import (  # loaded per run, as the detectors are by the scrub step
        markdown_table,
        masked,
    )

    def shown(text: str) -> str:  # a file's name is the tenant's to choose: an escape sequence in it only shows
        return visible_controls(masked(text))

    with warehouse.pinned():
        report = ingest_inbox(warehouse.connect, pipeline.inbox_path, pipeline.max_file_bytes, pipeline.worker_niceness)
    unreadable = report.unreadable
    for failure in unreadable:
        context.log.warning(shown(f"unreadable {failure.source_uri}: {failure.reason}"))
    context.log.info(
        f"read {report.documents_read} documents, {report.inserted} new, {len(unreadable)} unreadable, "
        f"{report.skipped} skipped"
    )
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": report.total,
            "documents_read": report.documents_read,
            "new_documents": report.inserted,
            "skipped_known": report.skipped_known,
            "unreadable_files": len(unreadable),
            "files_read": report.files_read,
            "files_unchanged": report.files_unchanged,
            "duplicates": report.duplicates,
            "skipped_files": report.skipped,
            "new_dead_letters": report.new_dead_letters,
            "new_by_kind": dg.MetadataValue.json(dict(sorted(report.new_by_kind.items()))),
            "unreadable": dg.MetadataValue.md(
                markdown_table(["source", "reason"], [[f.source_uri, f.reason] for f in unreadable[:20]])
            ),
            # the same, one line each, for the command line's report (masked like every shown text)
            "unreadable_lines": dg.MetadataValue.json([shown(f"{f.source_uri}: {f.reason}") for f in unreadable[:50]]),
        }
    )


@dg.asset(
    group_name="ingest",
    kinds={"duckdb", "python"},
    pool=POOL,
    deps=[raw_documents],
    description="PII-masked text (each tenant's policy) with an offset map back to the raw text and per-kind counts.",
)
def scrubbed_documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.MaterializeResult:
    from extraction_assets.lib.pii import SCRUBBER_VERSION, key_from_env, key_id, load_policy, markdown_table  # per run

    policy = load_policy(Path(pipeline.pii_policy) if pipeline.pii_policy else None)
    vault_key = key_from_env()
    context.log.info(f"policy {policy.source}; vault {'on' if vault_key else 'off'}")

    say = Throttled(context.log.info)

    def progress(at: ScrubProgress) -> None:
        say(f"scrubbed {at.done}/{at.pending} documents ({at.failed} failed, {at.workers} processes)")

    with warehouse.pinned():
        report = scrub_pending(warehouse.connect, policy, vault_key, progress, pipeline.worker_niceness)
    rows = [
        [t, p.name, p.region, ", ".join(sorted(p.kinds)), p.scrubber_version, report.per_tenant[t]]
        for t, p in report.tenants.items()
    ]
    return dg.MaterializeResult(
        # nothing scrubbed: the version is kept, and extraction does not follow it for nothing
        data_version=data_version(context, "scrubbed_documents", None, changed=report.scrubbed_now > 0),
        metadata={
            "dagster/row_count": report.total,
            "scrubbed_now": report.scrubbed_now,
            "skipped_up_to_date": report.total - report.scrubbed_now,
            "scrub_failures": len(report.failures),
            "scrubber_version": SCRUBBER_VERSION,
            "policy_source": policy.source,
            "vault": f"on (key {key_id(vault_key)})" if vault_key else "off",
            "masked_by_kind": dg.MetadataValue.json(dict(sorted(report.masked.items()))),
            "policies": dg.MetadataValue.md(
                markdown_table(["tenant", "policy", "region", "kinds", "scrubber version", "scrubbed now"], rows)
            ),
        },
    )
