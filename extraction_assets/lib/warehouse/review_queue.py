"""The review queue: derived from the items that need a person, kept in step with every change a person makes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse.backend import retry_conflicts
from extraction_assets.lib.warehouse.connection import now, transaction

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

_QUEUE_ROWS = """INSERT INTO review_queue (item_id, tenant_id, doc_id, schema_version, item_type, title, confidence,
                 reasons, evidence_quote, source_uri, priority, queued_at)
               SELECT i.item_id, i.tenant_id, i.doc_id, i.schema_version, i.item_type, i.title, i.confidence,
                      i.review_reasons,
                      (SELECT e.quote FROM evidence e WHERE e.item_id = i.item_id
                       ORDER BY e.char_start LIMIT 1),
                      r.source_uri,
                      round(json_array_length(i.review_reasons) + (1.0 - i.confidence), 4),
                      ?
               FROM extracted_items i JOIN raw_documents r USING (doc_id)
               WHERE i.status = 'needs_review' AND """


@retry_conflicts
def rebuild_review_queue(con: duckdb.DuckDBPyConnection, schema_version: str) -> int:
    """The queue of a partition is derived from its items: needs_review items, with reasons and context."""
    with transaction(con):
        con.execute("DELETE FROM review_queue WHERE schema_version = ?", [schema_version])
        con.execute(_QUEUE_ROWS + "i.schema_version = ?", [now(), schema_version])
    return int(
        con.execute("SELECT count(*) FROM review_queue WHERE schema_version = ?", [schema_version]).fetchone()[0]  # type: ignore[index]
    )


def requeue_items(con: duckdb.DuckDBPyConnection, item_ids: Sequence[str]) -> None:
    """Keep the queue in step with a person's change (inside the caller's transaction): in while needs_review."""
    con.execute("DELETE FROM review_queue WHERE item_id IN (SELECT unnest(?))", [list(item_ids)])
    con.execute(_QUEUE_ROWS + "i.item_id IN (SELECT unnest(?))", [now(), list(item_ids)])
