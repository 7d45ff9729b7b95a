"""Routing decisions in the warehouse: which documents each schema version reads, and the clean-up when that changes.

A decision is kept with the fingerprint of the rules that made it, so only documents that are new, or whose
schema's rules changed, are routed again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from extraction_assets.lib.warehouse.backend import retry_conflicts
from extraction_assets.lib.warehouse.connection import id_list, insert_rows, now, transaction
from extraction_assets.lib.warehouse.extraction import MACHINE_OWNED_STATUSES, OUT_OF_DATE_SQL, delete_items, work_sql

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


class Placed(NamedTuple):
    """What routing decides from before it reads a document's text."""

    doc_id: str
    tenant_id: str
    kind: str
    source_uri: str


# A document `s` to route: no decision `a` of the version, or one made under other rules (`$rules`). A live session's
# transcript is never routed: only the session flow (`lib/sessions`) extracts it.
UNROUTED_SQL = "(a.doc_id IS NULL OR a.rules <> $rules) AND s.doc_id NOT IN (SELECT doc_id FROM sessions)"


def documents_to_route(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    kinds: Sequence[str],
    rules: str,
    tenant_id: str | None = None,
    window: range | None = None,
) -> list[Placed]:
    """Scrubbed documents of the schema's kinds with no decision, or one made under other rules, with their tenant,
    kind and path (no text: most decisions are made from them alone); with `window`, only among those raw rows
    (`stored_windows`)."""
    return [
        Placed(*row)
        for row in con.execute(
            work_sql("s.doc_id, r.tenant_id, r.kind, r.source_uri", UNROUTED_SQL, window),
            {"version": schema_version, "kinds": list(kinds), "tenant": tenant_id, "rules": rules},
        ).fetchall()
    ]


class Stored(NamedTuple):
    """Where a document's raw and scrubbed rows were stored when its window was planned, and its text's length: what
    reading its batch (`document_rows`, `scrubbed_rows`) and sizing it (`_batches`) would otherwise look up."""

    raw_rowid: int
    scrubbed_rowid: int
    chars: int


class WindowWork(NamedTuple):
    """A window's work, read in one statement (`window_work`)."""

    unrouted: list[Placed]  # `documents_to_route`
    out_of_date: set[str]  # those of them whose extraction is to be made (`pending_extractions`)
    routed_pending: list[str]  # `pending_extractions` of the documents routing took
    stored: dict[str, Stored]  # every document above


def window_work(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    kinds: Sequence[str],
    rules: str,
    extractor_version: str,
    tenant_id: str | None,
    force: bool,
    window: range | None,
) -> WindowWork:
    """What `documents_to_route` and `pending_extractions` (all, and those taken) give for a window, in one
    statement: planning a window reads its documents once, not three times. With them, each one's row ids and
    length (`Stored`), read from the same rows: a statement fewer each to size a window and to read a batch."""
    rows = con.execute(
        work_sql(
            f"s.doc_id, r.tenant_id, r.kind, r.source_uri, {UNROUTED_SQL}, {OUT_OF_DATE_SQL}, coalesce(a.taken, false),"
            " r.rowid, s.rowid, r.char_count",
            f"({UNROUTED_SQL}) OR ({OUT_OF_DATE_SQL} AND coalesce(a.taken, false))",
            window,
        ),
        {
            "version": schema_version,
            "kinds": list(kinds),
            "tenant": tenant_id,
            "rules": rules,
            "force": force,
            "extractor_version": extractor_version,
        },
    ).fetchall()
    return WindowWork(
        [Placed(*row[:4]) for row in rows if row[4]],
        {row[0] for row in rows if row[4] and row[5]},
        [row[0] for row in rows if row[5] and row[6]],
        {row[0]: Stored(*row[7:]) for row in rows},
    )


class VersionWork(NamedTuple):
    """What a version's work is read against (`versions_with_work`): its document kinds, the fingerprint of its
    routing rules, and the extractor's version for it."""

    kinds: Sequence[str]
    rules: str
    extractor_version: str


def _per_version(sql: str) -> str:
    """A condition of `window_work` on the listed version `v`'s own values instead of the statement's parameters."""
    for name in ("version", "rules", "extractor_version"):
        sql = sql.replace(f"${name}", f"v.{name}")
    return sql.replace("$force", "false")


_VERSIONS_WITH_WORK = f"""WITH v AS (SELECT unnest($versions) AS version, unnest($kinds) AS kinds,
                                 unnest($rules) AS rules, unnest($extractor_versions) AS extractor_version)
    SELECT DISTINCT v.version FROM scrubbed_documents s
        JOIN raw_documents r USING (doc_id)
        JOIN v ON list_contains(v.kinds, r.kind)
        LEFT JOIN extraction_status e ON e.doc_id = s.doc_id AND e.schema_version = v.version
        LEFT JOIN document_applicability a ON a.doc_id = s.doc_id AND a.schema_version = v.version
    WHERE (CAST($tenant AS VARCHAR) IS NULL OR r.tenant_id = $tenant)
      AND (({_per_version(UNROUTED_SQL)}) OR ({_per_version(OUT_OF_DATE_SQL)} AND coalesce(a.taken, false)))"""


def versions_with_work(
    con: duckdb.DuckDBPyConnection, versions: Mapping[str, VersionWork], tenant_id: str | None = None
) -> set[str]:
    """The listed versions with any work (not forced): a document `window_work` would give in some window of it,
    in any shard. One statement for every version of a pass: where a pass finds nothing new, a version with none is
    not planned window by window (a statement each, and its plan, per version)."""
    if not versions:
        return set()
    rows = con.execute(
        _VERSIONS_WITH_WORK,
        {
            "versions": list(versions),
            "kinds": [list(work.kinds) for work in versions.values()],
            "rules": [work.rules for work in versions.values()],
            "extractor_versions": [work.extractor_version for work in versions.values()],
            "tenant": tenant_id,
        },
    ).fetchall()
    return {version for (version,) in rows}


@retry_conflicts
def write_decisions(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    rules: str,
    decisions: Sequence[tuple[Placed, bool, float | None, str]],
) -> dict[str, int]:
    """Store a batch of decisions in a transaction of its own (`store_decisions`)."""
    with transaction(con):
        return store_decisions(con, schema_version, rules, decisions)


def store_decisions(
    con: duckdb.DuckDBPyConnection,
    schema_version: str,
    rules: str,
    decisions: Sequence[tuple[Placed, bool, float | None, str]],
) -> dict[str, int]:
    """Store a batch of decisions and, in the same transaction (the caller's), undo the work on documents no longer
    taken.

    Their machine-owned items (with evidence and queue rows), routing and extraction status go; items a
    person owns stay. Returns how many documents were taken, not taken, and items removed.
    """
    stamp = now()
    dropped = [doc.doc_id for doc, taken, _, _ in decisions if not taken]
    with id_list(con, [doc.doc_id for doc, *_ in decisions]) as (decided, ids):
        con.execute(
            f"DELETE FROM document_applicability WHERE schema_version = ? AND doc_id IN {decided}",
            [schema_version, *ids],
        )
    insert_rows(
        con,
        "document_applicability",
        [
            {
                "doc_id": doc.doc_id,
                "schema_version": schema_version,
                "tenant_id": doc.tenant_id,
                "taken": taken,
                "score": score,
                "reason": reason,
                "rules": rules,
                "decided_at": stamp,
            }
            for doc, taken, score, reason in decisions
        ],
    )
    removed: list[str] = []
    if dropped:  # each statement reads its whole table: none when nothing is dropped
        with id_list(con, dropped) as (gone, ids):
            removed = [
                row[0]
                for row in con.execute(
                    f"""SELECT item_id FROM extracted_items WHERE schema_version = ? AND doc_id IN {gone}
                       AND status IN (SELECT unnest(?)) AND extracted_by <> 'human'""",
                    [schema_version, *ids, list(MACHINE_OWNED_STATUSES)],
                ).fetchall()
            ]
            delete_items(con, removed)
            for table in ("extraction_status", "document_routing"):
                con.execute(
                    f"DELETE FROM {table} WHERE schema_version = ? AND doc_id IN {gone}", [schema_version, *ids]
                )
    return {"taken": len(decisions) - len(dropped), "not_taken": len(dropped), "items_removed": len(removed)}
