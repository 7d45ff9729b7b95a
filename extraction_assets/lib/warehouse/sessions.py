"""Live interview sessions in the warehouse: the session rows, their field coverage, the growing transcript, and the
checkpoint drafts of covered objectives."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.models import Document, ItemRecord
from extraction_assets.lib.warehouse.connection import insert_rows, merge_rows, now, rows_as_dicts, to_json, transaction
from extraction_assets.lib.warehouse.documents import raw_document_row
from extraction_assets.lib.warehouse.extraction import (
    MACHINE_OWNED_STATUSES,
    delete_items,
    evidence_row,
    item_row,
)
from extraction_assets.lib.warehouse.review_queue import requeue_items

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

_SESSION_COLUMNS = (
    "tenant_id",
    "session_id",
    "doc_id",
    "source_uri",
    "schema_version",
    "status",
    "turn_count",
    "user_turns",
    "file_size",
    "file_mtime_ns",
    "objectives_covered",
    "light_error",
    "started_at",
    "updated_at",
    "completed_at",
    "final_extracted_at",
    "final_delay_s",
)


def load_session_rows(con: duckdb.DuckDBPyConnection, tenant_id: str | None = None) -> dict[tuple[str, str], dict]:
    """Session rows by (tenant, session id); `objectives_covered` parsed."""
    rows = rows_as_dicts(
        con,
        "SELECT * FROM sessions WHERE CAST(? AS VARCHAR) IS NULL OR tenant_id = ?",
        [tenant_id, tenant_id],
    )
    return {
        (r["tenant_id"], r["session_id"]): {**r, "objectives_covered": json.loads(r["objectives_covered"])}
        for r in rows
    }


def upsert_session(con: duckdb.DuckDBPyConnection, row: dict[str, Any]) -> None:
    values = {k: row.get(k) for k in _SESSION_COLUMNS}
    values["objectives_covered"] = to_json(row.get("objectives_covered") or [])
    updates = [k for k in _SESSION_COLUMNS if k not in ("tenant_id", "session_id")]
    merge_rows(con, "sessions", [values], update=updates)


def document_texts(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> dict[str, str]:
    """The stored text of each document (a live session's transcript so far)."""
    rows = con.execute("SELECT doc_id, text FROM raw_documents WHERE doc_id IN (SELECT unnest(?))", [list(doc_ids)])
    return dict(rows.fetchall())


def upsert_session_document(con: duckdb.DuckDBPyConnection, doc: Document) -> None:
    """The transcript so far: the same document id, a longer text (earlier offsets stay where they were)."""
    merge_rows(
        con,
        "raw_documents",
        [{**raw_document_row(doc), "ingested_at": now()}],
        update=("text", "turns", "doc_date", "title", "metadata", "char_count"),
    )


def write_session_state(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    session_id: str,
    schema_version: str,
    states: Sequence[Any],  # sessions.FieldState
    after_turn: str | None,
    extractor: str,
) -> None:
    """Replace the session's coverage under its schema version with the latest light extraction's."""
    stamp = now()
    with transaction(con):
        con.execute(
            "DELETE FROM session_state WHERE tenant_id = ? AND session_id = ? AND schema_version = ?",
            [tenant_id, session_id, schema_version],
        )
        insert_rows(
            con,
            "session_state",
            [
                {
                    "tenant_id": tenant_id,
                    "session_id": session_id,
                    "schema_version": schema_version,
                    "field_name": s.field_name,
                    "objective": s.objective,
                    "covered": s.covered,
                    "confidence": s.confidence,
                    "value": None if s.value is None else to_json(s.value),
                    "turn_id": s.turn_id,
                    "after_turn": after_turn,
                    "extractor": extractor,
                    "updated_at": stamp,
                }
                for s in states
            ],
        )


def write_checkpoint(con: duckdb.DuckDBPyConnection, items: Sequence[ItemRecord]) -> dict[str, int]:
    """Store checkpoint drafts of some fields in one transaction; an item a person owns is left as it is.

    Unlike a whole document's extraction, the session's other items (other objectives' drafts) stay.
    """
    stamp = now()
    ids = [item.item_id for item in items]
    with transaction(con):
        existing = rows_as_dicts(
            con,
            "SELECT item_id, status, extracted_by, created_at FROM extracted_items WHERE item_id IN (SELECT unnest(?))",
            [ids],
        )
        protected = {
            r["item_id"] for r in existing if r["status"] not in MACHINE_OWNED_STATUSES or r["extracted_by"] == "human"
        }
        created = {r["item_id"]: r["created_at"] for r in existing}
        delete_items(con, [r["item_id"] for r in existing if r["item_id"] not in protected])
        stored = [item for item in items if item.item_id not in protected]
        insert_rows(con, "extracted_items", [item_row(i, created.get(i.item_id, stamp), stamp) for i in stored])
        insert_rows(con, "evidence", [evidence_row(ev, stamp) for i in stored for ev in i.evidence])
        requeue_items(con, [i.item_id for i in stored])
    return {"items": len(stored), "protected_kept": len(protected)}


def load_session(con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str) -> dict[str, Any] | None:
    """One session of this tenant (another tenant's session is not found)."""
    return load_session_rows(con, tenant_id).get((tenant_id, session_id))


def load_session_state(
    con: duckdb.DuckDBPyConnection, tenant_id: str, session_id: str, schema_version: str
) -> list[dict[str, Any]]:
    """The session's field coverage, `value` parsed, in field order of the schema as stored."""
    rows = rows_as_dicts(
        con,
        """SELECT * FROM session_state WHERE tenant_id = ? AND session_id = ? AND schema_version = ?
           ORDER BY rowid""",
        [tenant_id, session_id, schema_version],
    )
    return [{**r, "value": None if r["value"] is None else json.loads(r["value"])} for r in rows]


def session_item_ids(con: duckdb.DuckDBPyConnection, tenant_id: str, doc_id: str, schema_version: str) -> list[str]:
    """The session's fields under one schema version, in the order they were first stored."""
    rows = con.execute(
        """SELECT item_id FROM extracted_items WHERE tenant_id = ? AND doc_id = ? AND schema_version = ?
           ORDER BY created_at, item_type""",
        [tenant_id, doc_id, schema_version],
    ).fetchall()
    return [r[0] for r in rows]
