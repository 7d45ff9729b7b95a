"""Near-duplicate groups in the queue: what a person decides at once.

The queue (`warehouse/review_queue.py`) gives each needs_review item its group: every undecided item of its tenant
and schema version with the same type and normalized value. A person sees the group once, with each member in its
document's (scrubbed) text, and accepts, rejects or corrects the members they keep selected in one decision
(`corrections.apply_changes`), which writes one audit row per member naming the decision and the group.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from extraction_assets.lib.models import stable_id
from extraction_assets.lib.review.controls import shown
from extraction_assets.lib.review.corrections import MIN_ID_PREFIX, ItemNotFound, item_version
from extraction_assets.lib.review.queries import EvidenceInContext, item_detail
from extraction_assets.lib.warehouse.connection import rows_as_dicts
from extraction_assets.lib.warehouse.review_queue import group_id_sql, group_members

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

MAX_MEMBERS_SHOWN = 200  # a group page lists at most this many members (the decision still names each it takes)


class QueueGroup(BaseModel):
    """One row of the grouped queue: a group of near-duplicates with at least one item waiting for a person."""

    group_id: str
    schema_version: str
    item_type: str
    title: str  # the most likely wrong queued member's title
    item_id: str  # that member (a group of one opens as its item)
    size: int  # undecided members (queued and draft): what a decision on the whole group settles
    queued: int  # members waiting in the queue
    documents: int  # documents the queued members come from
    priority: float  # the errors deciding the group is expected to catch: sum of its members' probability of error
    probability_correct: float  # of the representative member
    rules: list[str]  # every rule that queued a member
    evidence_quote: str | None  # the representative's first quote, scrubbed
    version: str  # a fingerprint of its members and their versions: a decision on a group that moved is refused


class GroupMember(BaseModel):
    item: dict[str, Any]
    version: str
    source_uri: str
    evidence: list[EvidenceInContext]


class GroupDetail(BaseModel):
    group_id: str
    schema_version: str
    item_type: str
    members: list[GroupMember]
    size: int  # every undecided member (more than `members` when the list is cut)
    version: str


def group_version(items: Mapping[str, str]) -> str:
    """The fingerprint of a group's undecided members (item id -> version): changes when one joins, leaves or moves."""
    return stable_id(*(f"{item_id}:{version}" for item_id, version in sorted(items.items())), length=12)


def _versions(rows: list[dict[str, Any]]) -> dict[str, str]:
    return {
        r["item_id"]: item_version(
            {
                **r,
                "value": json.loads(r["value"]),
                "normalized_value": None if r["normalized_value"] is None else json.loads(r["normalized_value"]),
                "updated_at": r["updated_at"].isoformat(),
            }
        )
        for r in rows
    }


def member_versions(con: duckdb.DuckDBPyConnection, tenant_id: str, item_ids: list[str]) -> dict[str, str]:
    """Each item's version (`corrections.item_version`), read in one query."""
    rows = rows_as_dicts(
        con,
        """SELECT item_id, status, value, normalized_value, updated_at, updated_by FROM extracted_items
           WHERE tenant_id = ? AND item_id IN (SELECT unnest(?))""",
        [tenant_id, item_ids],
    )
    return _versions(rows)


def _group_versions(con: duckdb.DuckDBPyConnection, tenant_id: str, group_ids: list[str]) -> dict[str, str]:
    """Each group's fingerprint, from its undecided members, in one query."""
    rows = rows_as_dicts(
        con,
        f"""SELECT * FROM (
                SELECT item_id, status, value, normalized_value, updated_at, updated_by, {group_id_sql()} AS group_id
                FROM extracted_items i WHERE i.tenant_id = ? AND i.status IN ('draft', 'needs_review'))
            WHERE group_id IN (SELECT unnest(?))""",
        [tenant_id, group_ids],
    )
    by_group: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_group.setdefault(row["group_id"], []).append(row)
    return {group_id: group_version(_versions(members)) for group_id, members in by_group.items()}


def list_groups(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    schema_version: str | None = None,
    item_type: str | None = None,
    reason: str | None = None,
    limit: int = 200,
) -> list[QueueGroup]:
    """The tenant's queue as groups, the most valuable decision first (`limit` groups at most)."""
    from extraction_assets.lib.warehouse.documents import masked_quotes  # the quote is cut from the scrubbed text

    rows = rows_as_dicts(
        con,
        """WITH queued AS (
               SELECT q.*, row_number() OVER (PARTITION BY q.group_id
                          ORDER BY q.probability_correct, q.item_id) AS rank
               FROM review_queue q
               WHERE q.tenant_id = ? AND q.group_id IS NOT NULL
                 AND (CAST(? AS VARCHAR) IS NULL OR q.schema_version = ?)
                 AND (CAST(? AS VARCHAR) IS NULL OR q.item_type = ?)
                 AND (CAST(? AS VARCHAR) IS NULL OR list_contains(
                      list_transform(CAST(q.reasons AS VARCHAR[]), r -> split_part(r, ':', 1)), ?)))
           SELECT q.group_id, any_value(q.schema_version) AS schema_version, any_value(q.item_type) AS item_type,
                  max(q.group_size) AS size, count(*) AS queued, count(DISTINCT q.doc_id) AS documents,
                  max(q.priority) AS priority,
                  arg_min(q.title, q.rank) AS title, arg_min(q.item_id, q.rank) AS item_id,
                  arg_min(q.doc_id, q.rank) AS doc_id, min(q.probability_correct) AS probability_correct,
                  list_sort(list_distinct(flatten(list(list_transform(CAST(q.reasons AS VARCHAR[]),
                      r -> split_part(r, ':', 1)))))) AS rules
           FROM queued q GROUP BY q.group_id
           ORDER BY priority DESC, size DESC, probability_correct, q.group_id
           LIMIT ?""",
        [tenant_id, *(schema_version, schema_version), *(item_type, item_type), *(reason, reason), max(limit, 0)],
    )
    spans = con.execute(
        """SELECT item_id, doc_id, char_start, char_end FROM evidence WHERE item_id IN (SELECT unnest(?))
           QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY char_start) = 1""",
        [[r["item_id"] for r in rows]],
    ).fetchall()
    quotes = masked_quotes(con, [tuple(s) for s in spans])
    versions = _group_versions(con, tenant_id, [r["group_id"] for r in rows])
    return [
        QueueGroup.model_validate(
            shown({**r, "evidence_quote": quotes.get(r["item_id"]), "version": versions.get(r["group_id"], "")})
        )
        for r in rows
    ]


def resolve_group_id(con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str) -> str:
    """The full id of a group of this tenant from its id or a unique prefix of at least six characters: a group in
    the queue, or one whose undecided items are all drafts now (its queued ones were decided)."""
    ref = ref.strip().lower()
    if len(ref) < MIN_ID_PREFIX:
        raise ItemNotFound(
            f"group {ref!r} not found in tenant {tenant_id!r} (give at least {MIN_ID_PREFIX} characters)"
        )
    ids = [
        r[0]
        for r in con.execute(
            """SELECT DISTINCT group_id FROM review_queue WHERE tenant_id = ? AND starts_with(group_id, ?)
               ORDER BY 1 LIMIT 5""",
            [tenant_id, ref],
        ).fetchall()
    ]
    if not ids:
        ids = [
            r[0]
            for r in con.execute(
                f"""SELECT DISTINCT g FROM (SELECT {group_id_sql()} AS g FROM extracted_items i
                        WHERE i.tenant_id = ? AND i.status IN ('draft', 'needs_review'))
                    WHERE starts_with(g, ?) ORDER BY 1 LIMIT 5""",
                [tenant_id, ref],
            ).fetchall()
        ]
    if not ids:
        raise ItemNotFound(f"group {ref!r} not found in tenant {tenant_id!r}: none of its items is undecided")
    if ref in ids:
        return ref
    if len(ids) > 1:
        raise ItemNotFound(f"group prefix {ref!r} is ambiguous in tenant {tenant_id!r}: {', '.join(ids)}")
    return ids[0]


def group_detail(con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str, context_chars: int = 120) -> GroupDetail:
    """A group's undecided members, most likely wrong first, each with its evidence in its (scrubbed) text."""
    group_id = resolve_group_id(con, tenant_id, ref)
    ids = group_members(con, tenant_id, group_id)
    if not ids:
        raise ItemNotFound(f"group {group_id} has no undecided item left in tenant {tenant_id!r}")
    versions = member_versions(con, tenant_id, ids)
    members = []
    for item_id in ids[:MAX_MEMBERS_SHOWN]:
        detail = item_detail(con, tenant_id, item_id, context_chars)
        members.append(
            GroupMember(
                item=detail.item, version=versions[item_id], source_uri=detail.source_uri, evidence=detail.evidence
            )
        )
    first = members[0].item
    return GroupDetail(
        group_id=group_id,
        schema_version=first["schema_version"],
        item_type=first["item_type"],
        members=members,
        size=len(ids),
        version=group_version(versions),
    )


def group_item_ids(
    con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str, expected_version: str | None = None
) -> tuple[str, list[str], dict[str, str]]:
    """A whole group as a decision takes it: its id, its undecided members and their versions. With
    `expected_version` (the fingerprint the person saw) a group that moved since is refused."""
    from extraction_assets.lib.review.corrections import StaleVersion

    group_id = resolve_group_id(con, tenant_id, ref)
    ids = group_members(con, tenant_id, group_id)
    if not ids:
        raise ItemNotFound(f"group {group_id} has no undecided item left in tenant {tenant_id!r}")
    versions = member_versions(con, tenant_id, ids)
    if expected_version is not None and group_version(versions) != expected_version:
        raise StaleVersion(
            f"group {group_id} changed since you saw it (an item was decided, re-extracted or joined it); "
            "nothing was saved, look again and decide",
            [],
        )
    return group_id, ids, versions
