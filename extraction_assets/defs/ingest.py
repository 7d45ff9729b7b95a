"""Ingest assets: the inbox becomes raw_documents, then PII-scrubbed text the extractors may see."""

from collections import Counter

import dagster as dg

from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.lib.models import DeadLetter, Document, ReadFailure
from extraction_assets.lib.pii import SCRUBBER_VERSION
from extraction_assets.lib.pipeline import scrub_document
from extraction_assets.lib.readers import read_inbox
from extraction_assets.lib.reporting import markdown_table
from extraction_assets.lib.warehouse import (
    batched,
    documents_to_scrub,
    insert_documents,
    known_doc_ids,
    load_documents,
    record_dead_letters,
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
        new_letters = record_dead_letters(con, letters)
        total = int(con.execute("SELECT count(*) FROM raw_documents").fetchone()[0])  # type: ignore[index]
    for failure in failures:
        context.log.warning(f"unreadable {failure.source_uri}: {failure.reason}")
    kinds = Counter(d.kind for d in new_docs)
    context.log.info(f"read {len(documents)} documents, {inserted} new, {len(failures)} unreadable")
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "documents_read": len(documents),
            "new_documents": inserted,
            "skipped_known": len(documents) - len(new_docs),
            "unreadable_files": len(failures),
            "new_dead_letters": new_letters,
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
    description="PII-masked text with an offset map back to the raw text, and per-kind mask counts.",
)
def scrubbed_documents(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    with warehouse.connect() as con:
        pending = documents_to_scrub(con, SCRUBBER_VERSION)
    masked: Counter[str] = Counter()
    for batch in batched(pending, SCRUB_BATCH):
        with warehouse.connect() as con:
            docs = load_documents(con, batch)
            rows = [scrub_document(doc) for doc in docs]
            upsert_scrubbed(con, rows)
        for row in rows:
            masked.update(row.pii_counts)
        context.log.info(f"scrubbed {len(rows)} documents")
    with warehouse.connect() as con:
        total = int(con.execute("SELECT count(*) FROM scrubbed_documents").fetchone()[0])  # type: ignore[index]
    return dg.MaterializeResult(
        metadata={
            "dagster/row_count": total,
            "scrubbed_now": len(pending),
            "skipped_up_to_date": total - len(pending),
            "scrubber_version": SCRUBBER_VERSION,
            "masked_by_kind": dg.MetadataValue.json(dict(sorted(masked.items()))),
        }
    )
