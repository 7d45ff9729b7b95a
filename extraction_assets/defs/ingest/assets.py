"""Ingest assets: the inbox becomes raw_documents, then PII-scrubbed text the extractors may see."""

from collections import Counter
from pathlib import Path

import dagster as dg

from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.models import DeadLetter, Document, ReadFailure
from extraction_assets.lib.pii import SCRUBBER_VERSION, key_from_env, key_id, load_policy, scrub_batch
from extraction_assets.lib.reporting import markdown_table
from extraction_assets.lib.warehouse import (
    batched,
    documents_to_scrub,
    insert_documents,
    known_doc_ids,
    load_documents,
    record_dead_letters,
    row_count,
    tenant_ids,
    upsert_scrubbed,
)

SCRUB_BATCH = 200


@dg.asset(
    group_name="ingest",
    kinds={"duckdb", "python"},
    pool=POOL,
    description="One row per readable document of the inbox (one folder per tenant); content-hashed ids.",
)
def raw_documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.MaterializeResult:
    from extraction_assets.lib.readers import read_inbox  # PDF and spreadsheet readers (~0.4 s) load per run

    documents: dict[str, Document] = {}
    failures: list[ReadFailure] = []
    for record in read_inbox(pipeline.inbox_path):
        if isinstance(record, ReadFailure):
            failures.append(record)
        else:
            documents.setdefault(record.doc_id, record)
    letters = [
        DeadLetter(stage="ingest", tenant_id=f.tenant_id, source_uri=f.source_uri, reason=f.reason) for f in failures
    ]
    with warehouse.connect() as con:
        known = known_doc_ids(con)
        new_docs = [d for d in documents.values() if d.doc_id not in known]
        inserted = insert_documents(con, new_docs)
        # one at a time, to know which are new: a file already in dead_letters is not warned about on every run
        new_failures = [f for f, letter in zip(failures, letters, strict=True) if record_dead_letters(con, [letter])]
        total = row_count(con, "raw_documents")
    for failure in new_failures:
        context.log.warning(f"unreadable {failure.source_uri}: {failure.reason}")
    if len(failures) > len(new_failures):
        context.log.info(f"{len(failures) - len(new_failures)} unreadable files already in dead_letters")
    kinds = Counter(d.kind for d in new_docs)
    context.log.info(f"read {len(documents)} documents, {inserted} new, {len(failures)} unreadable")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "documents_read": len(documents),
            "new_documents": inserted,
            "skipped_known": len(documents) - len(new_docs),
            "unreadable_files": len(failures),
            "new_dead_letters": len(new_failures),
            "new_by_kind": dg.MetadataValue.json(dict(sorted(kinds.items()))),
            "unreadable": dg.MetadataValue.md(
                markdown_table(["source", "reason"], [[f.source_uri, f.reason] for f in failures[:20]])
            ),
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
    policy = load_policy(Path(pipeline.pii_policy) if pipeline.pii_policy else None)
    vault_key = key_from_env()
    with warehouse.connect() as con:
        tenants = {t: policy.for_tenant(t) for t in tenant_ids(con)}
        pending = documents_to_scrub(con, {t: p.scrubber_version for t, p in tenants.items()})
    context.log.info(f"{len(pending)} documents to scrub; policy {policy.source}; vault {'on' if vault_key else 'off'}")
    masked: Counter[str] = Counter()
    per_tenant: Counter[str] = Counter()
    failures: list[DeadLetter] = []
    done = 0
    for ids in batched(pending, SCRUB_BATCH):
        with warehouse.connect() as con:
            batch = scrub_batch(load_documents(con, ids), policy, vault_key)
            upsert_scrubbed(con, batch.rows, batch.sealed)
            record_dead_letters(con, batch.failures)
        masked.update(batch.masked)
        per_tenant.update(batch.per_tenant)
        failures.extend(batch.failures)
        done += len(ids)
        context.log.info(f"scrubbed {done}/{len(pending)} documents ({len(failures)} failed)")
    with warehouse.connect() as con:
        total = row_count(con, "scrubbed_documents")
    rows = [
        [t, p.name, p.region, ", ".join(sorted(p.kinds)), p.scrubber_version, per_tenant[t]] for t, p in tenants.items()
    ]
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "scrubbed_now": len(pending) - len(failures),
            "skipped_up_to_date": total - (len(pending) - len(failures)),
            "scrub_failures": len(failures),
            "scrubber_version": SCRUBBER_VERSION,
            "policy_source": policy.source,
            "vault": f"on (key {key_id(vault_key)})" if vault_key else "off",
            "masked_by_kind": dg.MetadataValue.json(dict(sorted(masked.items()))),
            "policies": dg.MetadataValue.md(
                markdown_table(["tenant", "policy", "region", "kinds", "scrubber version", "scrubbed now"], rows)
            ),
        }
    )
