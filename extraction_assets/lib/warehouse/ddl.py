"""Every warehouse table's DDL. The tables are a public interface: docs/ARCHITECTURE.md documents each column.

Columns are only ever added (`ADD COLUMN IF NOT EXISTS`), so warehouses made by older versions keep working.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


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
    # the hash of the text that passed the unmasked-PII check when it was scrubbed: the asset check re-reads
    # only texts that changed since
    "ALTER TABLE scrubbed_documents ADD COLUMN IF NOT EXISTS checked_sha256 VARCHAR",
    # cheap fingerprints of what an ingest check verified (documents.py): the checks skip rows that still match them
    "ALTER TABLE scrubbed_documents ADD COLUMN IF NOT EXISTS checked_hash UBIGINT",
    "ALTER TABLE raw_documents ADD COLUMN IF NOT EXISTS checked_hash UBIGINT",
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
    # honest confidence: the calibrated probability of being right (NULL where the version or field has no
    # calibration) and the evidence features it was computed from
    "ALTER TABLE extracted_items ADD COLUMN IF NOT EXISTS probability_correct DOUBLE",
    "ALTER TABLE extracted_items ADD COLUMN IF NOT EXISTS evidence_features JSON",
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
    "ALTER TABLE evidence ADD COLUMN IF NOT EXISTS checked_hash UBIGINT",
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
    """CREATE TABLE IF NOT EXISTS llm_batches (
        batch_id VARCHAR PRIMARY KEY,
        schema_version VARCHAR NOT NULL,
        model VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        request_count INTEGER NOT NULL,
        request_hashes JSON NOT NULL,
        requests JSON NOT NULL,
        answered INTEGER NOT NULL,
        failed INTEGER NOT NULL,
        submitted_at TIMESTAMP NOT NULL,
        checked_at TIMESTAMP NOT NULL,
        ingested_at TIMESTAMP
    )""",
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
    # what review does with wrong values (mode fields) and where items land against chance (mode evidence_turns)
    "ALTER TABLE eval_runs ADD COLUMN IF NOT EXISTS review JSON",
    "ALTER TABLE eval_runs ADD COLUMN IF NOT EXISTS placement JSON",
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
    """CREATE TABLE IF NOT EXISTS inbox_files (
        source_uri VARCHAR PRIMARY KEY,
        tenant_id VARCHAR NOT NULL,
        size BIGINT NOT NULL,
        mtime_ns BIGINT NOT NULL,
        read_at TIMESTAMP NOT NULL
    )""",
    "ALTER TABLE inbox_files ADD COLUMN IF NOT EXISTS ctime_ns BIGINT",
    "ALTER TABLE inbox_files ADD COLUMN IF NOT EXISTS content_sha256 VARCHAR",
    """CREATE TABLE IF NOT EXISTS document_applicability (
        doc_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        tenant_id VARCHAR NOT NULL,
        taken BOOLEAN NOT NULL,
        score DOUBLE,
        reason VARCHAR NOT NULL,
        rules VARCHAR NOT NULL,
        decided_at TIMESTAMP NOT NULL,
        PRIMARY KEY (doc_id, schema_version)
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
    # live interview sessions (lib/sessions): one row per session file, its status and its extraction stages
    """CREATE TABLE IF NOT EXISTS sessions (
        tenant_id VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL,
        doc_id VARCHAR NOT NULL,
        source_uri VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        status VARCHAR NOT NULL,
        turn_count INTEGER NOT NULL,
        user_turns INTEGER NOT NULL,
        file_size BIGINT NOT NULL,
        file_mtime_ns BIGINT NOT NULL,
        objectives_covered JSON NOT NULL,
        light_error VARCHAR,
        started_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        completed_at TIMESTAMP,
        final_extracted_at TIMESTAMP,
        final_delay_s DOUBLE,
        PRIMARY KEY (tenant_id, session_id)
    )""",
    """CREATE TABLE IF NOT EXISTS session_state (
        tenant_id VARCHAR NOT NULL,
        session_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        field_name VARCHAR NOT NULL,
        objective VARCHAR NOT NULL,
        covered BOOLEAN NOT NULL,
        confidence DOUBLE NOT NULL,
        value JSON,
        turn_id VARCHAR,
        after_turn VARCHAR,
        extractor VARCHAR NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        PRIMARY KEY (tenant_id, session_id, schema_version, field_name)
    )""",
    # each word an OCR engine read in an image document: its offsets in raw_documents.text and its box (pixels)
    """CREATE TABLE IF NOT EXISTS ocr_words (
        doc_id VARCHAR NOT NULL,
        word_no INTEGER NOT NULL,
        tenant_id VARCHAR NOT NULL,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        x INTEGER NOT NULL,
        y INTEGER NOT NULL,
        width INTEGER NOT NULL,
        height INTEGER NOT NULL,
        confidence DOUBLE NOT NULL,
        PRIMARY KEY (doc_id, word_no)
    )""",
    # review (lib/review): the reviewer who added an item the extractor missed, a queue row's near-duplicate group,
    # and what one decision on many items is, in every audit row it wrote
    "ALTER TABLE extracted_items ADD COLUMN IF NOT EXISTS added_by VARCHAR",
    "ALTER TABLE extracted_items ADD COLUMN IF NOT EXISTS tenant_probability DOUBLE",
    "ALTER TABLE review_queue ADD COLUMN IF NOT EXISTS group_id VARCHAR",
    "ALTER TABLE review_queue ADD COLUMN IF NOT EXISTS group_size INTEGER",
    "ALTER TABLE review_queue ADD COLUMN IF NOT EXISTS probability_correct DOUBLE",
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS decision_id VARCHAR",
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS group_id VARCHAR",
    # what a tenant's reviewers' decisions taught (lib/review/lessons.py): its refit calibration of a schema version
    """CREATE TABLE IF NOT EXISTS tenant_calibrations (
        tenant_id VARCHAR NOT NULL,
        schema_version VARCHAR NOT NULL,
        calibration JSON NOT NULL,
        decisions INTEGER NOT NULL,
        wrong INTEGER NOT NULL,
        threshold DOUBLE NOT NULL,
        fitted_at TIMESTAMP NOT NULL,
        PRIMARY KEY (tenant_id, schema_version)
    )""",
    # challenger versions (lib/review/challengers.py): each schema version's role, and the promotions people made
    """CREATE TABLE IF NOT EXISTS schema_version_roles (
        schema_version VARCHAR PRIMARY KEY,
        schema_name VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        rivals JSON NOT NULL,
        decided_at TIMESTAMP NOT NULL
    )""",
    # the fingerprint of what each version's review queue was derived from (review_queue.queue_inputs)
    """CREATE TABLE IF NOT EXISTS review_queue_inputs (
        schema_version VARCHAR PRIMARY KEY,
        fingerprint VARCHAR NOT NULL,
        checked_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS version_promotions (
        promotion_id VARCHAR PRIMARY KEY,
        schema_name VARCHAR NOT NULL,
        promoted VARCHAR NOT NULL,
        superseded JSON NOT NULL,
        promoted_by VARCHAR NOT NULL,
        promoted_at TIMESTAMP NOT NULL,
        note VARCHAR,
        audit_seq BIGINT NOT NULL
    )""",
    # the image region of each piece of evidence in an image document: the box around the words its span touches
    """CREATE OR REPLACE VIEW evidence_image_regions AS
        SELECT e.evidence_id, e.item_id, e.doc_id, e.tenant_id,
               min(w.x) AS x, min(w.y) AS y,
               max(w.x + w.width) - min(w.x) AS width, max(w.y + w.height) - min(w.y) AS height,
               count(*) AS words
        FROM evidence e
        JOIN ocr_words w ON w.doc_id = e.doc_id AND w.char_start < e.char_end AND w.char_end > e.char_start
        GROUP BY e.evidence_id, e.item_id, e.doc_id, e.tenant_id""",
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
    "llm_batches",
    "eval_runs",
    "eval_metrics",
    "pii_vault",
    "document_routing",
    "document_applicability",
    "inbox_files",
    "sessions",
    "session_state",
    "ocr_words",
    "schema_version_roles",
    "version_promotions",
    "tenant_calibrations",
    "review_queue_inputs",
)


_CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)")
_COLUMN_KEY = re.compile(r"^\s*(\w+) [A-Z]+ PRIMARY KEY", re.MULTILINE)
_TABLE_KEY = re.compile(r",\s*PRIMARY KEY \(([^)]*)\)")


def _keys(statement: str) -> tuple[str, ...]:
    column = _COLUMN_KEY.search(statement)
    table = _TABLE_KEY.search(statement)
    if column:
        return (column.group(1),)
    return tuple(name.strip() for name in table.group(1).split(",")) if table else ()


# each table's key, read from its DDL: what upserts match on (a DuckLake warehouse enforces no key itself)
KEYS: dict[str, tuple[str, ...]] = {
    match.group(1): _keys(statement) for statement in DDL if (match := _CREATE.search(statement))
}


def without_keys(statement: str) -> str:
    """The DDL of a table for a DuckLake catalog, which has no PRIMARY KEY or UNIQUE constraints."""
    return _TABLE_KEY.sub("", statement).replace(" PRIMARY KEY", "")


# A DuckDB file records the DDL it was brought up to: a hash of every statement, as the value of a macro made after
# the last statement (so it exists only once every statement succeeded). A macro is looked up by name, in about a
# millisecond; a view's comment could only be read by listing the views, which builds DuckDB's internal ones on each
# fresh connection (20-40 ms, once per writer connection). The view the DDL makes last is bound with it, so a file
# that lost the view is brought up again.
SCHEMA_STAMP = "ddl " + hashlib.sha256("\n".join(DDL).encode()).hexdigest()[:16]
_STAMP_MACRO = "ddl_stamp"
_LAST_VIEW = "evidence_image_regions"


def _schema_stamp(con: duckdb.DuckDBPyConnection) -> str | None:
    import duckdb  # loaded already: the connection is open

    try:  # fetchall, not fetchone: a result left pending keeps the connection's transaction (its snapshot) open
        found = con.execute(f"SELECT {_STAMP_MACRO}() WHERE NOT EXISTS (FROM {_LAST_VIEW} LIMIT 0)").fetchall()
    except duckdb.CatalogException:  # a new file, one stamped before the macro, or one without the view
        return None
    return found[0][0] if found else None


def ensure_schema(con: duckdb.DuckDBPyConnection, keys: bool = True) -> None:
    """Create missing tables and columns; `keys=False` leaves out the primary keys (a DuckLake catalog).

    A DuckDB file already at this DDL (its stamp) runs no statement: the statements cost 30-80 ms per connection,
    and replacing the view wrote to the log, so every writer's close paid for a checkpoint. A DuckDB file is brought
    up in one transaction (all of it or nothing, one commit: a new file's tables cost about a third less CPU).
    """
    if not keys:
        for statement in DDL:
            con.execute(without_keys(statement))
        return
    if _schema_stamp(con) == SCHEMA_STAMP:
        return
    con.execute("BEGIN TRANSACTION")
    try:
        for statement in DDL:
            con.execute(statement)
        con.execute(f"CREATE OR REPLACE MACRO {_STAMP_MACRO}() AS '{SCHEMA_STAMP}'")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")
