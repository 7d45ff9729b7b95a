"""Showing an item's original text: an explicit act, recorded in the audit log (who, when, which item, why).

The entry's before and after snapshots are the same item: a reveal changes nothing, it only leaves a trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from extraction_assets.lib.review.audit import AuditEntry, advance_outside_head, append_entry
from extraction_assets.lib.review.corrections import ReviewError, bounded_note
from extraction_assets.lib.review.queries import ItemDetail, item_detail
from extraction_assets.lib.warehouse.connection import transaction

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

REVEAL = "reveal"  # the audit action of a reveal


def reveal_item(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    ref: str,
    actor: str,
    note: str | None = None,
    context_chars: int = 240,
) -> tuple[ItemDetail, AuditEntry]:
    """The item with its raw text and evidence, and the audit entry that records this view."""
    actor = actor.strip()
    if not actor:
        raise ReviewError("say who reveals the original text (a reviewer name)")
    note = bounded_note(note)
    with transaction(con):
        detail = item_detail(con, tenant_id, ref, context_chars, reveal=True)
        entry = append_entry(
            con,
            item_id=detail.item["item_id"],
            tenant_id=tenant_id,
            actor=actor,
            action=REVEAL,
            before=detail.item,
            after=detail.item,
            note=note,
        )
    advance_outside_head(con, entry)
    return detail, entry
