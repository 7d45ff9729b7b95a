"""The audit log: people's changes, append-only and chained by hash so a changed or missing row shows.

Each row's `row_hash` covers its content and the previous row's hash (`prev_hash`), in `seq` order; with
`EXTRACTION_AUDIT_KEY` set it is an HMAC under that key, which never sits in the warehouse, so a chain
rewritten or a row forged by someone who can edit the warehouse does not verify (set the key before the
first correction: a row written without it does not verify under it). `append_entry` is the only
write to `audit_log`; nothing updates or deletes it. `check_chain` recomputes the chain and compares it with
the last head recorded in `audit_log_heads` and with the heads kept outside the warehouse, so a log that shrank
or was rewritten, heads included, is caught; and it compares every item a person owns with its last audit row, so
an item edited directly in the table shows.

The heads kept outside are signed (HMAC-SHA256) with `head_key`: `EXTRACTION_AUDIT_KEY` when set, else a random key
made once in the user's config folder (mode 0600). One is the file beside the warehouse, which travels with it; its
absence while the log holds rows fails the check, and so does a file whose signature does not verify. The other is a
copy in the user's config folder, beside the key, out of reach of whoever can only write the warehouse's folder: it
catches an older signed head put back in place of the newest, and a whole log deleted with its head. Whoever can
read the key (the account the product runs as) can sign any head: that is not defended here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs
from pydantic import BaseModel, Field, ValidationError

from extraction_assets.lib.models import stable_id
from extraction_assets.lib.private_files import open_private, write_private
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

GENESIS_HASH = "0" * 64
OUTSIDE_HEAD_SUFFIX = ".audit-head.json"  # the head kept beside the warehouse
AUDIT_KEY_ENV = "EXTRACTION_AUDIT_KEY"
HEAD_KEY_FILE = "audit-head.key"  # in the user's config folder, with the copies of the heads (`audit-heads/`)
BESIDE = "the head file beside the warehouse"
IN_CONFIG = "the copy of the head in the user's config folder"


def audit_key(env: dict[str, str] | None = None) -> bytes | None:
    """The chain's HMAC key from the environment (never stored in the warehouse); None: plain SHA-256."""
    value = (os.environ if env is None else env).get(AUDIT_KEY_ENV, "").strip()
    return value.encode("utf-8") if value else None


def config_folder() -> Path:
    """The user's config folder of the product (`$XDG_CONFIG_HOME/extraction-assets`, `~/.config/...`)."""
    return Path(platformdirs.user_config_dir("extraction-assets", appauthor=False))


def head_key() -> bytes:
    """The key the heads kept outside the warehouse are signed with: `EXTRACTION_AUDIT_KEY`, else the key file in the
    user's config folder, made once (32 random bytes, mode 0600, linked into place so two processes agree on one)."""
    if key := audit_key():
        return key
    path = config_folder() / HEAD_KEY_FILE
    try:
        return path.read_bytes().strip()
    except FileNotFoundError:
        pass
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with os.fdopen(open_private(partial, os.O_WRONLY | os.O_TRUNC), "w", encoding="utf-8") as out:
        out.write(secrets.token_hex(32))
    try:
        os.link(partial, path)  # fails when another process made it first: then that one is the key
    except FileExistsError:
        pass
    finally:
        partial.unlink()
    return path.read_bytes().strip()


_COLUMNS = (
    "audit_id, item_id, tenant_id, actor, action, before_snapshot, after_snapshot, note, occurred_at, "
    "seq, prev_hash, row_hash, decision_id, group_id"
)


class AuditEntry(BaseModel):
    """One person's change to one item: who, what, when, and the item before and after.

    A row stores the item before the change only where it is not what the item's previous row left it (its first
    change, or a change after a forced re-extraction): elsewhere `before_snapshot` is stored as JSON null, so each
    value is stored once. `item_history` fills it in from the previous row; `before_stored` says which it was, and
    the row's hash covers it as stored."""

    audit_id: str
    item_id: str
    tenant_id: str
    actor: str
    action: str
    before_snapshot: dict[str, Any] | None  # None: as the item's previous row left it, not filled in
    after_snapshot: dict[str, Any]
    note: str | None
    occurred_at: datetime
    seq: int | None
    prev_hash: str | None
    row_hash: str | None
    decision_id: str | None = None  # one decision on several items: the same id in each item's row
    group_id: str | None = None  # the queue group that decision settled, when it was one
    before_stored: bool = True

    def computed_hash(self, key: bytes | None = None) -> str:
        """The hash this row must carry: its content chained to the previous row's hash (an HMAC under `key`)."""
        content = [
            self.seq,
            self.audit_id,
            self.item_id,
            self.tenant_id,
            self.actor,
            self.action,
            self.before_snapshot if self.before_stored else None,
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
        before = self.before_snapshot or {}
        keys = sorted((set(before) | set(self.after_snapshot)) - {"updated_at", "updated_by"})
        return {
            key: (before.get(key), self.after_snapshot.get(key))
            for key in keys
            if before.get(key) != self.after_snapshot.get(key)
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
    before = json.loads(row["before_snapshot"])
    return AuditEntry.model_validate(
        {
            **row,
            "before_snapshot": before,
            "after_snapshot": json.loads(row["after_snapshot"]),
            "before_stored": before is not None,
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
    left = con.execute(
        "SELECT after_snapshot FROM audit_log WHERE item_id = ? ORDER BY seq DESC LIMIT 1", [item_id]
    ).fetchone()
    before_snapshot = json.loads(_dump(before))
    stored = left is None or json.loads(left[0]) != before_snapshot  # else: as the item's previous row left it
    entry = AuditEntry(
        audit_id=stable_id(tenant_id, item_id, seq, prev_hash),
        item_id=item_id,
        tenant_id=tenant_id,
        actor=actor,
        action=action,
        before_snapshot=before_snapshot if stored else None,
        after_snapshot=json.loads(_dump(after)),
        note=note,
        occurred_at=now(),
        seq=seq,
        prev_hash=prev_hash,
        row_hash=None,
        decision_id=decision_id,
        group_id=group_id,
        before_stored=stored,
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
            json.dumps(None) if entry.before_snapshot is None else _dump(entry.before_snapshot),
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
    """Once the transaction that appended `entry` has committed: move the heads kept outside the warehouse to it, so
    deleting the newest rows (and restoring the item from its before-snapshot) shows at the next check, whether or
    not a check ran in between. Only where the warehouse is a DuckDB file (a lake's head moves with its checks).

    A head moves only from a head that verifies, or is made by the log's first row: a missing or forged one stays as
    it is, for the check to report (moving it would make an erasure before this append the log's new truth)."""
    where = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database() AND type = 'duckdb'"
    ).fetchone()
    if not where or not where[0]:
        return
    moved = ChainHead(row_count=entry.seq or 0, head_hash=entry.row_hash)
    for kept in read_kept_heads(Path(where[0]).with_name(Path(where[0]).name + OUTSIDE_HEAD_SUFFIX)):
        if kept.problem is None and (
            (kept.head is None and moved.row_count == 1)
            or (kept.head is not None and kept.head.row_count < moved.row_count)
        ):
            _write_head(kept.path, moved)


def item_history(con: duckdb.DuckDBPyConnection, tenant_id: str, item_id: str) -> list[AuditEntry]:
    """Every change to one item of one tenant, oldest first, each with the item before it (filled in from the
    previous row where the row stores none)."""
    rows = rows_as_dicts(
        con,
        f"SELECT {_COLUMNS} FROM audit_log WHERE tenant_id = ? AND item_id = ? ORDER BY seq",
        [tenant_id, item_id],
    )
    entries = [_entry(r) for r in rows]
    for previous, entry in zip([None, *entries], entries, strict=False):
        if entry.before_snapshot is None and previous is not None:
            entry.before_snapshot = previous.after_snapshot
    return entries


def last_head(con: duckdb.DuckDBPyConnection) -> ChainHead | None:
    row = con.execute(
        "SELECT row_count, head_hash FROM audit_log_heads ORDER BY row_count DESC, checked_at DESC LIMIT 1"
    ).fetchone()
    return ChainHead(row_count=int(row[0]), head_hash=row[1]) if row else None


def check_chain(con: duckdb.DuckDBPyConnection, kept: Sequence[KeptHead] = ()) -> ChainReport:
    """Recompute every row's hash and link, prove the chain still extends the last recorded heads (the
    warehouse's and those `kept` outside it, each of which must verify), and compare every human-owned item with
    its last row."""
    hashes, problems = _recompute(con)
    head = ChainHead(row_count=len(hashes), head_hash=hashes[-1] if hashes else None)
    previous = last_head(con)
    recorded: list[tuple[str, ChainHead | None]] = [("the last check", previous)]
    for outside in kept:
        if outside.problem:
            problems.append(f"{outside.where}: {outside.problem}")
        elif outside.head is None and outside.required and head.row_count:
            problems.append(
                f"{outside.where} is missing while the log holds {head.row_count} rows (deleted? a lost file is "
                "accepted with `extraction-assets review audit --accept`)"
            )
        recorded.append((outside.where, outside.head))
    for where, recorded_head in recorded:
        if recorded_head is None:
            continue
        if head.row_count < recorded_head.row_count:
            problems.append(f"the log shrank from {recorded_head.row_count} to {head.row_count} rows ({where})")
        elif recorded_head.row_count and hashes[recorded_head.row_count - 1] != recorded_head.head_hash:
            problems.append(f"row {recorded_head.row_count} no longer carries the head hash recorded by {where}")
    problems += _items_changed_without_audit(con)
    return ChainReport(head=head, previous=previous, problems=problems)


_CHECK_BATCH = 500  # rows parsed at once: the check's memory holds a batch and the hashes, not the whole log


def _recompute(con: duckdb.DuckDBPyConnection) -> tuple[list[str], list[str]]:
    """Every row's hash in order, and every row whose position, link or hash is not what the rows before it make it;
    read a batch at a time."""
    key = audit_key()
    problems: list[str] = []
    hashes: list[str] = []
    expected_prev = GENESIS_HASH
    cursor = con.execute(f"SELECT {_COLUMNS} FROM audit_log ORDER BY seq NULLS FIRST")
    names = [d[0] for d in cursor.description or ()]
    while batch := cursor.fetchmany(_CHECK_BATCH):
        for row in batch:
            entry = _entry(dict(zip(names, row, strict=True)))
            position = len(hashes) + 1
            if entry.seq != position:
                problems.append(
                    f"row {entry.audit_id}: position {entry.seq} where {position} was expected (row missing?)"
                )
            if entry.prev_hash != expected_prev:
                problems.append(f"row {entry.audit_id} (seq {entry.seq}): does not link to the row before it")
            if not hmac.compare_digest(entry.row_hash or "", entry.computed_hash(key)):
                problems.append(f"row {entry.audit_id} (seq {entry.seq}): content changed since it was written")
            expected_prev = entry.row_hash or ""
            hashes.append(expected_prev)
    return hashes, problems


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


class KeptHead(BaseModel):
    """A head kept outside the warehouse as read from one place: `head` None where there is no file, `problem` where
    the file does not verify; `required`: the file beside the warehouse, whose absence fails a non-empty log."""

    where: str
    path: Path
    head: ChainHead | None = None
    problem: str | None = None
    required: bool = False


def read_kept_heads(beside: Path, required: bool = True) -> list[KeptHead]:
    """The head file beside the warehouse and its copy in the user's config folder, each verified. `required`: the
    file must exist once the log holds rows (where every decision moves it: a DuckDB file; a lake's moves with its
    checks only, so there the copy in the config folder is what guards what a check signed)."""
    key = head_key()
    copy = config_folder() / "audit-heads" / f"{hashlib.sha256(str(beside.resolve()).encode()).hexdigest()[:32]}.json"
    return [_read_head(beside, BESIDE, key, required=required), _read_head(copy, IN_CONFIG, key, required=False)]


def _read_head(path: Path, where: str, key: bytes, required: bool) -> KeptHead:
    kept = KeptHead(where=where, path=path, required=required)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        head = ChainHead.model_validate(data)
    except FileNotFoundError:
        return kept
    except (OSError, ValueError, ValidationError) as exc:
        return kept.model_copy(update={"problem": f"unreadable ({type(exc).__name__})"})
    if not hmac.compare_digest(str(data.get("signature", "")), _signature(head, key)):
        return kept.model_copy(
            update={
                "problem": "its signature does not verify (rewritten, signed under another key, or written before "
                "heads were signed: `extraction-assets review audit --accept` signs the log as it stands)"
            }
        )
    return kept.model_copy(update={"head": head})


def _signature(head: ChainHead, key: bytes) -> str:
    return hmac.new(key, f"audit-head\x1f{head.row_count}\x1f{head.head_hash}".encode(), hashlib.sha256).hexdigest()


def keep_outside_head(kept: Sequence[KeptHead], report: ChainReport) -> bool:
    """Keep an intact, non-empty chain's head outside the warehouse too (each place atomically replaced), for the
    next check. An empty log has nothing to protect: no signed head of no rows is ever written."""
    if not report.intact or not report.head.row_count:
        return False
    moved = [outside for outside in kept if outside.head != report.head]
    for outside in moved:
        _write_head(outside.path, report.head)
    return bool(moved)


def _write_head(path: Path, head: ChainHead) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_private(path, json.dumps({**head.model_dump(), "signature": _signature(head, head_key())}))
