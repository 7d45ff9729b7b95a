"""The audit log: people's changes, append-only and chained by hash so a changed or missing row shows.

Each row's `row_hash` covers its content and the previous row's hash (`prev_hash`), in `seq` order; with
`EXTRACTION_AUDIT_KEY` set it is an HMAC under that key, which never sits in the warehouse, so a chain
rewritten or a row forged by someone who can edit the warehouse does not verify (set the key before the
first correction: a row written without it does not verify under it). `append_entry` is the only
write to `audit_log`; nothing updates or deletes it. `check_chain` recomputes the chain and compares it with
the last head recorded in `audit_log_heads` and with a head kept outside the warehouse (a file beside it),
so a log that shrank or was rewritten, heads included, is caught; and it compares every item a person owns
with its last audit row, so an item edited directly in the table shows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from extraction_assets.lib.models import stable_id
from extraction_assets.lib.private_files import write_private
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

GENESIS_HASH = "0" * 64
OUTSIDE_HEAD_SUFFIX = ".audit-head.json"  # the head kept beside the warehouse
AUDIT_KEY_ENV = "EXTRACTION_AUDIT_KEY"


def audit_key(env: dict[str, str] | None = None) -> bytes | None:
    """The chain's HMAC key from the environment (never stored in the warehouse); None: plain SHA-256."""
    value = (os.environ if env is None else env).get(AUDIT_KEY_ENV, "").strip()
    return value.encode("utf-8") if value else None


_COLUMNS = (
    "audit_id, item_id, tenant_id, actor, action, before_snapshot, after_snapshot, note, occurred_at, "
    "seq, prev_hash, row_hash, decision_id, group_id"
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
    decision_id: str | None = None  # one decision on several items: the same id in each item's row
    group_id: str | None = None  # the queue group that decision settled, when it was one

    def computed_hash(self, key: bytes | None = None) -> str:
        """The hash this row must carry: its content chained to the previous row's hash (an HMAC under `key`)."""
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
        if self.decision_id or self.group_id:  # rows written before decisions had ids hash as they always did
            content.append({"decision_id": self.decision_id, "group_id": self.group_id})
        payload = json.dumps(content, ensure_ascii=False, sort_keys=True, default=str)
        message = f"{self.prev_hash}\x1f{payload}".encode()
        if key:
            return hmac.new(key, message, hashlib.sha256).hexdigest()
        return hashlib.sha256(message).hexdigest()

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
    decision_id: str | None = None,
    group_id: str | None = None,
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
        decision_id=decision_id,
        group_id=group_id,
    )
    entry.row_hash = entry.computed_hash(audit_key())
    con.execute(
        f"INSERT INTO audit_log ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
            entry.decision_id,
            entry.group_id,
        ],
    )
    return entry


def advance_outside_head(con: duckdb.DuckDBPyConnection, entry: AuditEntry) -> None:
    """Once the transaction that appended `entry` has committed: move the head kept outside the warehouse to it, so
    deleting the newest rows (and restoring the item from its before-snapshot) shows at the next check, whether or
    not a check ran in between. Only where the warehouse is a DuckDB file (a lake's head moves with its checks)."""
    where = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database() AND type = 'duckdb'"
    ).fetchone()
    if not where or not where[0]:
        return
    path = Path(where[0]).with_name(Path(where[0]).name + OUTSIDE_HEAD_SUFFIX)
    kept = read_outside_head(path)
    if kept is None or kept.row_count < (entry.seq or 0):
        _write_head(path, ChainHead(row_count=entry.seq or 0, head_hash=entry.row_hash))


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


def check_chain(con: duckdb.DuckDBPyConnection, outside_head: ChainHead | None = None) -> ChainReport:
    """Recompute every row's hash and link, prove the chain still extends the last recorded heads (the
    warehouse's and `outside_head`, kept outside it), and compare every human-owned item with its last row."""
    key = audit_key()
    entries = [_entry(r) for r in rows_as_dicts(con, f"SELECT {_COLUMNS} FROM audit_log ORDER BY seq NULLS FIRST")]
    problems: list[str] = []
    expected_prev = GENESIS_HASH
    for position, entry in enumerate(entries, start=1):
        if entry.seq != position:
            problems.append(f"row {entry.audit_id}: position {entry.seq} where {position} was expected (row missing?)")
        if entry.prev_hash != expected_prev:
            problems.append(f"row {entry.audit_id} (seq {entry.seq}): does not link to the row before it")
        if not hmac.compare_digest(entry.row_hash or "", entry.computed_hash(key)):
            problems.append(f"row {entry.audit_id} (seq {entry.seq}): content changed since it was written")
        expected_prev = entry.row_hash or ""
    head = ChainHead(row_count=len(entries), head_hash=entries[-1].row_hash if entries else None)
    previous = last_head(con)
    for where, recorded in (("the last check", previous), ("the head kept outside the warehouse", outside_head)):
        if recorded is None:
            continue
        if head.row_count < recorded.row_count:
            problems.append(f"the log shrank from {recorded.row_count} to {head.row_count} rows ({where})")
        elif recorded.row_count and entries[recorded.row_count - 1].row_hash != recorded.head_hash:
            problems.append(f"row {recorded.row_count} no longer carries the head hash recorded by {where}")
    problems += _items_changed_without_audit(con)
    return ChainReport(head=head, previous=previous, problems=problems)


def _items_changed_without_audit(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Items a person owns whose status or value differ from what their last audit row says they became."""
    rows = con.execute(
        """SELECT i.item_id, i.status, i.value, a.after_snapshot FROM extracted_items i
           LEFT JOIN (SELECT item_id, after_snapshot FROM audit_log
                      QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY seq DESC) = 1) a USING (item_id)
           WHERE i.extracted_by = 'human' OR i.status IN ('accepted', 'rejected')"""
    ).fetchall()
    problems = []
    for item_id, status, value, after in rows:
        if after is None:
            problems.append(f"item {item_id}: owned by a person but no audit row says so (edited directly?)")
            continue
        last = json.loads(after)
        if last.get("status", status) != status or json.loads(value) != last.get("value", json.loads(value)):
            problems.append(f"item {item_id}: differs from its last audit row (edited directly?)")
    return problems


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


def read_outside_head(path: Path) -> ChainHead | None:
    """The head the last intact check kept outside the warehouse (None: no check has kept one yet)."""
    try:
        return ChainHead.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def keep_outside_head(path: Path, report: ChainReport) -> bool:
    """Keep an intact chain's head outside the warehouse too (atomically replaced), for the next check."""
    if not report.intact or read_outside_head(path) == report.head:
        return False
    _write_head(path, report.head)
    return True


def _write_head(path: Path, head: ChainHead) -> None:
    write_private(path, head.model_dump_json())
