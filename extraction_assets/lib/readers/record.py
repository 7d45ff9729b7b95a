"""What every format reader shares: the context that stamps Documents, the rejection that becomes a
ReadFailure, and strict decoding of bytes into text.

Readers never raise for a bad file: they raise `Rejected` with a specific reason, and the inbox turns it
into a ReadFailure so the file lands in dead letters instead of stopping the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from extraction_assets.lib.models import Document, DocumentKind, Turn

UTF8_BOM = b"\xef\xbb\xbf"
_ISO_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


# The most text one file may become, whatever its format: a small file can inflate (a compressed PDF stream, one
# shared string referenced by every row of a sheet), and a document this long is no inbox document.
MAX_TEXT_CHARS = 8 * 1024 * 1024
# A row, line, message, answer or turn costs memory beyond its text (the objects that hold it: a list, a dict, a Turn,
# a Document): counted as this many characters, one file may hold MAX_TEXT_CHARS / ROW_CHARS of them. Without a bound,
# an 8 MB CSV of 4 M one-character rows took 6.7 GB to read before its text was found too long.
ROW_CHARS = 32
MAX_ROWS = MAX_TEXT_CHARS // ROW_CHARS


class Unreadable(Exception):
    """What any reader raises for a file it cannot read: the message becomes the file's dead-letter reason."""


class Rejected(Unreadable):
    """A file (or record) is unusable; the message becomes the ReadFailure reason."""


class TooLarge(Unreadable):
    """The whole file is refused, as soon as it is seen to become more than one file may (never one record at a
    time: a reader that skips a bad record goes on, this one stops)."""


@dataclass
class ReadBudget:
    """What one file has become so far, all its records together: reading stops the moment it holds more than
    `MAX_TEXT_CHARS` characters of documents or `MAX_ROWS` rows, so its memory is bounded whatever its shape."""

    chars: int = 0
    rows: int = 0

    def text(self, chars: int) -> None:
        self.chars += chars
        if self.chars > MAX_TEXT_CHARS:
            raise TooLarge(f"text larger than {MAX_TEXT_CHARS} characters (the most one file may become)")

    def row(self, what: str = "rows", count: int = 1) -> None:
        """One more row, line, message, answer, turn or document, or `count` more (`what`: which, named in the
        refusal)."""
        self.rows += count
        if self.rows > MAX_ROWS:
            raise TooLarge(
                f"more than {MAX_ROWS} rows, lines, messages, answers, turns and documents in all (one file's limit: "
                f"each costs memory beyond its text); reached at its {what}"
            )


@dataclass
class RecordContext:
    """What every reader needs to stamp on its Documents; `budget` is the file's, shared by all its records."""

    tenant_id: str
    source_uri: str
    name_date: date | None = None
    budget: ReadBudget = field(default_factory=ReadBudget)

    def document(
        self,
        kind: DocumentKind,
        text: str,
        *,
        turns: list[Turn] | None = None,
        doc_date: date | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        source_uri: str | None = None,
    ) -> Document:
        self.budget.text(len(text))
        self.budget.row("documents")
        return Document(
            doc_id=Document.make_id(self.tenant_id, kind, text, metadata),
            tenant_id=self.tenant_id,
            source_uri=source_uri or self.source_uri,
            kind=kind,
            text=text,
            turns=turns or [],
            doc_date=doc_date or self.name_date,
            title=title or None,
            metadata=metadata or {},
        )


_UTF16_BOMS = {b"\xff\xfe": "utf-16-le", b"\xfe\xff": "utf-16-be"}


def utf16_as_utf8(data: bytes) -> bytes:
    """Text saved as UTF-16 with a byte-order mark (common from Windows) as UTF-8; other bytes unchanged."""
    encoding = _UTF16_BOMS.get(data[:2])
    if encoding is None or data[:4] == b"\xff\xfe\x00\x00":  # UTF-32 LE starts with the same two bytes
        return data
    try:
        return data[2:].decode(encoding).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise Rejected(
            f"invalid {encoding.upper()} text (byte-order mark found) at byte offset {exc.start + 2}"
        ) from None


def check_not_empty_or_binary(data: bytes) -> None:
    """Reject empty and binary files before decoding, so the reason says what is really wrong."""
    if not data:
        raise Rejected("empty file")
    if not data.strip():
        raise Rejected("empty file (whitespace only)")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise Rejected(f"binary content (NUL byte at offset {nul})")


def decode_utf8(data: bytes, *, base_offset: int = 0) -> str:
    """Strict UTF-8 (BOM tolerated): a clear failure beats silently mis-decoded text."""
    skip = len(UTF8_BOM) if data.startswith(UTF8_BOM) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[skip + exc.start : skip + exc.start + 4].hex(" ")
        raise Rejected(f"invalid UTF-8 at byte offset {base_offset + skip + exc.start} (bytes {bad})") from None
    return normalize_newlines(text)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def opt_str(obj: dict[str, Any], *keys: str) -> str | None:
    """First present, non-blank string (numbers are accepted as strings) among `keys`."""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def parse_iso_date(value: str | None) -> date | None:
    """ISO date or datetime only: guessing day/month order in '03/04' would silently corrupt deadlines."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value).date()
    except ValueError:
        pass
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def date_from_name(name: str) -> date | None:
    """Fallback doc_date from an ISO date in the file name (e.g. `2026-11-24-standup.md`)."""
    match = _ISO_DATE_IN_NAME.search(name)
    return parse_iso_date(match.group(1)) if match else None
