"""The warehouse (a DuckDB file, or a DuckLake catalog): table DDL, connections, every read and write the pipeline
makes, the figures assets report, invariants, summary."""

from extraction_assets.lib.warehouse.applicability import Placed, documents_to_route, write_decisions
from extraction_assets.lib.warehouse.backend import beside_warehouse, is_lake, retry_conflicts
from extraction_assets.lib.warehouse.batches import (
    batch_requests,
    open_batches,
    record_batch,
    store_batch_answers,
    update_batch_status,
    waiting_request_hashes,
)
from extraction_assets.lib.warehouse.connection import (
    batched,
    insert_rows,
    iter_batches,
    now,
    open_warehouse,
    rows_as_dicts,
    table_counts,
    transaction,
)
from extraction_assets.lib.warehouse.currency import queue_in_step
from extraction_assets.lib.warehouse.ddl import TABLES, ensure_schema
from extraction_assets.lib.warehouse.documents import (
    StoredDocument,
    document_from_row,
    document_rows,
    documents_to_scrub,
    file_stamps,
    insert_documents,
    load_documents,
    load_scrubbed,
    record_dead_letters,
    record_file_stamps,
    scrubbed_from_row,
    scrubbed_row,
    scrubbed_rows,
    stored_document,
    stored_sources,
    tenant_ids,
    texts_to_scrub,
    upsert_scrubbed,
)
from extraction_assets.lib.warehouse.extraction import (
    MACHINE_OWNED_STATUSES,
    cache_entries_for,
    insert_cache_entries,
    pending_extractions,
    write_extraction_batch,
)
from extraction_assets.lib.warehouse.figures import (
    extraction_figures,
    review_queue_figures,
    row_count,
    versions_summary,
)
from extraction_assets.lib.warehouse.held import HeldWarehouse, give_back, held_warehouse
from extraction_assets.lib.warehouse.invariants import items_without_evidence
from extraction_assets.lib.warehouse.lock_wait import READER_WAIT_S, WarehouseBusy
from extraction_assets.lib.warehouse.ocr import evidence_regions
from extraction_assets.lib.warehouse.review_queue import rebuild_review_queue, requeue_items
from extraction_assets.lib.warehouse.sessions import (
    document_texts,
    load_session,
    load_session_rows,
    load_session_state,
    session_item_ids,
    upsert_session,
    upsert_session_document,
    write_checkpoint,
    write_session_state,
)
from extraction_assets.lib.warehouse.shards import ALL_DOCUMENTS, Shard, shard_documents, shard_of
from extraction_assets.lib.warehouse.summary import warehouse_summary
from extraction_assets.lib.warehouse.worker_lock import one_worker

__all__ = [
    "ALL_DOCUMENTS",
    "MACHINE_OWNED_STATUSES",
    "READER_WAIT_S",
    "TABLES",
    "HeldWarehouse",
    "Placed",
    "Shard",
    "StoredDocument",
    "WarehouseBusy",
    "batch_requests",
    "batched",
    "beside_warehouse",
    "cache_entries_for",
    "document_from_row",
    "document_rows",
    "document_texts",
    "documents_to_route",
    "documents_to_scrub",
    "ensure_schema",
    "evidence_regions",
    "extraction_figures",
    "file_stamps",
    "give_back",
    "held_warehouse",
    "insert_cache_entries",
    "insert_documents",
    "insert_rows",
    "is_lake",
    "items_without_evidence",
    "iter_batches",
    "load_documents",
    "load_scrubbed",
    "load_session",
    "load_session_rows",
    "load_session_state",
    "now",
    "one_worker",
    "open_batches",
    "open_warehouse",
    "pending_extractions",
    "queue_in_step",
    "rebuild_review_queue",
    "record_batch",
    "record_dead_letters",
    "record_file_stamps",
    "requeue_items",
    "retry_conflicts",
    "review_queue_figures",
    "row_count",
    "rows_as_dicts",
    "scrubbed_from_row",
    "scrubbed_row",
    "scrubbed_rows",
    "session_item_ids",
    "shard_documents",
    "shard_of",
    "store_batch_answers",
    "stored_document",
    "stored_sources",
    "table_counts",
    "tenant_ids",
    "texts_to_scrub",
    "transaction",
    "update_batch_status",
    "upsert_scrubbed",
    "upsert_session",
    "upsert_session_document",
    "versions_summary",
    "waiting_request_hashes",
    "warehouse_summary",
    "write_checkpoint",
    "write_decisions",
    "write_extraction_batch",
    "write_session_state",
]
