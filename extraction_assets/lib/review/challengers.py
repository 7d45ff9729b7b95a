"""Challenger versions: a new prompt version tried on the same documents as the current one, without entering the
queue, until a person promotes it.

A version whose front matter says `challenger: true` is extracted like any other (same applicability, same
documents), but its items are not queued: only where it and a current version of its schema disagree on a
document's field (different values, or one has an item the other lacks) is each side's item queued, with the reason
`challenger_disagrees`, so people's decisions there settle which one is right and become gold for both. Promoting a
challenger is a person's decision, audited in `audit_log` (action `promote`, the version as the item, tenant `*`)
and recorded in `version_promotions`: the challenger becomes current and the versions current until then are
superseded (kept, never queued again). Without any promotion every version that is not a challenger is current, as
before challengers existed. The roles are written to `schema_version_roles`, which the queue reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from extraction_assets.lib.models import stable_id
from extraction_assets.lib.review.audit import advance_outside_head, append_entry
from extraction_assets.lib.review.corrections import WRITE_LOCK, InvalidCorrection, bounded_note
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts, transaction

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

Role = Literal["current", "challenger", "superseded"]
PROMOTE = "promote"  # the audit action of a promotion
ALL_TENANTS = "*"  # a promotion's audit row concerns every tenant's items of the schema
DISAGREES = "challenger_disagrees"  # the queue reason of an item its rival version disagrees with


class VersionRole(BaseModel):
    schema_version: str
    schema_name: str
    role: Role
    rivals: list[str]  # a challenger's current versions, a current version's challengers


class Promotion(BaseModel):
    promotion_id: str
    schema_name: str
    promoted: str
    superseded: list[str]
    promoted_by: str
    promoted_at: str
    note: str | None
    audit_seq: int


def version_roles(schemas: Iterable[SchemaVersion], promotions: Iterable[Promotion] = ()) -> list[VersionRole]:
    """Each version's role from the front matter and the promotions made (oldest first)."""
    by_name: dict[str, list[SchemaVersion]] = {}
    for schema in schemas:
        by_name.setdefault(schema.schema_name, []).append(schema)
    promoted: dict[str, str] = {}  # version -> its latest promotion's time
    superseded: dict[str, str] = {}  # version -> when it was last superseded
    for promotion in promotions:
        promoted[promotion.promoted] = promotion.promoted_at
        superseded.update(dict.fromkeys(promotion.superseded, promotion.promoted_at))
    roles: list[VersionRole] = []
    for name, versions in sorted(by_name.items()):
        role: dict[str, Role] = {}
        for schema in versions:
            key = schema.key
            if key in superseded and superseded[key] >= promoted.get(key, ""):
                role[key] = "superseded"
            elif schema.challenger and key not in promoted:
                role[key] = "challenger"
            else:
                role[key] = "current"
        for key in sorted(role):
            rival_role = {"challenger": "current", "current": "challenger"}.get(role[key])
            rivals = sorted(k for k, r in role.items() if r == rival_role)
            roles.append(VersionRole(schema_version=key, schema_name=name, role=role[key], rivals=rivals))
    return roles


def read_promotions(con: duckdb.DuckDBPyConnection) -> list[Promotion]:
    rows = rows_as_dicts(con, "SELECT * FROM version_promotions ORDER BY promoted_at, promotion_id")
    return [
        Promotion(**{**r, "superseded": json.loads(r["superseded"]), "promoted_at": r["promoted_at"].isoformat()})
        for r in rows
    ]


def read_roles(con: duckdb.DuckDBPyConnection) -> dict[str, VersionRole]:
    rows = rows_as_dicts(con, "SELECT schema_version, schema_name, role, rivals FROM schema_version_roles")
    return {r["schema_version"]: VersionRole(**{**r, "rivals": json.loads(r["rivals"])}) for r in rows}


def sync_roles(con: duckdb.DuckDBPyConnection, schemas: Iterable[SchemaVersion]) -> list[str]:
    """Write the roles the prompt files and the promotions give (in one transaction, only those that changed);
    returns the versions whose role or rivals changed (their queues must be rebuilt)."""
    wanted = {r.schema_version: r for r in version_roles(schemas, read_promotions(con))}
    stored = read_roles(con)
    changed = [key for key, role in wanted.items() if stored.get(key) != role]
    if changed:
        stamp = now()
        with transaction(con):
            con.execute("DELETE FROM schema_version_roles WHERE schema_version IN (SELECT unnest(?))", [changed])
            for key in changed:
                role = wanted[key]
                con.execute(
                    """INSERT INTO schema_version_roles (schema_version, schema_name, role, rivals, decided_at)
                       VALUES (?, ?, ?, ?, ?)""",
                    [key, role.schema_name, role.role, json.dumps(role.rivals), stamp],
                )
    return changed


def promote(
    con: duckdb.DuckDBPyConnection,
    schemas: Iterable[SchemaVersion],
    challenger: str,
    actor: str,
    note: str | None = None,
) -> Promotion:
    """Make a challenger its schema's current version (the current ones superseded), audited, in one transaction.
    The caller rebuilds the queues of the versions involved (`sync_roles` then the queue)."""
    actor = actor.strip()
    if not actor:
        raise InvalidCorrection("who promotes the version is required")
    note = bounded_note(note)
    known = list(schemas)
    roles = {r.schema_version: r for r in version_roles(known, read_promotions(con))}
    role = roles.get(challenger)
    if role is None:
        raise InvalidCorrection(f"no prompt file defines {challenger!r}")
    if role.role != "challenger":
        raise InvalidCorrection(f"{challenger} is {role.role}, not a challenger (front matter `challenger: true`)")
    stamp = now()
    before: dict[str, Any] = {key: r.role for key, r in roles.items() if r.schema_name == role.schema_name}
    after = {
        **{key: ("superseded" if key in role.rivals else value) for key, value in before.items()},
        challenger: "current",
    }
    promotion_id = stable_id("promotion", challenger, stamp.isoformat())
    with WRITE_LOCK, transaction(con):
        entry = append_entry(
            con,
            item_id=challenger,
            tenant_id=ALL_TENANTS,
            actor=actor,
            action=PROMOTE,
            before={"roles": before},
            after={"roles": after, "promotion_id": promotion_id},
            note=note,
        )
        con.execute(
            """INSERT INTO version_promotions (promotion_id, schema_name, promoted, superseded, promoted_by,
                 promoted_at, note, audit_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)""",
            [promotion_id, role.schema_name, challenger, json.dumps(role.rivals), actor, stamp, note, entry.seq],
        )
    advance_outside_head(con, entry)
    sync_roles(con, known)
    return Promotion(
        promotion_id=promotion_id,
        schema_name=role.schema_name,
        promoted=challenger,
        superseded=role.rivals,
        promoted_by=actor,
        promoted_at=stamp.isoformat(),
        note=note,
        audit_seq=entry.seq or 0,
    )


_DISAGREES_IN = "list_contains(list_transform(CAST(q.reasons AS VARCHAR[]), r -> split_part(r, ':', 1)), ?)"


def disagreements(con: duckdb.DuckDBPyConnection, schema_version: str) -> int:
    """Items of the version its queue holds because a rival version disagrees with them (as its items and its rivals'
    give them now: the queue's own rows may wait for its next rebuild)."""
    from extraction_assets.lib.warehouse.review_queue import queue_select

    row = con.execute(
        f"""SELECT count(*) FROM ({queue_select("i.schema_version = ?")}) q WHERE {_DISAGREES_IN}""",
        [schema_version, now(), DISAGREES],
    ).fetchone()
    return int(row[0]) if row else 0


def queued_disagreements(con: duckdb.DuckDBPyConnection, schema_versions: Sequence[str]) -> dict[str, int]:
    """`disagreements` read from each listed version's stored queue rows, in one statement: the same count once its
    queue was refreshed (in step with its items, or rebuilt from them), without deriving the queue again."""
    found = dict(
        con.execute(
            f"""SELECT q.schema_version, count(*) FROM review_queue q
                WHERE q.schema_version IN (SELECT unnest(?)) AND {_DISAGREES_IN} GROUP BY 1""",
            [list(schema_versions), DISAGREES],
        ).fetchall()
    )
    return {version: int(found.get(version, 0)) for version in schema_versions}
