"""A live interview session's file: a transcript that grows while the interview runs, and the session's status.

One file per session under `<sessions folder>/<tenant>/`, in either of two layouts:

- `<session_id>.json`, rewritten as the interview goes on:
  `{"status": "in_progress", "schema_version": "interview@v1", "title": ..., "date": ..., "turns": [...]}`;
- `<session_id>.jsonl`, appended to: one object per line, either a turn or an event that sets the session's
  facts (`{"status": "completed"}`, `{"schema_version": "interview@v1", "title": "..."}`).

A turn is `{"id": "t3", "speaker": "受访者", "text": "..."}` as in any transcript. The session's document lays
the turns out as the inbox's transcripts are laid out (`speaker: text`, one line per turn), so a turn appended
never moves the offsets of evidence already stored. A JSONL line still being written (the last one, without its
newline) is left for the next read; any other unreadable line is reported with its number and skipped.

The folder obeys the inbox's rules (`readers/tenant_files.py`): no link leads out of its tenant's folder, and a file
is opened one folder at a time from the root and only if it is the file listed. A session names its schema version
as a partition key (`interview@v1`), never a path.
"""

from __future__ import annotations

import io
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from extraction_assets.lib.models import SESSION_KEY, Document
from extraction_assets.lib.readers.record import ReadBudget, TooLarge
from extraction_assets.lib.readers.tenant_files import HIDDEN_FILE, HIDDEN_FOLDER, Entry, Refused, read_regular, walk

SessionStatus = Literal["in_progress", "completed"]
STATUSES: tuple[SessionStatus, ...] = ("in_progress", "completed")
SESSION_SUFFIXES = (".json", ".jsonl")
DEFAULT_SESSION_SCHEMA = "interview@v1"
MAX_SESSION_BYTES = 8 * 1024 * 1024  # hours of talk are well under 1 MB
_FACTS = ("status", "schema_version", "title", "date")
NO_TENANT = "_no_tenant"  # the tenant of a dead letter about an entry in the folder's root (a folder that is a link)
_PARTITION_KEY = re.compile(r"[a-z0-9_\-]+@[a-z0-9_\-]+")  # as prompt files' names are (`lib/schemas.py`)


class SessionFileError(ValueError):
    """A session file that cannot be read as a session; the message says what was found."""


class SessionFile(BaseModel):
    """What a session file says now."""

    tenant_id: str
    session_id: str
    source_uri: str  # `<tenant>/<file name>` under the sessions folder
    status: SessionStatus = "in_progress"
    schema_version: str = DEFAULT_SESSION_SCHEMA
    title: str | None = None
    date: str | None = None
    turns: list[dict[str, Any]] = Field(default_factory=list)
    size: int = 0
    mtime_ns: int = 0
    problems: list[str] = Field(default_factory=list)  # lines skipped, with their numbers

    @property
    def modified_at(self) -> datetime:
        """When the file was last written (UTC, naive like every warehouse timestamp)."""
        return datetime.fromtimestamp(self.mtime_ns / 1e9, UTC).replace(tzinfo=None)


def session_files(sessions_dir: Path) -> list[Entry]:
    """Every session file `<tenant>/<session_id>.json[l]`, and every entry that looks like one (or like a tenant
    folder) but may not be read, with its problem: a link out of its tenant, a folder that is a link, a FIFO.
    Hidden entries and other files are left out."""
    if not sessions_dir.is_dir():
        return []
    return [entry for entry in walk(sessions_dir, depth=2) if _listed(entry)]


def _listed(entry: Entry) -> bool:
    if entry.problem in (HIDDEN_FILE, HIDDEN_FOLDER):
        return False
    named_as_session, in_tenant = entry.rel.endswith(SESSION_SUFFIXES), "/" in entry.rel
    return named_as_session and in_tenant if entry.problem is None else named_as_session or not in_tenant


def read_session(sessions_dir: Path, entry: Entry) -> SessionFile:
    """Parse one listed session file; raises SessionFileError with the reason.

    It is opened beneath the folder's real path, one folder at a time and no link followed, and only if it is still
    the file listed."""
    if entry.problem is not None or entry.info is None:
        raise SessionFileError(entry.problem or "unreadable file")
    tenant, name = entry.rel.split("/")
    beneath = Path(os.path.realpath(sessions_dir))
    try:
        data = read_regular(Path(entry.path), MAX_SESSION_BYTES, beneath=beneath, walked=entry.info)
    except Refused as exc:
        raise SessionFileError(str(exc)) from None
    except OSError as exc:
        raise SessionFileError(f"unreadable file: {exc.strerror or type(exc).__name__}") from None
    session = SessionFile(
        tenant_id=tenant,
        session_id=Path(name).stem,
        source_uri=entry.rel,
        size=entry.info.st_size,
        mtime_ns=entry.info.st_mtime_ns,
    )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SessionFileError(f"session file is not UTF-8: {exc.reason} at byte {exc.start}") from None
    facts: dict[str, Any] = {}
    if name.endswith(".json"):
        obj = _parse(text, "the file")
        if not isinstance(obj, dict) or not isinstance(obj.get("turns", []), list):
            raise SessionFileError("a .json session is an object with a 'turns' list")
        facts, session.turns = {k: obj[k] for k in _FACTS if k in obj}, list(obj.get("turns", []))
    else:
        budget = ReadBudget()
        for number, line in enumerate(io.StringIO(text), start=1):  # one at a time, counted: bounded whatever the shape
            if not line.strip():
                continue
            try:
                budget.row("lines")
            except TooLarge as exc:
                raise SessionFileError(f"session file of {exc}") from None
            try:
                obj = _parse(line, f"line {number}")
            except SessionFileError as exc:
                if line.endswith("\n"):  # the last line, without its newline, may still be being written
                    session.problems.append(str(exc))
                continue
            if not isinstance(obj, dict):
                session.problems.append(f"line {number} is not an object")
            elif "text" in obj:
                session.turns.append(obj)
            else:
                facts.update({k: obj[k] for k in _FACTS if k in obj})
    return _with_facts(session, facts)


def _parse(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        raise SessionFileError(f"malformed JSON in {where}: {str(exc)[:200]}") from None


def _with_facts(session: SessionFile, facts: dict[str, Any]) -> SessionFile:
    status = facts.get("status", "in_progress")
    if status not in STATUSES:
        raise SessionFileError(f"unknown session status {status!r} (one of {', '.join(STATUSES)})")
    update: dict[str, Any] = {"status": status}
    for key in ("schema_version", "title", "date"):
        if isinstance(facts.get(key), str) and facts[key].strip():
            update[key] = facts[key].strip()
    named = update.get("schema_version", DEFAULT_SESSION_SCHEMA)
    if not _PARTITION_KEY.fullmatch(named):
        raise SessionFileError(f"schema version {named[:200]!r} is not a partition key such as interview@v1")
    return session.model_copy(update=update)


def session_document(session: SessionFile) -> Document:
    """The transcript so far as a Document whose identity is the session (its text grows, its id stays)."""
    from extraction_assets.lib.readers.json_formats import transcript_document  # readers load when first used
    from extraction_assets.lib.readers.record import RecordContext, Rejected

    ctx = RecordContext(tenant_id=session.tenant_id, source_uri=session.source_uri)
    try:
        doc = transcript_document({"turns": session.turns, "title": session.title, "date": session.date}, ctx)
    except (Rejected, TooLarge) as exc:
        raise SessionFileError(str(exc)) from None
    metadata = {**doc.metadata, SESSION_KEY: session.session_id}
    return doc.model_copy(
        update={"doc_id": Document.make_id(doc.tenant_id, doc.kind, doc.text, metadata), "metadata": metadata}
    )
