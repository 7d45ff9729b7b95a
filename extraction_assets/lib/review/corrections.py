"""Corrections: what a reviewer may change on an item, and the one audited way to change it.

The command line, the review page and Label Studio imports all come through here. An item is looked
up inside the reviewer's tenant only (another tenant's item is "not found", never visible), the
status transition is validated, the item becomes human-owned (so re-runs keep it), the before and
after snapshots are appended to the audit chain in the same transaction, and evidence is never
touched.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict

from extraction_assets.lib.models import ItemStatus, stable_id
from extraction_assets.lib.review.audit import AuditEntry, advance_outside_head, append_entry, item_history
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts, transaction
from extraction_assets.lib.warehouse.review_queue import requeue_items

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location; schemas (YAML) when read
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

Action = Literal["accept", "reject", "correct"]

# `draft` is the machine's verdict "no rule fired"; a person decides, so no one moves an item back to it.
ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    "draft": frozenset({"accepted", "rejected", "needs_review"}),
    "needs_review": frozenset({"accepted", "rejected"}),
    "accepted": frozenset({"rejected", "needs_review"}),
    "rejected": frozenset({"accepted", "needs_review"}),
}
MIN_ID_PREFIX = 6
_EDITABLE = ("value", "normalized_value", "status")
WRITE_LOCK = threading.Lock()  # one chain: appends from threads of one process (the review page) take turns


class ReviewError(ValueError):
    """A review operation that cannot be done; the message says why."""


class ItemNotFound(ReviewError):
    """No such item in this tenant (an item of another tenant is reported the same way)."""


class InvalidCorrection(ReviewError):
    """A change the rules do not allow: a bad transition, a value that breaks its type, no actor."""


class NothingToChange(InvalidCorrection):
    """The item already is what the change asks for; nothing is written or audited."""


class Change(BaseModel):
    """What a reviewer asks for; a field not given is left as it is (`model_fields_set` tells which)."""

    model_config = ConfigDict(extra="forbid")

    value: Any = None
    normalized_value: Any = None
    status: ItemStatus | None = None
    replace: bool = False  # the value given is the whole value; by default it changes the fields it names only


class CorrectionResult(BaseModel):
    item_id: str
    action: str  # an Action, or `add` (an item a person added: `missed.py`)
    before: dict[str, Any]
    after: dict[str, Any]
    audit: AuditEntry


def snapshot(row: Mapping[str, Any]) -> dict[str, Any]:
    """An item row as plain JSON values (JSON columns parsed, timestamps as ISO text)."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key in ("value", "normalized_value", "review_reasons") and isinstance(value, str):
            out[key] = json.loads(value)
        elif hasattr(value, "isoformat"):
            out[key] = value.isoformat()
        else:
            out[key] = value
    return out


def provenance(item: Mapping[str, Any]) -> str:
    """Who the item's value comes from, as the page and the command line say it: a person's value has no machine
    confidence to show."""
    if item.get("extracted_by") == "human":
        return f"set by {item.get('updated_by') or 'a person'}"
    said = f"extracted by {item.get('extracted_by')}, confidence {float(item.get('confidence') or 0):.2f}"
    probability = item.get("probability_correct")
    return said if probability is None else f"{said}, probability right {float(probability):.2f}"


def resolve_item_id(con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str) -> str:
    """The full id of an item of this tenant from its id or a unique prefix of at least six characters."""
    ref = ref.strip().lower()
    if len(ref) < MIN_ID_PREFIX:
        raise ItemNotFound(f"item {ref!r} not found in tenant {tenant_id!r} (give at least {MIN_ID_PREFIX} characters)")
    ids = [
        r[0]
        for r in con.execute(
            "SELECT item_id FROM extracted_items WHERE tenant_id = ? AND starts_with(item_id, ?) ORDER BY 1 LIMIT 5",
            [tenant_id, ref],
        ).fetchall()
    ]
    if ref in ids:
        return ref
    if not ids:
        raise ItemNotFound(f"item {ref!r} not found in tenant {tenant_id!r}")
    if len(ids) > 1:
        raise ItemNotFound(f"item prefix {ref!r} is ambiguous in tenant {tenant_id!r}: {', '.join(ids)}")
    return ids[0]


def load_item(con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str) -> dict[str, Any]:
    item_id = resolve_item_id(con, tenant_id, ref)
    rows = rows_as_dicts(con, "SELECT * FROM extracted_items WHERE tenant_id = ? AND item_id = ?", [tenant_id, item_id])
    return snapshot(rows[0])


def check_transition(current: str, new: str) -> None:
    if new not in ALLOWED_TRANSITIONS.get(current, frozenset()):
        allowed = ", ".join(sorted(ALLOWED_TRANSITIONS.get(current, ()))) or "nothing"
        raise InvalidCorrection(f"status {current} cannot become {new} (allowed from {current}: {allowed})")


def _new_value(item: dict[str, Any], given: Any, replace: bool = False) -> dict[str, Any]:
    """Values are objects; a single-value field (`{"value": ...}`) also takes the bare value. An object changes the
    fields it names and keeps the others (`replace`: it is the whole new value)."""
    if isinstance(given, dict):
        return dict(given) if replace else {**item["value"], **given}
    if set(item["value"]) == {"value"}:
        return {"value": given}
    raise InvalidCorrection(f"value must be a JSON object such as {json.dumps(item['value'], ensure_ascii=False)}")


def _type_problems(item: dict[str, Any], value: dict[str, Any], schemas: Mapping[str, SchemaVersion]) -> list[str]:
    from extraction_assets.lib.extraction.review_rules import type_violations  # a change loads the extraction stack

    schema = schemas.get(item["schema_version"])
    spec = schema.field(item["item_type"]) if schema else None
    return type_violations(spec, value) if spec else []


MAX_NOTE_CHARS = 2000  # a reason for the audit trail: stored for good, read by every audit check
# A person's value (or normalized value), as JSON: stored for good in the audit log and read by every check. Ten times
# a model's longest string value (`answer_bounds.MAX_STRING_CHARS`): a name, a date, a clause, a short list.
MAX_VALUE_CHARS = 10_000


def bounded_note(note: str | None) -> str | None:
    """A note the audit log may keep, or why not."""
    if note is not None and len(note) > MAX_NOTE_CHARS:
        raise InvalidCorrection(f"the note is {len(note)} characters long; at most {MAX_NOTE_CHARS} are kept")
    return note


def bounded_value(name: str, value: Any) -> Any:
    """A value the audit log may keep (its JSON at most MAX_VALUE_CHARS characters), or why not."""
    size = len(json.dumps(value, ensure_ascii=False, default=str))
    if size > MAX_VALUE_CHARS:
        raise InvalidCorrection(f"the {name} is {size} characters of JSON; at most {MAX_VALUE_CHARS} are kept")
    return value


def item_version(item: Mapping[str, Any]) -> str:
    """The version of an item a person looks at: it changes with every write to the item (a person's or a re-run's),
    so a change made against an older one is refused instead of silently undoing what came in between."""
    return stable_id(
        item.get("updated_at"),
        item.get("status"),
        json.dumps(item.get("value"), ensure_ascii=False, sort_keys=True),
        json.dumps(item.get("normalized_value"), ensure_ascii=False, sort_keys=True),
        item.get("updated_by"),
        length=12,
    )


class StaleVersion(ReviewError):
    """An item changed since the person made their change against it; nothing was written."""

    def __init__(self, message: str, current: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.current = current  # the items as they are now, to show


class Decision(BaseModel):
    """One decision on one or several items: each changed item's result (and audit row), the items already as asked."""

    decision_id: str | None
    group_id: str | None  # the queue group decided, when every item was of one
    results: list[CorrectionResult]
    unchanged: list[str]


def _after(before: dict[str, Any], change: Change, asked: set[str], actor: str) -> dict[str, Any]:
    """The item as the change leaves it, its transition checked."""
    after = dict(before)
    if "value" in asked:
        after["value"] = _new_value(before, change.value, change.replace)
    if "normalized_value" in asked:
        after["normalized_value"] = change.normalized_value
    corrected = after["value"] != before["value"] or after["normalized_value"] != before["normalized_value"]
    # a person's value is a decided one: a correction without a status leaves the item accepted
    status = change.status if "status" in asked else ("accepted" if corrected else before["status"])
    if status != before["status"]:
        check_transition(before["status"], str(status))
        after["status"] = status
    if corrected:  # what the machine said of its own value no longer describes the item
        after.update(review_reasons=[], reasoning_summary=f"value set by {actor}")
    return after


def apply_changes(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    refs: Sequence[str],
    change: Change,
    actor: str,
    action: Action,
    note: str | None = None,
    schemas: Mapping[str, SchemaVersion] | None = None,
    versions: Mapping[str, str] | None = None,
    groups: Mapping[str, str] | None = None,
) -> Decision:
    """Validate and apply one change to every item named, make them human-owned and audit each, in one transaction.

    All or nothing: an item of another tenant, a refused transition, a value that breaks its type, or an item whose
    version is not the one in `versions` (item id -> the version the person saw) refuses the whole decision. Items
    that already are what the change asks for are left alone and listed; a decision that would change none is
    refused (`NothingToChange`). Several items (or items of a queue group: `groups`, item id -> group id) make one
    decision: every audit row it writes carries its `decision_id`, and the member's group. `schemas` (by partition
    key) lets a value be checked against its field's type and enum.
    """
    actor = actor.strip()
    if not actor:
        raise InvalidCorrection("who made the change is required (--by)")
    note = bounded_note(note)
    for name in ("value", "normalized_value"):
        bounded_value(name.replace("_", " "), getattr(change, name))
    asked = change.model_fields_set & set(_EDITABLE)
    if not asked:
        raise InvalidCorrection("nothing to change: give a value, a normalized value or a status")
    if not refs:
        raise InvalidCorrection("no item to decide: name at least one")
    entries: list[AuditEntry] = []
    with WRITE_LOCK, transaction(con):
        items = {item["item_id"]: item for item in (load_item(con, tenant_id, ref) for ref in refs)}
        stale = [
            item
            for item_id, item in items.items()
            if versions and item_id in versions and versions[item_id] != item_version(item)
        ]
        if stale:
            who = ", ".join(
                f"{i['item_id'][:12]} (now {i['status']}, by {i['updated_by'] or 'the extractor'})" for i in stale
            )
            raise StaleVersion(f"changed since you opened it: {who}; nothing was saved, look again and decide", stale)
        changes: list[tuple[dict[str, Any], dict[str, Any]]] = []
        unchanged: list[str] = []
        for before in items.values():
            after = _after(before, change, asked, actor)
            if "value" in asked or after["status"] == "accepted":  # an accepted value must fit its type and enum
                problems = _type_problems(before, after["value"], schemas or {})
                if problems:
                    raise InvalidCorrection(
                        f"item {before['item_id']}: the value breaks its field's type (correct it first): "
                        + "; ".join(problems)
                    )
            if all(after[k] == before[k] for k in _EDITABLE):
                unchanged.append(before["item_id"])
            else:
                changes.append((before, after))
        if not changes:
            first = next(iter(items.values()))
            what = f"item {first['item_id']} already is" if len(items) == 1 else f"all {len(items)} items already are"
            raise NothingToChange(f"{what} {first['status']} with that value")
        stamp = now()
        groups = groups or {}
        decision_id = (
            stable_id("decision", tenant_id, actor, stamp.isoformat(), *sorted(items))
            if len(items) > 1 or groups
            else None
        )
        for before, after in changes:
            after.update(extracted_by="human", updated_by=actor, updated_at=stamp.isoformat())
            con.execute(
                """UPDATE extracted_items SET value = ?, normalized_value = ?, status = ?, extracted_by = 'human',
                     review_reasons = ?, reasoning_summary = ?, updated_by = ?, updated_at = ?
                   WHERE tenant_id = ? AND item_id = ?""",
                [
                    json.dumps(after["value"], ensure_ascii=False, sort_keys=True),
                    None
                    if after["normalized_value"] is None
                    else json.dumps(after["normalized_value"], ensure_ascii=False),
                    after["status"],
                    json.dumps(after["review_reasons"], ensure_ascii=False),
                    after["reasoning_summary"],
                    actor,
                    stamp,
                    tenant_id,
                    before["item_id"],
                ],
            )
        requeue_items(con, [before["item_id"] for before, _ in changes])
        for before, after in changes:
            entries.append(
                append_entry(
                    con,
                    item_id=before["item_id"],
                    tenant_id=tenant_id,
                    actor=actor,
                    action=action,
                    before=before,
                    after=after,
                    note=note,
                    decision_id=decision_id,
                    group_id=groups.get(before["item_id"]),
                )
            )
    advance_outside_head(con, entries[-1])
    results = [
        CorrectionResult(item_id=before["item_id"], action=action, before=before, after=after, audit=entry)
        for (before, after), entry in zip(changes, entries, strict=True)
    ]
    decided = {groups.get(item_id) for item_id in items}
    group_id = decided.pop() if len(decided) == 1 else None
    return Decision(decision_id=decision_id, group_id=group_id, results=results, unchanged=unchanged)


def apply_change(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    ref: str,
    change: Change,
    actor: str,
    action: Action,
    note: str | None = None,
    schemas: Mapping[str, SchemaVersion] | None = None,
    expected_version: str | None = None,
) -> CorrectionResult:
    """One change to one item (`apply_changes` with one item): refused with `StaleVersion` when `expected_version`
    is given and the item moved on since."""
    versions = None
    if expected_version is not None:
        versions = {resolve_item_id(con, tenant_id, ref): expected_version}
    return apply_changes(con, tenant_id, [ref], change, actor, action, note, schemas, versions).results[0]


def accept(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    ref: str,
    actor: str,
    note: str | None = None,
    schemas: Mapping[str, SchemaVersion] | None = None,
) -> CorrectionResult:
    return apply_change(con, tenant_id, ref, Change(status="accepted"), actor, "accept", note, schemas)


def reject(
    con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str, actor: str, note: str | None = None
) -> CorrectionResult:
    return apply_change(con, tenant_id, ref, Change(status="rejected"), actor, "reject", note)


def history(con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str) -> list[AuditEntry]:
    """The item's audit trail; an item of another tenant is not found."""
    return item_history(con, tenant_id, resolve_item_id(con, tenant_id, ref))
