"""Whether a schema version's review queue is in step with its items: it holds exactly its needs_review items,
each queued after the item's last change, and no draft changed since the queue was last ranked (a draft joining a
group moves the group's size and rank). A run killed between extraction and the queue's rebuild leaves a queue that
is not. A queue in step is not written again by a pass with nothing new.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

_QUEUE_OUT_OF_STEP = """SELECT EXISTS (
        SELECT 1 FROM extracted_items i LEFT JOIN review_queue q USING (item_id)
        WHERE i.schema_version = ? AND i.status = 'needs_review' AND (q.item_id IS NULL OR q.queued_at < i.updated_at)
    ) OR EXISTS (
        SELECT 1 FROM review_queue q LEFT JOIN extracted_items i USING (item_id)
        WHERE q.schema_version = ? AND (i.item_id IS NULL OR i.status <> 'needs_review')
    ) OR EXISTS (
        SELECT 1 FROM extracted_items i
        WHERE i.schema_version = ? AND i.status = 'draft'
          AND i.updated_at > (SELECT max(q.queued_at) FROM review_queue q WHERE q.schema_version = ?)
    )"""


def queue_in_step(con: duckdb.DuckDBPyConnection, schema_version: str) -> bool:
    """The partition's review queue holds exactly its needs_review items, each queued after the item's last change."""
    return not con.execute(_QUEUE_OUT_OF_STEP, [schema_version] * 4).fetchone()[0]  # type: ignore[index]
