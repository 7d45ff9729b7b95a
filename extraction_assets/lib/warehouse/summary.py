"""What is in the warehouse, in a few numbers: the demo's closing summary and `extraction-assets summary`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


def warehouse_summary(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    def pairs(sql: str) -> list[tuple[Any, ...]]:
        return [tuple(r) for r in con.execute(sql).fetchall()]

    def one(sql: str) -> int:
        return int(con.execute(sql).fetchone()[0])  # type: ignore[index]

    return {
        "documents": one("SELECT count(*) FROM raw_documents"),
        "documents_by_tenant_kind": pairs(
            "SELECT tenant_id, kind, count(*) FROM raw_documents GROUP BY 1, 2 ORDER BY 1, 2"
        ),
        "pii_masked": pairs(
            """SELECT k.key, sum(CAST(k.value AS INTEGER)) FROM scrubbed_documents s,
               json_each(s.pii_counts) k GROUP BY 1 ORDER BY 1"""
        ),
        "items_by_type": pairs(
            """SELECT schema_version, item_type, status, count(*) FROM extracted_items
               GROUP BY 1, 2, 3 ORDER BY 1, 2, 3"""
        ),
        "items": one("SELECT count(*) FROM extracted_items"),
        "evidence": one("SELECT count(*) FROM evidence"),
        "evidence_by_match": pairs("SELECT match_kind, count(*) FROM evidence GROUP BY 1 ORDER BY 1"),
        "review_queue": one("SELECT count(*) FROM review_queue"),
        "dead_letters_by_stage": pairs("SELECT stage, count(*) FROM dead_letters GROUP BY 1 ORDER BY 1"),
        "dead_letters": one("SELECT count(*) FROM dead_letters"),
        "failed_documents": one("SELECT count(*) FROM extraction_status WHERE status = 'failed'"),
        "by_schema": pairs(
            """WITH routed AS (
                   SELECT schema_version, count(*) FILTER (WHERE taken) AS read,
                          count(*) FILTER (WHERE NOT taken) AS skipped
                   FROM document_applicability GROUP BY 1),
               per_doc AS (
                   SELECT schema_version, doc_id, count(*) AS items,
                          count(*) FILTER (WHERE status = 'needs_review') AS nr
                   FROM extracted_items GROUP BY 1, 2)
               SELECT r.schema_version, r.read, r.skipped, coalesce(sum(p.items), 0), coalesce(sum(p.nr), 0),
                      coalesce(max(p.items), 0), count(p.doc_id) FILTER (WHERE p.nr > 0)
               FROM routed r LEFT JOIN per_doc p USING (schema_version) GROUP BY 1, 2, 3 ORDER BY 1"""
        ),
        "unrouted_documents": one(
            """SELECT count(*) FROM scrubbed_documents s WHERE NOT EXISTS (
                   SELECT 1 FROM document_applicability a WHERE a.doc_id = s.doc_id AND a.taken)"""
        ),
    }
