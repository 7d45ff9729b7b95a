"""The review queue: derived from the items that need a person, kept in step with every change a person makes.

Which items: a current version's needs_review items, and where a challenger version and a current one disagree
on a document's field, each side's item (`lib/review/challengers.py`; `queue_select`).

Near-duplicate items are grouped, so that one decision can settle them all: a group is every undecided item
(`draft` or `needs_review`) of one tenant and schema version with the same item type and the same normalized value
(the field's `value`, else the item's title, which for items without one is their matched clause). A queue row
carries its group and the group's size, and is ranked by the expected value of deciding its group: the errors a
decision is expected to catch, the sum over the group's undecided items of their probability of being wrong.
That probability is `extracted_items.tenant_probability` where the item's tenant refit its calibration from its
decisions, else `probability_correct` where the item's version is calibrated, else the item's confidence read as one
(its band's promise: "about this often right").
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from extraction_assets.lib.warehouse.backend import retry_conflicts
from extraction_assets.lib.warehouse.connection import merge_rows, now, transaction

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

UNDECIDED = ("draft", "needs_review")  # what a group decision may still settle

# The text two items must share to be near-duplicates: the value (`{"value": x}` fields), else the title; Unicode
# NFC, lower case, every run of characters that are not letters or digits one space.
GROUP_TEXT_SQL = (
    "trim(regexp_replace(lower(nfc_normalize(coalesce(json_extract_string({i}.value, '$.value'), {i}.title))), "
    "'[^\\p{{L}}\\p{{N}}]+', ' ', 'g'))"
)
# A group's id: 16 hex digits of a hash of tenant, schema version, item type and the normalized text.
GROUP_ID_SQL = (
    "left(md5(concat_ws(chr(31), {i}.tenant_id, {i}.schema_version, {i}.item_type, " + GROUP_TEXT_SQL + ")), 16)"
)
# The probability that an item is right: its tenant's refit where there is one (`review/lessons.py`), else its
# version's calibration, else its confidence.
PROBABILITY_SQL = "coalesce({i}.tenant_probability, {i}.probability_correct, {i}.confidence)"


def group_id_sql(alias: str = "i") -> str:
    """The SQL expression of an item's group id, for an `extracted_items` row named `alias`."""
    return GROUP_ID_SQL.format(i=alias)


def probability_sql(alias: str = "i") -> str:
    return PROBABILITY_SQL.format(i=alias)


QUEUE_COLUMNS = (
    "item_id, tenant_id, doc_id, schema_version, item_type, title, confidence, reasons, evidence_quote, source_uri, "
    "priority, queued_at, group_id, group_size, probability_correct"
)


def queue_select(scope: str, queued_at: str = "?") -> str:
    """The queue rows of the undecided items `scope` selects (a condition on `i`); the parameters are the scope's,
    then the time the rows are queued at (`queued_at`: its placeholder).

    A version's role (`schema_version_roles`; none: current) decides what it queues: a current version its
    needs_review items, a challenger nothing of its own; and both the items a rival version disagrees with (the
    rival extracted the document and has no item of that type with the same normalized value), with the reason
    `challenger_disagrees: <rival> says <its titles, or nothing>`. A superseded version queues nothing.
    """
    text = GROUP_TEXT_SQL
    return f"""WITH members AS (
                   SELECT i.item_id, i.status, {group_id_sql()} AS group_id, {probability_sql()} AS p
                   FROM extracted_items i
                   WHERE i.status IN ('draft', 'needs_review') AND ({scope})),
               groups AS (
                   SELECT group_id, count(*) AS group_size, sum(1.0 - p) AS expected_errors
                   FROM members GROUP BY group_id),
               rival_of AS (
                   SELECT schema_version, unnest(CAST(rivals AS VARCHAR[])) AS rival FROM schema_version_roles),
               disagree AS (
                   SELECT m.item_id, list('challenger_disagrees: ' || rv.rival || ' says ' || coalesce(
                              (SELECT string_agg(t.title, ' | ' ORDER BY t.title) FROM extracted_items t
                               WHERE t.schema_version = rv.rival AND t.doc_id = i.doc_id
                                 AND t.item_type = i.item_type), 'nothing') ORDER BY rv.rival) AS reasons
                   FROM members m JOIN extracted_items i USING (item_id)
                   JOIN rival_of rv ON rv.schema_version = i.schema_version
                   WHERE EXISTS (SELECT 1 FROM extraction_status s WHERE s.doc_id = i.doc_id
                                   AND s.schema_version = rv.rival AND s.status <> 'failed')
                     AND NOT EXISTS (SELECT 1 FROM extracted_items t WHERE t.schema_version = rv.rival
                                       AND t.doc_id = i.doc_id AND t.item_type = i.item_type
                                       AND {text.format(i="t")} = {text.format(i="i")})
                   GROUP BY m.item_id)
               SELECT i.item_id, i.tenant_id, i.doc_id, i.schema_version, i.item_type, i.title, i.confidence,
                      to_json(list_concat(
                          CASE WHEN m.status = 'needs_review' THEN CAST(i.review_reasons AS VARCHAR[]) ELSE [] END,
                          coalesce(d.reasons, []))) AS reasons,
                      (SELECT e.quote FROM evidence e WHERE e.item_id = i.item_id
                       ORDER BY e.char_start LIMIT 1) AS evidence_quote,
                      r.source_uri, round(g.expected_errors, 4) AS priority, {queued_at} AS queued_at, m.group_id,
                      g.group_size,
                      m.p AS probability_correct
               FROM members m JOIN groups g USING (group_id)
               JOIN extracted_items i USING (item_id) JOIN raw_documents r ON r.doc_id = i.doc_id
               LEFT JOIN schema_version_roles ro ON ro.schema_version = i.schema_version
               LEFT JOIN disagree d ON d.item_id = m.item_id
               WHERE coalesce(ro.role, 'current') <> 'superseded'
                 AND ((m.status = 'needs_review' AND coalesce(ro.role, 'current') = 'current')
                      OR d.item_id IS NOT NULL)"""


def _queue_rows(scope: str) -> str:
    return f"INSERT INTO review_queue ({QUEUE_COLUMNS}) SELECT {QUEUE_COLUMNS} FROM ({queue_select(scope)})"


# What a version's queue is derived from, as one fingerprint: every row and column `queue_select` reads for the version
# (its items, their first evidence quotes and their documents' sources, its role and rivals, the rivals' items and
# extraction statuses) and its queued rows, each part `count/bit_xor(hash(row))`, behind a hash of the query that
# derives the queue (other code, another fingerprint). Equal fingerprints: the same rows, the same queue.
# One statement gives every listed version's (`$versions`) fingerprint, beside the one recorded for it: a pass
# checks all its versions' queues at once (a statement a version was 6 ms of planning each, whatever its size).
_ITEM_ROW = (
    "item_id, status, tenant_id, doc_id, item_type, title, value, confidence, probability_correct, tenant_probability, "
    "CAST(review_reasons AS VARCHAR), extracted_by, updated_at"
)
_HASHED = "count(*) || '/' || coalesce(bit_xor(hash({row})), 0)"
_PART = f"SELECT {_HASHED}"
_QUEUED_PARTS = f"""SELECT version, ({_PART.format(row="item_id, queued_at")} FROM review_queue q
                                    WHERE q.schema_version = v.version)
    FROM (SELECT unnest(CAST($versions AS VARCHAR[])) AS version) v"""  # each version's queued part
_PART_OF = f"SELECT {{version}} AS version, {_HASHED} AS part"  # a part of each version's fingerprint
# the parts of a version's fingerprint, in its order
_PARTS = ("items", "quotes", "sources", "roles", "rival_items", "rival_statuses", "queued")
_QUEUE_INPUTS = f"""WITH listed AS (SELECT unnest(CAST($versions AS VARCHAR[])) AS version),
         v_items AS (SELECT * FROM extracted_items WHERE schema_version IN (SELECT version FROM listed)),
         rivals AS (SELECT DISTINCT schema_version AS version, unnest(CAST(rivals AS VARCHAR[])) AS rival
                    FROM schema_version_roles WHERE schema_version IN (SELECT version FROM listed)),
         items AS ({_PART_OF.format(version="schema_version", row=_ITEM_ROW)} FROM v_items GROUP BY 1),
         quotes AS ({_PART_OF.format(version="i.schema_version", row="e.item_id, e.char_start, e.quote")}
                    FROM evidence e JOIN v_items i ON i.item_id = e.item_id GROUP BY 1),
         sources AS ({_PART_OF.format(version="d.schema_version", row="r.doc_id, r.source_uri")}
                     FROM raw_documents r JOIN (SELECT DISTINCT schema_version, doc_id FROM v_items) d
                     ON d.doc_id = r.doc_id GROUP BY 1),
         roles AS ({_PART_OF.format(version="schema_version", row="role, CAST(rivals AS VARCHAR), decided_at")}
                   FROM schema_version_roles WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1),
         rival_items AS ({
    _PART_OF.format(
        version="v.version", row="t.item_id, t.schema_version, t.doc_id, t.item_type, t.title, t.value, t.updated_at"
    )
} FROM extracted_items t JOIN rivals v ON t.schema_version = v.rival GROUP BY 1),
         rival_statuses AS ({_PART_OF.format(version="v.version", row="s.doc_id, s.schema_version, s.status")}
                            FROM extraction_status s JOIN rivals v ON s.schema_version = v.rival GROUP BY 1),
         queued AS ({_PART_OF.format(version="schema_version", row="item_id, queued_at")}
                    FROM review_queue WHERE schema_version IN (SELECT version FROM listed) GROUP BY 1)
    SELECT l.version, concat_ws(':', {", ".join(f"coalesce({t}.part, '0/0')" for t in _PARTS)}),
        k.fingerprint, k.checked_at
    FROM listed l {" ".join(f"LEFT JOIN {t} ON {t}.version = l.version" for t in _PARTS)}
        LEFT JOIN review_queue_inputs k ON k.schema_version = l.version"""
_QUEUE_CODE = hashlib.sha256((queue_select("i.schema_version = $version") + _QUEUE_INPUTS).encode()).hexdigest()[:16]
# An item's group and its tenant and item type, each behind its version (a queue extension's, every version's at once)
_GROUP_OF_VERSION_SQL = f"concat_ws(chr(31), i.schema_version, {group_id_sql()})"
_KIND_SQL = "concat_ws(chr(31), i.schema_version, i.tenant_id, i.item_type)"
# The first three parts of the fingerprint for the items each version wrote after its own time (`$since`, by
# `$versions`): the items, their evidence, and the documents no earlier item of the version comes from; then the
# groups the items are in, and their kinds. One row per version asked ('0/0' for a part with no row), in one statement.
_ADDED_INPUTS = f"""WITH asked AS (
        SELECT unnest(CAST($versions AS VARCHAR[])) AS version, unnest(CAST($since AS TIMESTAMP[])) AS since),
    added AS (SELECT i.* FROM extracted_items i
              JOIN asked a ON i.schema_version = a.version AND i.updated_at > a.since),
    items AS (SELECT i.schema_version AS version, {_HASHED.format(row=_ITEM_ROW)} AS part,
                     list(DISTINCT {_GROUP_OF_VERSION_SQL}) AS groups, list(DISTINCT {_KIND_SQL}) AS kinds
              FROM added i GROUP BY i.schema_version),
    quotes AS (SELECT v.version, {_HASHED.format(row="e.item_id, e.char_start, e.quote")} AS part
               FROM evidence e JOIN (SELECT DISTINCT schema_version AS version, item_id FROM added) v USING (item_id)
               GROUP BY v.version),
    sources AS (SELECT d.version, {_HASHED.format(row="r.doc_id, r.source_uri")} AS part
                FROM raw_documents r
                JOIN (SELECT DISTINCT schema_version AS version, doc_id FROM added) d USING (doc_id)
                JOIN asked a USING (version)
                WHERE NOT EXISTS (SELECT 1 FROM extracted_items o WHERE o.schema_version = d.version
                                    AND o.doc_id = r.doc_id AND o.updated_at <= a.since)
                GROUP BY d.version)
    SELECT a.version, coalesce(items.part, '0/0'), coalesce(quotes.part, '0/0'), coalesce(sources.part, '0/0'),
           coalesce(items.groups, []), coalesce(items.kinds, [])
    FROM asked a LEFT JOIN items USING (version) LEFT JOIN quotes USING (version) LEFT JOIN sources USING (version)"""


@dataclass(frozen=True)
class QueueInputs:
    """The fingerprint recorded for a version's queue (`queue_inputs`), and when."""

    fingerprint: str
    checked_at: datetime


def queue_inputs(con: duckdb.DuckDBPyConnection, schema_version: str) -> str:
    """The fingerprint of what the version's queue is derived from, and of the queue itself (`_QUEUE_INPUTS`)."""
    return queue_currency(con, [schema_version])[schema_version][0]


def queue_currency(
    con: duckdb.DuckDBPyConnection, schema_versions: Sequence[str]
) -> dict[str, tuple[str, QueueInputs | None]]:
    """Each listed version's fingerprint now (`queue_inputs`) and the one recorded for its queue (or None), read in
    one statement (one snapshot): a queue whose two are equal is in step with its items."""
    rows = con.execute(_QUEUE_INPUTS, {"versions": list(dict.fromkeys(schema_versions))}).fetchall()
    return {
        version: (f"{_QUEUE_CODE}:{parts}", None if recorded is None else QueueInputs(recorded, checked_at))
        for version, parts, recorded, checked_at in rows
    }


def remember_queue_inputs(con: duckdb.DuckDBPyConnection, schema_version: str, inputs: str | None = None) -> None:
    """Record the fingerprint (`inputs`, else the current one) of a queue in step with its items, inside the
    transaction that built it or found it in step: the same rows later mean the same queue."""
    row = {
        "schema_version": schema_version,
        "fingerprint": inputs or queue_inputs(con, schema_version),
        "checked_at": now(),
    }
    merge_rows(con, "review_queue_inputs", [row], update=("fingerprint", "checked_at"))


@dataclass(frozen=True)
class Extension:
    """A queue that only new items left behind (`extensions_of`): the groups they joined, as `version<US>group id`
    (`_GROUP_OF_VERSION_SQL`), their tenants and item types, as `version<US>tenant<US>type`, and its fingerprint
    without its queued part."""

    groups: list[str]
    kinds: list[str]
    inputs: list[str]


def extensions_of(
    con: duckdb.DuckDBPyConnection, behind: Mapping[str, tuple[QueueInputs, str]]
) -> dict[str, Extension | None]:
    """For each version whose queue was in step (`behind`: version -> the fingerprint `remembered` then, and the one
    `current` now), whether the queue is brought in step again by deriving the rows of the groups its items written
    since then joined, where the fingerprint proves that nothing else moved (inside the caller's transaction, which
    computed `current`): those groups, else None (`extend_review_queues` writes them). What every version added is
    read in one statement: its plan is paid once a pass, not once a version.

    The proof: each part of the fingerprint is a count and an XOR of row hashes, so the rows added to a part change
    it by their own count and XOR. Where the recorded parts of the version's items, their evidence and their
    documents, combined with the parts of the items written since (`_ADDED_INPUTS`), give the current ones, and the
    other parts (role, rivals, the queue itself) are unchanged, the version's rows are those the queue was derived
    from plus the added items, their evidence and documents: no earlier row changed or went (one would leave its
    old hash in the XOR). An earlier item's queue row then depends on no added row unless the item shares a group
    with one (a group's size and rank are its members'; disagreements read only the rivals' rows): the rows of the
    groups the added items are in are derived again, every member of those groups with them, by the same query as
    a rebuild (`queue_select`); every other row stays, as a rebuild would derive it."""
    found: dict[str, Extension | None] = dict.fromkeys(behind)
    asked = {
        version: (remembered, current)
        for version, (remembered, current) in behind.items()
        if remembered.fingerprint.split(":")[0] == current.split(":")[0]
        and remembered.fingerprint.count(":") == current.count(":")
    }
    if not asked:
        return found
    rows = con.execute(
        _ADDED_INPUTS, {"versions": list(asked), "since": [remembered.checked_at for remembered, _ in asked.values()]}
    ).fetchall()
    for version, *added_parts, groups, kinds in rows:
        remembered, current = asked[version]
        code, *recorded = remembered.fingerprint.split(":")
        _, *parts = current.split(":")
        grown = [_combined(before, new) for before, new in zip(recorded, added_parts, strict=False)]
        if groups and grown + recorded[len(grown) :] == parts:  # no group: no item added
            found[version] = Extension(groups, kinds, [code, *parts[:-1]])
    return found


def extend_review_queues(con: duckdb.DuckDBPyConnection, extensions: Mapping[str, Extension]) -> None:
    """Extend each version's queue by the rows of the groups its new items joined (`extensions_of`, which proved that
    nothing else moved), and record each one's fingerprint (inside the caller's transaction). Every version's in one
    statement each: deriving queue rows costs a plan of ~10 ms whatever its scope, and one version's rows read no
    other version's queue."""
    if not extensions:
        return
    groups = [group for extension in extensions.values() for group in extension.groups]
    con.execute(
        "DELETE FROM review_queue WHERE concat_ws(chr(31), schema_version, group_id) IN (SELECT unnest(?))", [groups]
    )
    # a group lies inside one version, tenant and item type: those narrow the items whose group id is computed
    scope = f"{_KIND_SQL} IN (SELECT unnest(?)) AND {_GROUP_OF_VERSION_SQL} IN (SELECT unnest(?))"
    kinds = sorted({kind for extension in extensions.values() for kind in extension.kinds})
    con.execute(_queue_rows(scope), [kinds, groups, now()])
    queued = dict(con.execute(_QUEUED_PARTS, {"versions": list(extensions)}).fetchall())
    stamp = now()
    merge_rows(
        con,
        "review_queue_inputs",
        [
            {"schema_version": version, "fingerprint": ":".join([*e.inputs, queued[version]]), "checked_at": stamp}
            for version, e in extensions.items()
        ],
        update=("fingerprint", "checked_at"),
    )


def _combined(part: str, added: str) -> str:
    """A fingerprint part (`count/xor`) with the rows of another part added to it."""
    count, xor = part.split("/")
    more, more_xor = added.split("/")
    return f"{int(count) + int(more)}/{int(xor) ^ int(more_xor)}"


@retry_conflicts
def rebuild_review_queue(con: duckdb.DuckDBPyConnection, schema_version: str) -> int:
    """The queue of a partition is derived from its items: needs_review items, with reasons, context and groups."""
    with transaction(con):
        con.execute("DELETE FROM review_queue WHERE schema_version = ?", [schema_version])
        con.execute(_queue_rows("i.schema_version = ?"), [schema_version, now()])
        remember_queue_inputs(con, schema_version)
    return int(
        con.execute("SELECT count(*) FROM review_queue WHERE schema_version = ?", [schema_version]).fetchone()[0]  # type: ignore[index]
    )


def requeue_items(con: duckdb.DuckDBPyConnection, item_ids: Sequence[str]) -> None:
    """Keep the queue in step with a change to these items (inside the caller's transaction): each is queued while
    it needs review, and the groups they left or joined are ranked again (their size and expected errors moved)."""
    ids = list(item_ids)
    if not ids:
        return
    groups = [
        row[0]
        for row in con.execute(
            f"""SELECT group_id FROM review_queue WHERE item_id IN (SELECT unnest($1))
                UNION SELECT {group_id_sql()} FROM extracted_items i WHERE i.item_id IN (SELECT unnest($1))""",
            [ids],
        ).fetchall()
    ]
    kinds = con.execute(
        "SELECT DISTINCT tenant_id, schema_version, item_type FROM extracted_items WHERE item_id IN (SELECT unnest(?))",
        [ids],
    ).fetchall()
    con.execute(
        "DELETE FROM review_queue WHERE item_id IN (SELECT unnest(?)) OR group_id IN (SELECT unnest(?))", [ids, groups]
    )
    for tenant_id, schema_version, item_type in kinds:  # a group lies inside one tenant, version and type
        scope = (
            f"i.tenant_id = ? AND i.schema_version = ? AND i.item_type = ? AND {group_id_sql()} IN (SELECT unnest(?))"
        )
        con.execute(_queue_rows(scope), [tenant_id, schema_version, item_type, groups, now()])


def group_members(
    con: duckdb.DuckDBPyConnection, tenant_id: str, group_id: str, undecided_only: bool = True
) -> list[str]:
    """The ids of a group's items (its undecided ones by default), most likely wrong first. A group lies inside one
    schema version and item type: those of its queued rows narrow the search (a group with none queued: every
    item of the tenant is looked at)."""
    status = "AND i.status IN ('draft', 'needs_review')" if undecided_only else ""
    kind = con.execute(
        "SELECT schema_version, item_type FROM review_queue WHERE tenant_id = ? AND group_id = ? LIMIT 1",
        [tenant_id, group_id],
    ).fetchone()
    narrow = "AND i.schema_version = ? AND i.item_type = ?" if kind else ""
    return [
        row[0]
        for row in con.execute(
            f"""SELECT i.item_id FROM extracted_items i
                WHERE i.tenant_id = ? {narrow} AND {group_id_sql()} = ? {status}
                ORDER BY {probability_sql()}, i.item_id""",
            [tenant_id, *(kind or ()), group_id],
        ).fetchall()
    ]
