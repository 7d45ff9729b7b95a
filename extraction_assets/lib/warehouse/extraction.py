"""The extraction side of the warehouse: pending work, model responses, and each batch's items, evidence,
status and routing, written in one transaction."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.models import EvidenceRecord, ExtractionOutcome, ItemRecord
from extraction_assets.lib.warehouse.backend import on_lake, retry_conflicts
from extraction_assets.lib.warehouse.connection import (
    id_list,
    insert_rows,
    merge_rows,
    now,
    rows_as_dicts,
    to_json,
    transaction,
)
from extraction_assets.lib.warehouse.documents import (
    DOCUMENT_FINGERPRINT,
    QUOTE_FINGERPRINT,
    STORED_ORDER,
    by_rowid,
    in_window,
    insert_dead_letters,
)

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

MACHINE_OWNED_STATUSES = ("draft", "needs_review")


# A document `s` whose extraction `e` (its status row of the version) is to be made: none yet, failed or partial, or
# made by another extractor (`$extractor_version`) or from another scrub; every one when `$force`.
OUT_OF_DATE_SQL = (
    "($force OR e.doc_id IS NULL OR e.status <> 'processed' OR e.extractor_version <> $extractor_version"
    " OR e.scrubber_version <> s.scrubber_version)"
)


def work_sql(columns: str, condition: str, window: range | None = None) -> str:
    """A statement on a version's (`$version`) work: `columns` of its scrubbed documents `s` of its kinds (`$kinds`),
    in one tenant where `$tenant` is set, that meet `condition`, in stored order, each with its raw row `r`, its
    extraction status `e` and its routing decision `a` of the version; with `window`, among those raw rows alone."""
    return f"""SELECT {columns} FROM scrubbed_documents s
               JOIN raw_documents r USING (doc_id)
               LEFT JOIN extraction_status e ON e.doc_id = s.doc_id AND e.schema_version = $version
               LEFT JOIN document_applicability a ON a.doc_id = s.doc_id AND a.schema_version = $version
               WHERE r.kind IN (SELECT unnest(CAST($kinds AS VARCHAR[])))
                 AND (CAST($tenant AS VARCHAR) IS NULL OR r.tenant_id = $tenant)
                 AND ({condition}){in_window(window)}
               ORDER BY {STORED_ORDER}"""


def pending_extractions(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    kinds: Sequence[str],
    extractor_version: str,
    tenant_id: str | None = None,
    force: bool = False,
    routed: bool = False,
    window: range | None = None,
) -> list[str]:
    """Scrubbed documents of the schema's kinds not yet processed by this extractor and scrubber version.

    Failed and partial documents stay pending, so the next run retries them. `force` makes every document pending
    (a deliberate re-extraction); `tenant_id` keeps the work inside one tenant; `routed` keeps only the
    documents the schema's routing decision takes (table document_applicability); `window` keeps to those raw rows
    (`stored_windows`).
    """
    taken = " AND coalesce(a.taken, false)" if routed else ""
    return [
        row[0]
        for row in con.execute(
            work_sql("s.doc_id", OUT_OF_DATE_SQL + taken, window),
            {
                "version": schema_version,
                "kinds": list(kinds),
                "tenant": tenant_id,
                "force": force,
                "extractor_version": extractor_version,
            },
        ).fetchall()
    ]


def cache_entries_for(con: duckdb.DuckDBPyConnection, model: str, doc_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Cached answers of one model for a batch of documents, read with the batch (one query, no held lock)."""
    rows = con.execute(
        "SELECT request_hash, response FROM llm_cache WHERE model = ? AND doc_id IN (SELECT unnest(?))",
        [model, list(doc_ids)],
    ).fetchall()
    return {h: {"request_hash": h, "response": json.loads(r)} for h, r in rows}


def insert_cache_entries(con: duckdb.DuckDBPyConnection, entries: Sequence[dict[str, Any]]) -> None:
    """Model responses, stored with the batch they served (a refreshed request replaces its old answer)."""
    stamp = now()
    merge_rows(
        con,
        "llm_cache",
        [
            {
                "request_hash": e["request_hash"],
                "model": e["model"],
                "mode": e["mode"],
                "request": to_json(e["request"]),
                "response": to_json(e["response"]),
                "prompt_tokens": e.get("prompt_tokens"),
                "completion_tokens": e.get("completion_tokens"),
                "latency_ms": e.get("latency_ms"),
                "created_at": stamp,
                "schema_version": e.get("schema_version"),
                "doc_id": e.get("doc_id"),
            }
            for e in {e["request_hash"]: e for e in entries}.values()
        ],
        update=["response", "prompt_tokens", "completion_tokens", "latency_ms", "created_at"],
    )


@retry_conflicts
def write_extraction_batch(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    outcomes: Sequence[ExtractionOutcome],
    overwrite_protected: bool = False,
    cache_entries: Sequence[dict[str, Any]] = (),
    first: Callable[[duckdb.DuckDBPyConnection], object] | None = None,
    raw_rowids: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Store a batch of documents' items, evidence, dead letters, status and model responses in one transaction.

    Items a person owns (accepted, rejected, or corrected by a human) are kept as they are unless
    `overwrite_protected`; machine-owned items of a re-extracted document that were not found again
    are removed; a failed document keeps its previous items untouched. `first`, the caller's own write, is made
    first in the same transaction (again if a lost commit retries it): an offline batch's routing decisions commit
    with its items or not at all, in one commit. `raw_rowids`: where the documents' raw rows were read (their
    quotes are checked there, `stamp_verified_quotes`).
    """
    stamp = now()
    processed = [o for o in outcomes if o.status != "failed"]  # partial ones are stored too, and retried
    doc_ids = [o.doc_id for o in outcomes]
    with transaction(con):
        if first is not None:
            first(con)
        # A record keyed by Message-ID can come from two copies of one message, in this batch or stored by an earlier
        # one (copies share a shard: `shards.py`): the copy in the smallest doc_id owns it, whatever the order the
        # documents were written in.
        owners: dict[str, ItemRecord] = {}
        for item in (item for o in processed for item in o.items):
            if item.item_id not in owners or item.doc_id < owners[item.item_id].doc_id:
                owners[item.item_id] = item
        items = list(owners.values())
        new_ids = set(owners)
        with (
            id_list(con, [o.doc_id for o in processed]) as (docs, doc_params),
            id_list(con, sorted(new_ids)) as (found, found_params),
        ):
            existing = rows_as_dicts(
                con,
                f"""SELECT item_id, doc_id, status, extracted_by, created_at FROM extracted_items
                   WHERE (schema_version = ? AND doc_id IN {docs}) OR item_id IN {found}""",
                [schema_version, *doc_params, *found_params],
            )
        protected = {
            r["item_id"]
            for r in existing
            if not overwrite_protected and (r["status"] not in MACHINE_OWNED_STATUSES or r["extracted_by"] == "human")
        }
        protected |= {  # stored under a smaller doc_id that is not in this batch: that copy owns the record
            r["item_id"]
            for r in existing
            if r["item_id"] in owners and r["doc_id"] not in doc_ids and r["doc_id"] < owners[r["item_id"]].doc_id
        }
        created = {r["item_id"]: r["created_at"] for r in existing}
        replaced = [r["item_id"] for r in existing if r["item_id"] not in protected]
        delete_items(con, replaced)
        stored = [item for item in items if item.item_id not in protected]
        insert_rows(
            con, "extracted_items", [item_row(item, created.get(item.item_id, stamp), stamp) for item in stored]
        )
        evidence = [evidence_row(ev, stamp) for item in stored for ev in item.evidence]
        insert_rows(con, "evidence", evidence)
        if evidence and not on_lake(con):
            stamp_verified_quotes(
                con, [row["evidence_id"] for row in evidence], sorted({o.doc_id for o in processed}), raw_rowids
            )
        merge_rows(
            con,
            "extraction_status",
            [
                {
                    "doc_id": o.doc_id,
                    "schema_version": schema_version,
                    "tenant_id": o.tenant_id,
                    "status": o.status,
                    "extractor_version": o.extractor_version,
                    "model": o.model,
                    "scrubber_version": o.scrubber_version,
                    "items_stored": len(o.items),
                    "items_dropped": o.dropped,
                    "error": o.error,
                    "attempts": 1,  # one more than it had
                    "updated_at": stamp,
                }
                for o in outcomes
            ],
            update=[
                "status",
                "extractor_version",
                "model",
                "scrubber_version",
                "items_stored",
                "items_dropped",
                "error",
                "updated_at",
            ],
            added=["attempts"],
        )
        insert_dead_letters(con, [letter for outcome in outcomes for letter in outcome.dead_letters])
        insert_cache_entries(con, cache_entries)
        routed = _write_routing(con, schema_version, processed, stamp)
    return {
        "items": len(stored),
        "evidence": len(evidence),
        "protected_kept": len(new_ids & protected),
        "stale_removed": len(set(replaced) - new_ids),
        "routed": routed,
    }


def stamp_verified_quotes(
    con: duckdb.DuckDBPyConnection,
    evidence_ids: Sequence[str],
    doc_ids: Sequence[str],
    raw_rowids: Mapping[str, int] | None = None,
) -> None:
    """Fingerprint the evidence rows just written whose quote is their document's text at their offsets (compared in
    SQL as it is stored: a stamp describes a row that passed), so the quote check reads no text for them again while
    the row and its document stay as they are (`invariants.quote_mismatches`). The documents are read at
    `raw_rowids` where given (`by_rowid`): one whose row moved since is left unstamped, and the check reads it."""
    con.execute(
        f"""UPDATE evidence e SET checked_hash = {QUOTE_FINGERPRINT}
            FROM (SELECT doc_id, text, {DOCUMENT_FINGERPRINT} AS fingerprint FROM raw_documents
                  WHERE {by_rowid(con, "raw_documents", doc_ids, known=raw_rowids)}) r
            WHERE e.doc_id = r.doc_id AND {by_rowid(con, "evidence", evidence_ids, "evidence_id", "e")}
              AND substring(r.text, e.char_start + 1, e.char_end - e.char_start) = e.quote""",
        [list(doc_ids), list(evidence_ids)],
    )


def delete_items(con: duckdb.DuckDBPyConnection, item_ids: Sequence[str]) -> None:
    """Remove items with their evidence and queue rows (inside the caller's transaction)."""
    if item_ids:
        for table in ("evidence", "review_queue", "extracted_items"):
            con.execute(f"DELETE FROM {table} WHERE item_id IN (SELECT unnest(?))", [list(item_ids)])


def _write_routing(
    con: duckdb.DuckDBPyConnection, schema_version: str, processed: Sequence[ExtractionOutcome], stamp: datetime
) -> int:
    """Replace the routing rows of re-extracted documents (inside the batch's transaction)."""
    con.execute(
        "DELETE FROM document_routing WHERE schema_version = ? AND doc_id IN (SELECT unnest(?))",
        [schema_version, [o.doc_id for o in processed]],
    )
    rows = [
        {
            "doc_id": o.doc_id,
            "schema_version": schema_version,
            "tenant_id": o.tenant_id,
            "outcome": o.routing.outcome,
            "weighted_confidence": o.routing.weighted_confidence,
            "flags": to_json(o.routing.flags),
            "missing_fields": to_json(o.routing.missing_fields),
            "reasons": to_json(o.routing.reasons),
            "extractor_version": o.extractor_version,
            "routed_at": stamp,
        }
        for o in processed
        if o.routing is not None
    ]
    insert_rows(con, "document_routing", rows)
    return len(rows)


def item_row(item: ItemRecord, created_at: datetime, stamp: datetime) -> dict[str, Any]:
    """An item as its `extracted_items` row (a live session's checkpoint writes the same rows)."""
    return {
        "item_id": item.item_id,
        "doc_id": item.doc_id,
        "tenant_id": item.tenant_id,
        "schema_version": item.schema_version,
        "item_type": item.item_type,
        "value": to_json(item.value),
        "normalized_value": None,
        "title": item.title,
        "confidence": item.confidence,
        "status": item.status,
        "extracted_by": item.extracted_by,
        "extractor_version": item.extractor_version,
        "model": item.model,
        "review_reasons": to_json(item.review_reasons),
        "reasoning_summary": item.reasoning_summary,
        "created_at": created_at,
        "updated_at": stamp,
        "updated_by": None,
        "probability_correct": item.probability_correct,
        "evidence_features": to_json(item.evidence_features) if item.evidence_features else None,
    }


def evidence_row(ev: EvidenceRecord, stamp: datetime) -> dict[str, Any]:
    """A located quote as its `evidence` row."""
    return {
        "evidence_id": ev.evidence_id,
        "item_id": ev.item_id,
        "doc_id": ev.doc_id,
        "tenant_id": ev.tenant_id,
        "schema_version": ev.schema_version,
        "char_start": ev.char_start,
        "char_end": ev.char_end,
        "quote": ev.quote,
        "turn_id": ev.turn_id,
        "match_kind": ev.match_kind,
        "strength": ev.strength,
        "evidence_type": ev.evidence_type,
        "match_score": ev.match_score,
        "created_at": stamp,
    }
