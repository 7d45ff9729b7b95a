"""The audit log: people's changes, append-only and chained by hash so a changed or missing row shows.

Each row's `row_hash` covers its content and the previous row's hash (`prev_hash`), in `seq` order.
`append_entry` is the only write to `audit_log`; nothing updates or deletes it. `check_chain`
recomputes the chain and compares it with the last head recorded in `audit_log_heads`, so a log that
shrank or was rewritten (even with freshly recomputed hashes) is caught.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

import duckdb
from pydantic import BaseModel, Field

from extraction_assets.lib.models import stable_id
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts

GENESIS_HASH = "0" * 64
_COLUMNS = (
    "audit_id, item_id, tenant_id, actor, action, before_snapshot, after_snapshot, note, occurred_at, "
    "seq, prev_hash, row_hash"
)


class AuditEntry(BaseModel):
    """One person's change to one item: who, what, when, and the item before and after."""

    audit_id: str
    item_id: str
    tenant_id: str
    actor: str
    action: str
    before_snapshot: dict[str, Any]
    after_snapshot: dict[str, Any]
    note: str | None
    occurred_at: datetime
    seq: int | None
    prev_hash: str | None
    row_hash: str | None

    def computed_hash(self) -> str:
        """The hash this row must carry: its content chained to the previous row's hash."""
        content = [
            self.seq,
            self.audit_id,
            self.item_id,
            self.tenant_id,
            self.actor,
            self.action,
            self.before_snapshot,
            self.after_snapshot,
            self.note,
            self.occurred_at.isoformat(),
        ]
        payload = json.dumps(content, ensure_ascii=False, sort_keys=True, default=str)
        return hashlib.sha256(f"{self.prev_hash}\x1f{payload}".encode()).hexdigest()

    def changes(self) -> dict[str, tuple[Any, Any]]:
        """What the entry changed, field by field, as (before, after); the bookkeeping stamps left out."""
        keys = sorted((set(self.before_snapshot) | set(self.after_snapshot)) - {"updated_at", "updated_by"})
        return {
            key: (self.before_snapshot.get(key), self.after_snapshot.get(key))
            for key in keys
            if self.before_snapshot.get(key) != self.after_snapshot.get(key)
        }


class ChainHead(BaseModel):
    """How long the chain was and what its last hash was when a check last passed."""

    row_count: int
    head_hash: str | None


class ChainReport(BaseModel):
    head: ChainHead
    previous: ChainHead | None
    problems: list[str] = Field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not self.problems


def _entry(row: dict[str, Any]) -> AuditEntry:
    return AuditEntry.model_validate(
        {
            **row,
            "before_snapshot": json.loads(row["before_snapshot"]),
            "after_snapshot": json.loads(row["after_snapshot"]),
        }
    )


def _dump(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def append_entry(
    con: duckdb.DuckDBPyConnection,
    *,
    item_id: str,
    tenant_id: str,
    actor: str,
    action: str,
    before: dict[str, Any],
    after: dict[str, Any],
    note: str | None,
) -> AuditEntry:
    """Append one entry at the end of the chain; the caller holds the transaction that changed the item."""
    last = con.execute("SELECT seq, row_hash FROM audit_log ORDER BY seq DESC NULLS LAST LIMIT 1").fetchone()
    seq = int(last[0]) + 1 if last else 1
    prev_hash = str(last[1]) if last else GENESIS_HASH
    entry = AuditEntry(
        audit_id=stable_id(tenant_id, item_id, seq, prev_hash),
        item_id=item_id,
        tenant_id=tenant_id,
        actor=actor,
        action=action,
        before_snapshot=json.loads(_dump(before)),
        after_snapshot=json.loads(_dump(after)),
        note=note,
        occurred_at=now(),
        seq=seq,
        prev_hash=prev_hash,
        row_hash=None,
    )
    entry.row_hash = entry.computed_hash()
    con.execute(
        f"INSERT INTO audit_log ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            entry.audit_id,
            entry.item_id,
            entry.tenant_id,
            entry.actor,
            entry.action,
            _dump(entry.before_snapshot),
            _dump(entry.after_snapshot),
            entry.note,
            entry.occurred_at,
            entry.seq,
            entry.prev_hash,
            entry.row_hash,
        ],
    )
    return entry


def item_history(con: duckdb.DuckDBPyConnection, tenant_id: str, item_id: str) -> list[AuditEntry]:
    """Every change to one item of one tenant, oldest first."""
    rows = rows_as_dicts(
        con,
        f"SELECT {_COLUMNS} FROM audit_log WHERE tenant_id = ? AND item_id = ? ORDER BY seq",
        [tenant_id, item_id],
    )
    return [_entry(r) for r in rows]


def last_head(con: duckdb.DuckDBPyConnection) -> ChainHead | None:
    row = con.execute(
        "SELECT row_count, head_hash FROM audit_log_heads ORDER BY row_count DESC, checked_at DESC LIMIT 1"
    ).fetchone()
    return ChainHead(row_count=int(row[0]), head_hash=row[1]) if row else None


def check_chain(con: duckdb.DuckDBPyConnection) -> ChainReport:
    """Recompute every row's hash and link, then prove the chain still extends the last recorded head."""
    entries = [_entry(r) for r in rows_as_dicts(con, f"SELECT {_COLUMNS} FROM audit_log ORDER BY seq NULLS FIRST")]
    problems: list[str] = []
    expected_prev = GENESIS_HASH
    for position, entry in enumerate(entries, start=1):
        if entry.seq != position:
            problems.append(f"row {entry.audit_id}: position {entry.seq} where {position} was expected (row missing?)")
        if entry.prev_hash != expected_prev:
            problems.append(f"row {entry.audit_id} (seq {entry.seq}): does not link to the row before it")
        if entry.row_hash != entry.computed_hash():
            problems.append(f"row {entry.audit_id} (seq {entry.seq}): content changed since it was written")
        expected_prev = entry.row_hash or ""
    head = ChainHead(row_count=len(entries), head_hash=entries[-1].row_hash if entries else None)
    previous = last_head(con)
    if previous is not None:
        if head.row_count < previous.row_count:
            problems.append(f"the log shrank from {previous.row_count} to {head.row_count} rows")
        elif previous.row_count and entries[previous.row_count - 1].row_hash != previous.head_hash:
            problems.append(f"row {previous.row_count} no longer carries the head hash recorded by the last check")
    return ChainReport(head=head, previous=previous, problems=problems)


def record_head(con: duckdb.DuckDBPyConnection, report: ChainReport) -> bool:
    """Remember an intact chain's head for the next check; only when it moved, so idle runs write nothing."""
    if not report.intact:
        return False
    previous = report.previous or ChainHead(row_count=0, head_hash=None)
    if report.head == previous:
        return False
    con.execute(
        "INSERT INTO audit_log_heads (checked_at, row_count, head_hash) VALUES (?, ?, ?)",
        [now(), report.head.row_count, report.head.head_hash],
    )
    return True
