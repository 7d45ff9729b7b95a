"""Whether a schema version's partition is current: a run of it now would write nothing.

That holds when no document of its kinds waits for a routing decision under its rules, none it takes waits for an
extraction by this extractor, and its review queue holds exactly its needs_review items, each queued after the
item's last change (a run killed between extraction and the queue's rebuild leaves a queue that is not).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse.applicability import documents_to_route
from extraction_assets.lib.warehouse.extraction import pending_extractions

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

_QUEUE_OUT_OF_STEP = """SELECT EXISTS (
        SELECT 1 FROM extracted_items i LEFT JOIN review_queue q USING (item_id)
        WHERE i.schema_version = ? AND i.status = 'needs_review' AND (q.item_id IS NULL OR q.queued_at < i.updated_at)
    ) OR EXISTS (
        SELECT 1 FROM review_queue q LEFT JOIN extracted_items i USING (item_id)
        WHERE q.schema_version = ? AND (i.item_id IS NULL OR i.status <> 'needs_review')
    )"""


def queue_in_step(con: duckdb.DuckDBPyConnection, schema_version: str) -> bool:
    """The partition's review queue holds exactly its needs_review items, each queued after the item's last change."""
    return not con.execute(_QUEUE_OUT_OF_STEP, [schema_version, schema_version]).fetchone()[0]  # type: ignore[index]


def partition_is_current(
    con: duckdb.DuckDBPyConnection, schema_version: str, kinds: Sequence[str], rules: str, extractor_version: str
) -> bool:
    """Nothing to route, nothing to extract and the queue in step with the items (see the module's docstring)."""
    if documents_to_route(con, schema_version, kinds, rules):
        return False
    if pending_extractions(con, schema_version, kinds, extractor_version, routed=True):
        return False
    return queue_in_step(con, schema_version)
