"""Ingest assets: the inbox becomes raw_documents, then PII-scrubbed text the extractors may see."""

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import dagster as dg

from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.models import DeadLetter, Document, ReadFailure
from extraction_assets.lib.reporting import markdown_table
from extraction_assets.lib.warehouse import (
    batched,
    documents_to_scrub,
    file_stamps,
    insert_documents,
    iter_batches,
    load_documents,
    record_dead_letters,
    record_file_stamps,
    row_count,
    stored_sources,
    tenant_ids,
    upsert_scrubbed,
)

SCRUB_BATCH = 200
INGEST_BATCH = 200


def _duplicate(doc: Document, first_source: str) -> DeadLetter:
    """A copy of a document already read from another file: counted, never stored twice."""
    return DeadLetter(
        stage="duplicate",
        tenant_id=doc.tenant_id,
        source_uri=doc.source_uri,
        doc_id=doc.doc_id,
        reason=f"same document as {first_source}",
    )


@dg.asset(
    group_name="ingest",
    kinds={"duckdb", "python"},
    pool=POOL,
    description="One row per readable document of the inbox (one folder per tenant); content-hashed ids.",
)
def raw_documents(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> dg.MaterializeResult:
    from extraction_assets.lib.pii import masked  # loaded per run, as the detectors are by the scrub step
    from extraction_assets.lib.readers import read_inbox  # loaded per run; pypdf, openpyxl with a first PDF or xlsx

    seen: dict[str, str] = {}  # id -> first source: documents are read, stored and let go a batch at a time
    failures: list[ReadFailure] = []
    duplicates: list[DeadLetter] = []
    kinds: Counter[str] = Counter()
    inserted = 0
    with warehouse.connect() as con:
        last_read = file_stamps(con)
    read_now: dict[str, tuple[int, int]] = {}
    unchanged = Counter[str]()

    def needs_reading(source_uri: str, size: int, mtime_ns: int) -> bool:
        """Only new and changed files are read: an unchanged inbox costs a stat per file."""
        if last_read.get(source_uri) == (size, mtime_ns):
            unchanged["files"] += 1
            return False
        read_now[source_uri] = (size, mtime_ns)
        return True

    for records in iter_batches(read_inbox(pipeline.inbox_path, pipeline.max_file_bytes, needs_reading), INGEST_BATCH):
        batch: list[Document] = []
        for record in records:
            if isinstance(record, ReadFailure):
                failures.append(record)
            elif record.doc_id in seen:  # the same document again in this run: the first file wins, the copy counts
                duplicates.append(_duplicate(record, seen[record.doc_id]))
            else:
                seen[record.doc_id] = record.source_uri
                batch.append(record)
        with warehouse.connect() as con:
            known = stored_sources(con, [d.doc_id for d in batch])
            new_docs = [d for d in batch if d.doc_id not in known]
            inserted += insert_documents(con, new_docs)
        duplicates += [
            _duplicate(d, known[d.doc_id]) for d in batch if known.get(d.doc_id, d.source_uri) != d.source_uri
        ]
        kinds.update(d.kind for d in new_docs)
    letters = [
        DeadLetter(
            stage="skipped" if f.skipped else "ingest", tenant_id=f.tenant_id, source_uri=f.source_uri, reason=f.reason
        )
        for f in failures
    ] + duplicates
    with warehouse.connect() as con:
        new_letters = record_dead_letters(con, letters)
        record_file_stamps(con, read_now)  # only now: a crash before this reads the files again, losing nothing
        total = row_count(con, "raw_documents")
    unreadable = [f for f in failures if not f.skipped]  # an unchanged file is not read again: warned about once
    for failure in unreadable:
        context.log.warning(masked(f"unreadable {failure.source_uri}: {failure.reason}"))
    skipped = len(failures) - len(unreadable)
    context.log.info(f"read {len(seen)} documents, {inserted} new, {len(unreadable)} unreadable, {skipped} skipped")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "documents_read": len(seen),
            "new_documents": inserted,
            "skipped_known": len(seen) - sum(kinds.values()),
            "unreadable_files": len(unreadable),
            "files_read": len(read_now),
            "files_unchanged": unchanged["files"],
            "duplicates": len(duplicates),
            "skipped_files": skipped,
            "new_dead_letters": new_letters,
            "new_by_kind": dg.MetadataValue.json(dict(sorted(kinds.items()))),
            "unreadable": dg.MetadataValue.md(
                markdown_table(["source", "reason"], [[f.source_uri, f.reason] for f in unreadable[:20]])
            ),
            # the same, one line each, for the command line's report (masked like every shown text)
            "unreadable_lines": dg.MetadataValue.json([masked(f"{f.source_uri}: {f.reason}") for f in unreadable[:50]]),
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
    from extraction_assets.lib.pii import (  # per run: the detectors load with the step
        SCRUBBER_VERSION,
        key_from_env,
        key_id,
        load_policy,
        scrub_batch,
        scrub_in_workers,
        scrub_workers,
    )

    policy = load_policy(Path(pipeline.pii_policy) if pipeline.pii_policy else None)
    vault_key = key_from_env()
    with warehouse.connect(read_only=True) as con:
        tenants = {t: policy.for_tenant(t) for t in tenant_ids(con)}
        pending = documents_to_scrub(con, {t: p.scrubber_version for t, p in tenants.items()})
    context.log.info(f"{len(pending)} documents to scrub; policy {policy.source}; vault {'on' if vault_key else 'off'}")
    masked: Counter[str] = Counter()
    per_tenant: Counter[str] = Counter()
    failures: list[DeadLetter] = []
    done = 0

    def loaded() -> Iterator[list[Document]]:
        for ids in batched(pending, SCRUB_BATCH):
            with warehouse.connect(read_only=True) as con:
                docs = load_documents(con, ids)
            yield docs  # closed first: the batch is scrubbed while the generator waits

    workers = scrub_workers(len(pending), SCRUB_BATCH)
    scrubbed = (  # no connection is held while a batch of large files is scrubbed
        scrub_in_workers(loaded(), policy, vault_key, workers)
        if workers > 1
        else (scrub_batch(docs, policy, vault_key) for docs in loaded())
    )
    for batch in scrubbed:
        with warehouse.connect() as con:
            upsert_scrubbed(con, batch.rows, batch.sealed)
            record_dead_letters(con, batch.failures)
        masked.update(batch.masked)
        per_tenant.update(batch.per_tenant)
        failures.extend(batch.failures)
        done += len(batch.rows) + len(batch.failures)
        context.log.info(f"scrubbed {done}/{len(pending)} documents ({len(failures)} failed, {workers} processes)")
    with warehouse.connect(read_only=True) as con:
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
