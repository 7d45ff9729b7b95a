"""The figures each asset reports in its metadata, read from the warehouse after its batches are written."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.warehouse.connection import rows_as_dicts
from extraction_assets.lib.warehouse.ddl import TABLES
from extraction_assets.lib.warehouse.documents import masked_quotes

PREVIEW_ROWS = 8  # items shown with their evidence in a partition's metadata

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


def row_count(con: duckdb.DuckDBPyConnection, table: str, schema_version: str | None = None) -> int:
    """Rows of one table, or of one schema version's partition of it."""
    if table not in TABLES:
        raise ValueError(f"unknown table {table!r}")
    if schema_version is None:
        return int(con.execute(f"SELECT count(*) FROM {table}").fetchone()[0])  # type: ignore[index]
    sql = f"SELECT count(*) FROM {table} WHERE schema_version = ?"
    return int(con.execute(sql, [schema_version]).fetchone()[0])  # type: ignore[index]


def _counts(con: duckdb.DuckDBPyConnection, sql: str, schema_version: str) -> dict[str, int]:
    return {str(key): int(n) for key, n in con.execute(sql, [schema_version]).fetchall()}


def _tally(table: str, column: str) -> str:
    """The listed versions' rows of `table` counted by `column`: per version, a list of {key, n}."""
    return f"""SELECT schema_version, list(struct_pack(key := k, n := n) ORDER BY k) AS tally FROM (
                   SELECT schema_version, {column} AS k, count(*) AS n FROM {table}
                   WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1, 2) GROUP BY 1"""


MACHINE = "extracted_by <> 'human' AND status IN ('draft', 'needs_review')"  # the machine's verdict stands


def extraction_figures(con: duckdb.DuckDBPyConnection, versions: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each listed version's items, evidence, item types, routing outcomes and most confident items, by version (a
    version without rows gets zeros). One statement counts every version of a run, one reads their previews: a pass
    reports them for every version, and one statement a version was a tenth of a warm pass's own time."""
    listed = list(versions)
    rows = con.execute(
        f"""WITH listed AS (SELECT unnest($versions) AS version),
               routed AS (SELECT schema_version, count(*) FILTER (WHERE taken) AS taken,
                                 count(*) FILTER (WHERE NOT taken) AS not_taken
                          FROM document_applicability WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1),
               items AS (SELECT schema_version, count(*) AS items,
                                count(*) FILTER (WHERE status = 'needs_review') AS needs_review,
                                -- the machine's calibrated items: what their probabilities expect review to catch
                                count(probability_correct) FILTER (WHERE {MACHINE}) AS calibrated,
                                sum(1 - probability_correct) FILTER (WHERE {MACHINE}) AS expected_wrong,
                                sum(1 - probability_correct) FILTER (WHERE {MACHINE} AND status = 'needs_review')
                                    AS expected_wrong_queued,
                                avg(probability_correct) FILTER (WHERE {MACHINE} AND status = 'draft')
                                    AS expected_precision_unqueued
                         FROM extracted_items WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1),
               per_document AS (SELECT schema_version, count(*) AS documents, round(avg(n), 2) AS mean, max(n) AS most
                                FROM (SELECT schema_version, doc_id, count(*) AS n FROM extracted_items
                                      WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1, 2) GROUP BY 1),
               evidence AS (SELECT schema_version, count(*) AS n FROM evidence
                            WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1),
               by_type AS ({_tally("extracted_items", "item_type")}),
               outcomes AS ({_tally("document_routing", "outcome")})  -- routing: where a schema routes documents
           SELECT l.version, coalesce(r.taken, 0), coalesce(r.not_taken, 0), coalesce(i.items, 0),
                  coalesce(i.needs_review, 0), coalesce(p.documents, 0), coalesce(p.mean, 0), coalesce(p.most, 0),
                  coalesce(e.n, 0), coalesce(t.tally, []), coalesce(o.tally, []), coalesce(i.calibrated, 0),
                  i.expected_wrong, i.expected_wrong_queued, i.expected_precision_unqueued
           FROM listed l LEFT JOIN routed r ON r.schema_version = l.version
               LEFT JOIN items i ON i.schema_version = l.version
               LEFT JOIN per_document p ON p.schema_version = l.version
               LEFT JOIN evidence e ON e.schema_version = l.version
               LEFT JOIN by_type t ON t.schema_version = l.version
               LEFT JOIN outcomes o ON o.schema_version = l.version""",
        {"versions": listed},
    ).fetchall()
    previews = _preview_items(con, listed)
    return {
        version: {
            "documents_taken": int(taken),
            "documents_not_taken": int(not_taken),
            "items": int(items),
            "needs_review_items": int(needs_review),
            "items_per_document": {"documents_with_items": int(documents), "mean": float(mean), "max": int(most)},
            "evidence": int(evidence),
            "items_by_type": {str(t["key"]): int(t["n"]) for t in by_type},
            "routing_outcomes": {str(t["key"]): int(t["n"]) for t in outcomes},
            "preview": previews.get(version, []),
            "calibrated_items": int(calibrated),
            "expected_error_capture": _share(wrong_queued, wrong),
            "expected_precision_unqueued": None if unqueued is None else round(float(unqueued), 4),
        }
        for (
            version,
            taken,
            not_taken,
            items,
            needs_review,
            documents,
            mean,
            most,
            evidence,
            by_type,
            outcomes,
            calibrated,
            wrong,
            wrong_queued,
            unqueued,
        ) in rows
    }


def _share(part: float | None, whole: float | None) -> float | None:
    return round(float(part or 0.0) / float(whole), 4) if whole else None


def _preview_items(con: duckdb.DuckDBPyConnection, versions: list[str]) -> dict[str, list[dict[str, Any]]]:
    """Each version's most confident items with their evidence as the scrubbed text shows it: the UI that shows
    this preview has no sign-in, so never the stored (raw) quote.

    What DuckDB holds for it is bounded by the preview, not by the warehouse: each version's first items (`min_by`
    with a count keeps those alone), then those items' rows and evidence (hashes of those few ids, the tables scanned
    past them). Joined first, with a branch a version of one statement, every version's items were hashed at once:
    on a 32 k-document warehouse that statement alone ran out of a 48 MB limit (this one passes at 24 MB), so in a
    pass, beside what DuckDB holds between checkpoints, it could fail the whole extraction step (a window over every
    version's items and evidence, before that, sorted them all and ran out of 64 MB). An item with no evidence shows
    no row: a version whose first items lack evidence is read again with more of them, until its rows are full or
    its items are all read."""
    listed = sorted(set(versions))
    rows: dict[str, list[dict[str, Any]]] = {}
    wanted, items = listed, PREVIEW_ROWS
    while wanted:
        found = _preview_rows(con, wanted, items)
        rows |= {version: found[version][0][:PREVIEW_ROWS] for version in wanted}
        wanted = [v for v in wanted if len(rows[v]) < PREVIEW_ROWS and found[v][1] == items]
        items *= 4
    ordered = [row for version in listed for row in rows[version]]
    quotes = masked_quotes(con, [(r["evidence_id"], r["doc_id"], r["char_start"], r["char_end"]) for r in ordered])
    shown = ("item_type", "title", "confidence", "probability_correct", "status", "quote", "match_kind", "turn_id")
    previews: dict[str, list[dict[str, Any]]] = {}
    for r in ordered:
        row = {key: quotes.get(r["evidence_id"]) if key == "quote" else r[key] for key in shown}
        previews.setdefault(r["schema_version"], []).append(row)
    return previews


def _preview_rows(
    con: duckdb.DuckDBPyConnection, versions: list[str], items: int
) -> dict[str, tuple[list[dict[str, Any]], int]]:
    """Each version's first `items` items (by confidence, then id) with their evidence, in preview order, and how
    many items were read. One statement for every version: a pass pays one statement's planning, not one a version."""
    found: dict[str, tuple[list[dict[str, Any]], set[str]]] = {version: ([], set()) for version in versions}
    for row in rows_as_dicts(
        con,
        f"""WITH firsts AS (
                SELECT unnest(min_by(item_id, struct_pack(c := -confidence, i := item_id), {items:d})) AS item_id
                FROM extracted_items WHERE schema_version IN (SELECT unnest(?)) GROUP BY schema_version)
            SELECT i.schema_version, i.item_id, i.item_type, i.title, i.confidence, i.probability_correct, i.status,
                   i.doc_id, e.evidence_id, e.char_start, e.char_end, e.match_kind, e.turn_id
            FROM firsts f JOIN extracted_items i USING (item_id) LEFT JOIN evidence e USING (item_id)
            ORDER BY i.schema_version, i.confidence DESC, i.item_id, e.evidence_id""",
        [versions],
    ):
        shown, read = found[row["schema_version"]]
        read.add(row["item_id"])
        if row["evidence_id"] is not None:  # an item without evidence shows no row (the preview's inner join)
            shown.append(row)
    return {version: (shown, len(read)) for version, (shown, read) in found.items()}


def review_queue_figures(con: duckdb.DuckDBPyConnection, schema_versions: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Each listed version's queue: its rows (`queued`), by review rule, its items by status, the most urgent queued
    items, its groups, and the items reviewers added. A statement per figure for every version of a pass (one a
    version was a few ms of planning each)."""
    listed = list(dict.fromkeys(schema_versions))
    figures: dict[str, dict[str, Any]] = {
        version: {
            "queued": 0,
            "by_rule": {},
            "items_by_status": {},
            "preview": [],
            "groups": 0,
            "added_by_reviewers": 0,
        }
        for version in listed
    }
    params = {"versions": listed}
    for name, sql in (
        (
            "by_rule",
            """SELECT q.schema_version, split_part(r.reason, ':', 1) AS rule, count(*) FROM review_queue q,
               unnest(CAST(q.reasons AS VARCHAR[])) AS r(reason) WHERE q.schema_version IN (SELECT unnest($versions))
               GROUP BY 1, 2 ORDER BY 1, 2""",
        ),
        (
            "items_by_status",
            """SELECT schema_version, status, count(*) FROM extracted_items
               WHERE schema_version IN (SELECT unnest($versions)) GROUP BY 1, 2 ORDER BY 1, 2""",
        ),
    ):
        for version, key, n in con.execute(sql, params).fetchall():
            figures[version][name][str(key)] = int(n)
    # the most urgent rows of each version, by `LIMIT` a version (DuckDB keeps those alone)
    for row in rows_as_dicts(
        con,
        """SELECT v.version, p.item_type, p.title, p.confidence, p.reasons, p.source_uri
           FROM unnest(CAST(? AS VARCHAR[])) v(version), LATERAL (
               SELECT item_type, title, confidence, reasons, source_uri, priority, item_id FROM review_queue q
               WHERE q.schema_version = v.version ORDER BY priority DESC, item_id LIMIT 8) p
           ORDER BY v.version, p.priority DESC, p.item_id""",
        [listed],
    ):
        figures[row.pop("version")]["preview"].append(row)
    # what the queue holds in groups (one decision each), and the items reviewers added that the extractor missed
    for version, queued, groups, added in con.execute(
        """WITH queued AS (SELECT schema_version, count(*) AS n, count(DISTINCT group_id) AS groups FROM review_queue
                           WHERE schema_version IN (SELECT unnest($versions)) GROUP BY 1),
                added AS (SELECT schema_version, count(*) AS n FROM extracted_items
                          WHERE schema_version IN (SELECT unnest($versions)) AND added_by IS NOT NULL GROUP BY 1)
           SELECT schema_version, coalesce(q.n, 0), coalesce(q.groups, 0), coalesce(a.n, 0)
           FROM queued q FULL JOIN added a USING (schema_version)""",
        params,
    ).fetchall():
        figures[version].update(queued=int(queued), groups=int(groups), added_by_reviewers=int(added))
    return figures


def versions_summary(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """One row per schema version the warehouse holds: what the asset overview shows beside the latest partition's
    own figures, so every version is seen at once."""
    return rows_as_dicts(
        con,
        """WITH versions AS (
                   SELECT schema_version FROM document_applicability
                   UNION SELECT schema_version FROM extracted_items),
               taken AS (
                   SELECT schema_version, count(*) FILTER (WHERE taken) AS documents_read
                   FROM document_applicability GROUP BY 1),
               items AS (
                   SELECT schema_version, count(*) AS items,
                          count(*) FILTER (WHERE status = 'needs_review') AS needs_review,
                          count(*) FILTER (WHERE status = 'accepted') AS accepted
                   FROM extracted_items GROUP BY 1),
               status AS (
                   SELECT schema_version, count(*) FILTER (WHERE status = 'failed') AS documents_failed,
                          max(updated_at) AS last_extracted
                   FROM extraction_status GROUP BY 1)
               SELECT v.schema_version AS version, coalesce(t.documents_read, 0) AS documents_read,
                      coalesce(i.items, 0) AS items, coalesce(i.needs_review, 0) AS needs_review,
                      coalesce(i.accepted, 0) AS accepted, coalesce(s.documents_failed, 0) AS documents_failed,
                      s.last_extracted
               FROM versions v LEFT JOIN taken t USING (schema_version) LEFT JOIN items i USING (schema_version)
               LEFT JOIN status s USING (schema_version)
               ORDER BY 1""",
    )
