"""The DuckDB warehouse: every table's DDL, and every write the pipeline makes.

The tables are a public interface (docs/ARCHITECTURE.md documents each column). Writes are
idempotent (deterministic ids, upserts) and atomic per document batch (one transaction).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from extraction_assets.lib.models import (
    DeadLetter,
    Document,
    EvidenceRecord,
    ExtractionOutcome,
    ItemRecord,
    ScrubbedDocument,
    Turn,
)
from extraction_assets.lib.pii_vault import SealedMapping

DDL: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS raw_documents (
        doc_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        source_uri VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        turns JSON NOT NULL,
        doc_date DATE,
        title VARCHAR,
        metadata JSON NOT NULL,
        char_count INTEGER NOT NULL,
        ingested_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS scrubbed_documents (
        doc_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        text VARCHAR NOT NULL,
        offset_map JSON NOT NULL,
        pii_counts JSON NOT NULL,
        pii_total INTEGER NOT NULL,
        scrubber_version VARCHAR NOT NULL,
        scrubbed_at TIMESTAMP NOT NULL
    )""",
    # the tenant policy a document was scrubbed with (added as a column so older warehouses keep working)
    "ALTER TABLE scrubbed_documents ADD COLUMN IF NOT EXISTS policy JSON",
    """CREATE TABLE IF NOT EXISTS extraction_status (
        doc_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        extractor_version VARCHAR NOT NULL,
        model VARCHAR,
        scrubber_version VARCHAR NOT NULL,
        items_stored INTEGER NOT NULL,
        items_dropped INTEGER NOT NULL,
        error VARCHAR,
        attempts INTEGER NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        PRIMARY KEY (doc_id, schema_version)
    )""",
    """CREATE TABLE IF NOT EXISTS extracted_items (
        item_id VARCHAR PRIMARY KEY,
        doc_id VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        item_type VARCHAR NOT NULL,
        value JSON NOT NULL,
        normalized_value JSON,
        title VARCHAR NOT NULL,
        confidence DOUBLE NOT NULL,
        status VARCHAR NOT NULL,
        extracted_by VARCHAR NOT NULL,
        extractor_version VARCHAR NOT NULL,
        model VARCHAR,
        review_reasons JSON NOT NULL,
        reasoning_summary VARCHAR,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        updated_by VARCHAR
    )""",
    """CREATE TABLE IF NOT EXISTS evidence (
        evidence_id VARCHAR PRIMARY KEY,
        item_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        quote VARCHAR NOT NULL,
        turn_id VARCHAR,
        match_kind VARCHAR NOT NULL,
        strength VARCHAR NOT NULL,
        evidence_type VARCHAR NOT NULL,
        match_score DOUBLE NOT NULL,
        created_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS review_queue (
        item_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        item_type VARCHAR NOT NULL,
        title VARCHAR NOT NULL,
        confidence DOUBLE NOT NULL,
        reasons JSON NOT NULL,
        evidence_quote VARCHAR,
        source_uri VARCHAR NOT NULL,
        priority DOUBLE NOT NULL,
        queued_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS dead_letters (
        dead_letter_id VARCHAR PRIMARY KEY,
        stage VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        source_uri VARCHAR NOT NULL,
        doc_id VARCHAR,
        schema_version VARCHAR,
        reason VARCHAR NOT NULL,
        detail JSON NOT NULL,
        first_seen_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS audit_log (
        audit_id VARCHAR PRIMARY KEY,
        item_id VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        actor VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        before_snapshot JSON NOT NULL,
        after_snapshot JSON NOT NULL,
        note VARCHAR,
        occurred_at TIMESTAMP NOT NULL
    )""",
    # the audit hash chain: added as columns so warehouses created before it keep working
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS seq BIGINT",
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS prev_hash VARCHAR",
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS row_hash VARCHAR",
    """CREATE TABLE IF NOT EXISTS audit_log_heads (
        checked_at TIMESTAMP NOT NULL,
        row_count BIGINT NOT NULL,
        head_hash VARCHAR
    )""",
    """CREATE TABLE IF NOT EXISTS llm_cache (
        request_hash VARCHAR PRIMARY KEY,
        model VARCHAR NOT NULL,
        mode VARCHAR NOT NULL,
        request JSON NOT NULL,
        response JSON NOT NULL,
        prompt_tokens INTEGER,
        completion_tokens INTEGER,
        latency_ms DOUBLE,
        created_at TIMESTAMP NOT NULL
    )""",
    "ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS schema_version VARCHAR",
    "ALTER TABLE llm_cache ADD COLUMN IF NOT EXISTS doc_id VARCHAR",
    """CREATE TABLE IF NOT EXISTS eval_runs (
        run_id VARCHAR PRIMARY KEY,
        dataset VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        extractor_version VARCHAR NOT NULL,
        model VARCHAR,
        run_at TIMESTAMP NOT NULL,
        mode VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        documents INTEGER NOT NULL,
        documents_failed INTEGER NOT NULL,
        records_invalid INTEGER NOT NULL,
        document_limit INTEGER,
        grounding_rate DOUBLE,
        hallucination_rate DOUBLE,
        needs_review_rate DOUBLE,
        items_proposed INTEGER NOT NULL,
        items_stored INTEGER NOT NULL,
        items_dropped INTEGER NOT NULL,
        ece DOUBLE,
        calibration JSON NOT NULL,
        latency_ms_mean DOUBLE,
        latency_ms_p95 DOUBLE,
        wall_seconds DOUBLE NOT NULL,
        model_calls INTEGER NOT NULL,
        cache_hits INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        notes JSON NOT NULL,
        report_path VARCHAR
    )""",
    """CREATE TABLE IF NOT EXISTS eval_metrics (
        run_id VARCHAR NOT NULL,
        dataset VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        extractor_version VARCHAR NOT NULL,
        model VARCHAR,
        run_at TIMESTAMP NOT NULL,
        field VARCHAR NOT NULL,
        comparator VARCHAR NOT NULL,
        support INTEGER NOT NULL,
        predicted INTEGER,
        tp INTEGER NOT NULL,
        fp INTEGER,
        fn INTEGER NOT NULL,
        precision DOUBLE,
        recall DOUBLE,
        f1 DOUBLE,
        f2 DOUBLE,
        PRIMARY KEY (run_id, field)
    )""",
    """CREATE TABLE IF NOT EXISTS pii_vault (
        doc_id VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        scrubber_version VARCHAR NOT NULL,
        key_id VARCHAR NOT NULL,
        token VARCHAR NOT NULL,
        entries INTEGER NOT NULL,
        sealed_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS document_routing (
        doc_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        outcome VARCHAR NOT NULL,
        weighted_confidence DOUBLE NOT NULL,
        flags JSON NOT NULL,
        missing_fields JSON NOT NULL,
        reasons JSON NOT NULL,
        extractor_version VARCHAR NOT NULL,
        routed_at TIMESTAMP NOT NULL,
        PRIMARY KEY (doc_id, schema_version)
    )""",
)

TABLES: tuple[str, ...] = (
    "raw_documents",
    "scrubbed_documents",
    "extraction_status",
    "extracted_items",
    "evidence",
    "review_queue",
    "dead_letters",
    "audit_log",
    "audit_log_heads",
    "llm_cache",
    "eval_runs",
    "eval_metrics",
    "pii_vault",
    "document_routing",
)

MACHINE_OWNED_STATUSES = ("draft", "needs_review")


def now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def connect(path: Path | str, read_only: bool = False, wait_seconds: float = 60.0) -> duckdb.DuckDBPyConnection:
    """Open the warehouse, waiting while another process holds DuckDB's single-writer lock."""
    target = Path(path)
    if not read_only:
        target.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_seconds
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(target), read_only=read_only)
        except duckdb.IOException as exc:
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 2.0)
            continue
        if not read_only:
            ensure_schema(con)
        return con


@contextmanager
def open_warehouse(path: Path | str, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    con = connect(path, read_only=read_only)
    try:
        yield con
    finally:
        con.close()


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    for statement in DDL:
        con.execute(statement)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """All or nothing: a batch that fails half-way leaves no trace."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def rows_as_dicts(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def table_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}  # type: ignore[index]


# --- ingest -------------------------------------------------------------------------------------


def known_doc_ids(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT doc_id FROM raw_documents").fetchall()}


def insert_documents(con: duckdb.DuckDBPyConnection, docs: Sequence[Document]) -> int:
    """Insert documents not yet stored; returns how many were new."""
    if not docs:
        return 0
    before = int(con.execute("SELECT count(*) FROM raw_documents").fetchone()[0])  # type: ignore[index]
    stamp = now()
    rows = [
        (
            d.doc_id,
            d.tenant_id,
            d.source_uri,
            d.kind,
            d.text,
            _json([t.model_dump() for t in d.turns]),
            d.doc_date,
            d.title,
            _json(d.metadata),
            len(d.text),
            stamp,
        )
        for d in docs
    ]
    with transaction(con):
        con.executemany(
            "INSERT INTO raw_documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (doc_id) DO NOTHING", rows
        )
    return int(con.execute("SELECT count(*) FROM raw_documents").fetchone()[0]) - before  # type: ignore[index]


def _insert_dead_letters(con: duckdb.DuckDBPyConnection, letters: Iterable[DeadLetter]) -> None:
    stamp = now()
    rows = [
        (
            d.dead_letter_id,
            d.stage,
            d.tenant_id,
            d.source_uri,
            d.doc_id,
            d.schema_version,
            d.reason,
            _json(d.detail),
            stamp,
        )
        for d in letters
    ]
    if rows:
        con.executemany(
            "INSERT INTO dead_letters VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (dead_letter_id) DO NOTHING", rows
        )


def record_dead_letters(con: duckdb.DuckDBPyConnection, letters: Iterable[DeadLetter]) -> int:
    """Store failures; the same failure seen again is not a new row. Returns how many were new."""
    before = int(con.execute("SELECT count(*) FROM dead_letters").fetchone()[0])  # type: ignore[index]
    with transaction(con):
        _insert_dead_letters(con, letters)
    return int(con.execute("SELECT count(*) FROM dead_letters").fetchone()[0]) - before  # type: ignore[index]


def _document_from_row(row: dict[str, Any]) -> Document:
    return Document(
        doc_id=row["doc_id"],
        tenant_id=row["tenant_id"],
        source_uri=row["source_uri"],
        kind=row["kind"],
        text=row["text"],
        turns=[Turn.model_validate(t) for t in json.loads(row["turns"])],
        doc_date=row["doc_date"],
        title=row["title"],
        metadata=json.loads(row["metadata"]),
    )


def load_documents(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> list[Document]:
    if not doc_ids:
        return []
    rows = rows_as_dicts(
        con, "SELECT * FROM raw_documents WHERE doc_id IN (SELECT unnest(?)) ORDER BY doc_id", [list(doc_ids)]
    )
    return [_document_from_row(r) for r in rows]


# --- scrub --------------------------------------------------------------------------------------


def tenant_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in con.execute("SELECT DISTINCT tenant_id FROM raw_documents ORDER BY 1").fetchall()]


def documents_to_scrub(con: duckdb.DuckDBPyConnection, version_by_tenant: Mapping[str, str]) -> list[str]:
    """Documents never scrubbed, or scrubbed by another scrubber version than their tenant's policy gives.

    A tenant missing from the mapping has no known version, so its documents are always pending.
    """
    tenants = list(version_by_tenant)
    return [
        row[0]
        for row in con.execute(
            """SELECT r.doc_id FROM raw_documents r
               LEFT JOIN scrubbed_documents s USING (doc_id)
               LEFT JOIN (SELECT unnest(?) AS tenant_id, unnest(?) AS version) v ON v.tenant_id = r.tenant_id
               WHERE s.doc_id IS NULL OR v.version IS NULL OR s.scrubber_version <> v.version
               ORDER BY r.doc_id""",
            [tenants, [version_by_tenant[t] for t in tenants]],
        ).fetchall()
    ]


def upsert_scrubbed(
    con: duckdb.DuckDBPyConnection, rows: Sequence[ScrubbedDocument], sealed: Sequence[SealedMapping] = ()
) -> None:
    """Store scrubbed documents and, in the same transaction, their vault entries.

    A re-scrubbed document's old vault entry is removed with it, so an entry always matches the stored text.
    """
    if not rows:
        return
    stamp = now()
    values = [
        (
            r.doc_id,
            r.tenant_id,
            r.text,
            _json(r.offset_map.model_dump()),
            _json(r.pii_counts),
            sum(r.pii_counts.values()),
            r.scrubber_version,
            stamp,
            _json(r.policy),
        )
        for r in rows
    ]
    with transaction(con):
        con.executemany(
            """INSERT INTO scrubbed_documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
               ON CONFLICT (doc_id) DO UPDATE SET text = excluded.text, offset_map = excluded.offset_map,
                 pii_counts = excluded.pii_counts, pii_total = excluded.pii_total,
                 scrubber_version = excluded.scrubber_version, scrubbed_at = excluded.scrubbed_at,
                 policy = excluded.policy""",
            values,
        )
        con.execute("DELETE FROM pii_vault WHERE doc_id IN (SELECT unnest(?))", [[r.doc_id for r in rows]])
        insert_rows(con, "pii_vault", [entry.row() for entry in sealed])


# --- extraction ---------------------------------------------------------------------------------


def pending_extractions(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    kinds: Sequence[str],
    extractor_version: str,
    tenant_id: str | None = None,
    force: bool = False,
) -> list[str]:
    """Scrubbed documents of the schema's kinds not yet processed by this extractor and scrubber version.

    Failed documents stay pending, so the next run retries them. `force` makes every document pending
    (a deliberate re-extraction); `tenant_id` keeps the work inside one tenant.
    """
    return [
        row[0]
        for row in con.execute(
            """SELECT s.doc_id FROM scrubbed_documents s
               JOIN raw_documents r USING (doc_id)
               LEFT JOIN extraction_status e ON e.doc_id = s.doc_id AND e.schema_version = ?
               WHERE r.kind IN (SELECT unnest(?))
                 AND (CAST(? AS VARCHAR) IS NULL OR r.tenant_id = ?)
                 AND (? OR e.doc_id IS NULL OR e.status <> 'processed' OR e.extractor_version <> ?
                      OR e.scrubber_version <> s.scrubber_version)
               ORDER BY s.doc_id""",
            [schema_version, list(kinds), tenant_id, tenant_id, force, extractor_version],
        ).fetchall()
    ]


def load_scrubbed(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> dict[str, ScrubbedDocument]:
    if not doc_ids:
        return {}
    rows = rows_as_dicts(
        con,
        "SELECT doc_id, tenant_id, text, offset_map, pii_counts, scrubber_version FROM scrubbed_documents "
        "WHERE doc_id IN (SELECT unnest(?))",
        [list(doc_ids)],
    )
    return {
        r["doc_id"]: ScrubbedDocument.model_validate(
            {**r, "offset_map": json.loads(r["offset_map"]), "pii_counts": json.loads(r["pii_counts"])}
        )
        for r in rows
    }


def batched(ids: Sequence[str], size: int) -> list[list[str]]:
    """Work is committed batch by batch: a crash loses at most the batch in flight."""
    return [list(ids[i : i + size]) for i in range(0, len(ids), size)]


def insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: Sequence[Sequence[Any]], suffix: str = "") -> None:
    """Many rows in few statements: DuckDB pays per statement, not per row."""
    if not rows:
        return
    width = len(rows[0])
    placeholder = "(" + ", ".join("?" * width) + ")"
    for chunk in (rows[i : i + 400] for i in range(0, len(rows), 400)):
        params = [value for row in chunk for value in row]
        con.execute(f"INSERT INTO {table} VALUES {', '.join([placeholder] * len(chunk))} {suffix}", params)


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
    insert_rows(
        con,
        "llm_cache",
        [
            (
                e["request_hash"],
                e["model"],
                e["mode"],
                _json(e["request"]),
                _json(e["response"]),
                e.get("prompt_tokens"),
                e.get("completion_tokens"),
                e.get("latency_ms"),
                stamp,
                e.get("schema_version"),
                e.get("doc_id"),
            )
            for e in {e["request_hash"]: e for e in entries}.values()
        ],
        """ON CONFLICT (request_hash) DO UPDATE SET response = excluded.response,
             prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
             latency_ms = excluded.latency_ms, created_at = excluded.created_at""",
    )


def write_extraction_batch(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    outcomes: Sequence[ExtractionOutcome],
    overwrite_protected: bool = False,
    cache_entries: Sequence[dict[str, Any]] = (),
) -> dict[str, int]:
    """Store a batch of documents' items, evidence, dead letters, status and model responses in one transaction.

    Items a person owns (accepted, rejected, or corrected by a human) are kept as they are unless
    `overwrite_protected`; machine-owned items of a re-extracted document that were not found again
    are removed; a failed document keeps its previous items untouched.
    """
    stamp = now()
    processed = [o for o in outcomes if o.status == "processed"]
    doc_ids = [o.doc_id for o in outcomes]
    with transaction(con):
        attempts = dict(
            con.execute(
                "SELECT doc_id, attempts FROM extraction_status "
                "WHERE schema_version = ? AND doc_id IN (SELECT unnest(?))",
                [schema_version, doc_ids],
            ).fetchall()
        )
        # a record keyed by Message-ID can come from two copies of one message in a batch: the later one wins
        items = list({item.item_id: item for o in processed for item in o.items}.values())
        new_ids = {item.item_id for item in items}
        # an item keyed by record (e.g. a Message-ID) may already exist under another document
        existing = rows_as_dicts(
            con,
            """SELECT item_id, status, extracted_by, created_at FROM extracted_items
               WHERE (schema_version = ? AND doc_id IN (SELECT unnest(?))) OR item_id IN (SELECT unnest(?))""",
            [schema_version, [o.doc_id for o in processed], sorted(new_ids)],
        )
        protected = {
            r["item_id"]
            for r in existing
            if not overwrite_protected and (r["status"] not in MACHINE_OWNED_STATUSES or r["extracted_by"] == "human")
        }
        created = {r["item_id"]: r["created_at"] for r in existing}
        replaced = [r["item_id"] for r in existing if r["item_id"] not in protected]
        if replaced:
            for table in ("evidence", "review_queue", "extracted_items"):
                con.execute(f"DELETE FROM {table} WHERE item_id IN (SELECT unnest(?))", [replaced])
        stored = [item for item in items if item.item_id not in protected]
        insert_rows(
            con, "extracted_items", [_item_row(item, created.get(item.item_id, stamp), stamp) for item in stored]
        )
        evidence = [_evidence_row(ev, stamp) for item in stored for ev in item.evidence]
        insert_rows(con, "evidence", evidence)
        insert_rows(
            con,
            "extraction_status",
            [
                (
                    o.doc_id,
                    schema_version,
                    o.tenant_id,
                    o.status,
                    o.extractor_version,
                    o.model,
                    o.scrubber_version,
                    len(o.items),
                    o.dropped,
                    o.error,
                    attempts.get(o.doc_id, 0) + 1,
                    stamp,
                )
                for o in outcomes
            ],
            """ON CONFLICT (doc_id, schema_version) DO UPDATE SET status = excluded.status,
                 extractor_version = excluded.extractor_version, model = excluded.model,
                 scrubber_version = excluded.scrubber_version, items_stored = excluded.items_stored,
                 items_dropped = excluded.items_dropped, error = excluded.error,
                 attempts = excluded.attempts, updated_at = excluded.updated_at""",
        )
        _insert_dead_letters(con, [letter for outcome in outcomes for letter in outcome.dead_letters])
        insert_cache_entries(con, cache_entries)
        routed = _write_routing(con, schema_version, processed, stamp)
    return {
        "items": len(stored),
        "evidence": len(evidence),
        "protected_kept": len(new_ids & protected),
        "stale_removed": len(set(replaced) - new_ids),
        "routed": routed,
    }


def _write_routing(
    con: duckdb.DuckDBPyConnection, schema_version: str, processed: Sequence[ExtractionOutcome], stamp: datetime
) -> int:
    """Replace the routing rows of re-extracted documents (inside the batch's transaction)."""
    con.execute(
        "DELETE FROM document_routing WHERE schema_version = ? AND doc_id IN (SELECT unnest(?))",
        [schema_version, [o.doc_id for o in processed]],
    )
    rows = [
        (
            o.doc_id,
            schema_version,
            o.tenant_id,
            o.routing.outcome,
            o.routing.weighted_confidence,
            _json(o.routing.flags),
            _json(o.routing.missing_fields),
            _json(o.routing.reasons),
            o.extractor_version,
            stamp,
        )
        for o in processed
        if o.routing is not None
    ]
    insert_rows(con, "document_routing", rows)
    return len(rows)


def _item_row(item: ItemRecord, created_at: datetime, stamp: datetime) -> tuple[Any, ...]:
    return (
        item.item_id,
        item.doc_id,
        item.tenant_id,
        item.schema_version,
        item.item_type,
        _json(item.value),
        None,
        item.title,
        item.confidence,
        item.status,
        item.extracted_by,
        item.extractor_version,
        item.model,
        _json(item.review_reasons),
        item.reasoning_summary,
        created_at,
        stamp,
        None,
    )


def _evidence_row(ev: EvidenceRecord, stamp: datetime) -> tuple[Any, ...]:
    return (
        ev.evidence_id,
        ev.item_id,
        ev.doc_id,
        ev.tenant_id,
        ev.schema_version,
        ev.char_start,
        ev.char_end,
        ev.quote,
        ev.turn_id,
        ev.match_kind,
        ev.strength,
        ev.evidence_type,
        ev.match_score,
        stamp,
    )


# --- review -------------------------------------------------------------------------------------


_QUEUE_ROWS = """INSERT INTO review_queue
               SELECT i.item_id, i.tenant_id, i.doc_id, i.schema_version, i.item_type, i.title, i.confidence,
                      i.review_reasons,
                      (SELECT e.quote FROM evidence e WHERE e.item_id = i.item_id
                       ORDER BY e.char_start LIMIT 1),
                      r.source_uri,
                      round(json_array_length(i.review_reasons) + (1.0 - i.confidence), 4),
                      ?
               FROM extracted_items i JOIN raw_documents r USING (doc_id)
               WHERE i.status = 'needs_review' AND """


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
