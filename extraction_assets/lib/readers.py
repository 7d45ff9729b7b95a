"""Turn inbox files into Documents (or ReadFailures) with exact turn offsets.

The inbox has one sub-folder per tenant; everything below it is read. Readers never raise for a bad
file: every problem becomes a ReadFailure with a specific reason so it lands in dead letters instead of
stopping the run. Offsets in `Turn.start`/`Turn.end` are Python `str` indices into `Document.text`, so
`text[turn.start:turn.end]` is exactly the answer / message / turn content, whatever the script.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from email import errors as email_errors
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from pathlib import Path, PurePosixPath
from typing import Any

from bs4 import BeautifulSoup

from extraction_assets.lib.email_body import body_parts, body_turns, is_forward
from extraction_assets.lib.models import Document, DocumentKind, ReadFailure, Turn
from extraction_assets.lib.pasted_chat import pasted_chat_turns
from extraction_assets.lib.read_mbox import read_mbox
from extraction_assets.lib.read_pdf import PdfError, read_pdf
from extraction_assets.lib.read_sheets import SheetError, SheetRecord, csv_records, xlsx_records

__all__ = [
    "MAX_FILE_BYTES",
    "NO_TENANT",
    "SUPPORTED_EXTENSIONS",
    "html_to_text",
    "read_file",
    "read_inbox",
]

# Tenant id recorded on failures for files that sit directly in the inbox root.
NO_TENANT = "_no_tenant"
# Inbox files are notes, pulses and e-mails; anything bigger is almost certainly a mistake (or an attack).
MAX_FILE_BYTES = 20 * 1024 * 1024
INBOX_DOCS = frozenset({"readme.md", "readme.txt"})
SUPPORTED_EXTENSIONS = (".txt", ".md", ".json", ".jsonl", ".eml", ".mbox", ".csv", ".xlsx", ".pdf")

_UTF8_BOM = b"\xef\xbb\xbf"
_ISO_DATE_IN_NAME = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")
_BLANK_RUNS = re.compile(r"\n{3,}")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")

# MIME defects that mean the structure cannot be trusted (parts lost or merged); the rest are cosmetic.
_FATAL_MIME_DEFECTS: dict[type[email_errors.MessageDefect], str] = {
    email_errors.StartBoundaryNotFoundDefect: "multipart boundary never appears",
    email_errors.CloseBoundaryNotFoundDefect: "multipart closing boundary missing",
    email_errors.MultipartInvariantViolationDefect: "multipart message has no parts",
    email_errors.NoBoundaryInMultipartDefect: "multipart declared without a boundary",
}
_EMAIL_HEADERS = ("From", "To", "Subject", "Date")
_HTML_BLOCK_TAGS = [
    "address", "article", "aside", "blockquote", "div", "dl", "figcaption", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "nav", "ol", "p", "pre", "section",
    "table", "tbody", "thead", "tfoot", "ul",
]  # fmt: skip
_HTML_LINE_TAGS = ["dd", "dt", "li", "tr"]  # start a new line, without a blank line between siblings
_HTML_CELL_TAGS = ["td", "th"]


class _Reject(Exception):
    """Internal: a file (or record) is unusable; the message becomes the ReadFailure reason."""


# ----------------------------------------------------------------------------------------------------------
# Inbox walking
# ----------------------------------------------------------------------------------------------------------


def read_inbox(inbox: Path) -> Iterator[Document | ReadFailure]:
    """Yield every Document and ReadFailure under `inbox`, in a deterministic (sorted path) order.

    Tenants are the first-level folders; hidden files and folders are skipped; a README in the root
    documents the inbox and is skipped; other files directly in the root have no tenant and are
    reported rather than guessed.
    """
    inbox = Path(inbox)
    if not inbox.is_dir():
        yield ReadFailure(tenant_id=NO_TENANT, source_uri="", reason=f"inbox folder not found: {inbox.name}")
        return
    for path, rel, problem in _walk(inbox):
        parts = PurePosixPath(rel).parts
        if problem is not None:
            tenant = parts[0] if len(parts) > 1 else NO_TENANT
            yield ReadFailure(tenant_id=tenant, source_uri=rel, reason=problem)
        elif len(parts) < 2 and rel.lower() in INBOX_DOCS:
            continue
        elif len(parts) < 2:
            yield ReadFailure(tenant_id=NO_TENANT, source_uri=rel, reason="file outside a tenant folder")
        else:
            yield from read_file(path, parts[0], rel)


def _walk(root: Path) -> Iterator[tuple[Path, str, str | None]]:
    """(path, POSIX path relative to root, problem or None) for every visible file, sorted by relative path."""
    found: list[tuple[str, Path, str | None]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(folder.iterdir())
        except OSError as exc:
            rel = folder.relative_to(root).as_posix()
            found.append((rel, folder, f"unreadable folder: {_os_reason(exc)}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = entry.relative_to(root).as_posix()
            try:
                if entry.is_dir():
                    if entry.is_symlink():  # not followed: it could loop or leave the tenant folder
                        found.append((rel, entry, "symlinked folder not followed"))
                    else:
                        stack.append(entry)
                elif entry.is_file():
                    found.append((rel, entry, None))
                elif entry.is_symlink():
                    found.append((rel, entry, "broken symlink"))
                else:
                    found.append((rel, entry, "not a regular file"))
            except OSError as exc:
                found.append((rel, entry, f"unreadable file: {_os_reason(exc)}"))
    for rel, path, problem in sorted(found, key=lambda item: item[0]):
        yield path, rel, problem


# ----------------------------------------------------------------------------------------------------------
# Single file dispatch
# ----------------------------------------------------------------------------------------------------------


def read_file(path: Path, tenant_id: str, source_uri: str) -> list[Document | ReadFailure]:
    """Read one file into Documents; every problem is returned as a ReadFailure, never raised."""
    path = Path(path)

    def fail(reason: str) -> list[Document | ReadFailure]:
        return [ReadFailure(tenant_id=tenant_id, source_uri=source_uri, reason=reason)]

    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        return fail(f"unsupported file type {suffix}" if suffix else "unsupported file type (no extension)")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return fail(f"file too large ({size} bytes, limit {MAX_FILE_BYTES})")
        data = path.read_bytes()
    except OSError as exc:
        return fail(f"unreadable file: {_os_reason(exc)}")

    ctx = _Ctx(tenant_id=tenant_id, source_uri=source_uri, name_date=_date_from_name(path.name))
    try:
        if suffix == ".xlsx":  # a zip archive: binary by nature
            return _sheet_documents(xlsx_records(data), ctx)
        if suffix == ".pdf":  # binary by nature too: its text layer becomes a text document
            pdf = read_pdf(data)
            doc = _read_text(pdf.text, ctx, markdown=False)
            return [doc.model_copy(update={"metadata": {"format": "pdf", "pages": pdf.pages}})]
        _check_not_empty_or_binary(data)
        if suffix == ".jsonl":
            return _read_jsonl(data, ctx)
        if suffix == ".eml":
            return [_read_email(data, ctx)]
        if suffix == ".mbox":
            return read_mbox(
                path, tenant_id, source_uri, lambda raw, uri: _read_email(raw, _Ctx(tenant_id, uri, ctx.name_date))
            )
        text = _decode_utf8(data)
        if not text.strip():
            raise _Reject("empty file (whitespace only)")
        if suffix == ".json":
            return [_read_json(text, ctx)]
        if suffix == ".csv":
            return _sheet_documents(csv_records(text), ctx)
        return [_read_text(text, ctx, markdown=suffix == ".md")]
    except (_Reject, SheetError, PdfError) as exc:
        return fail(str(exc))
    except Exception as exc:  # a reader bug must not stop the whole inbox
        return fail(f"reader error: {type(exc).__name__}: {exc}")


@dataclass
class _Ctx:
    """What every reader needs to stamp on its Documents."""

    tenant_id: str
    source_uri: str
    name_date: date | None = None

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
        return Document(
            doc_id=Document.make_id(self.tenant_id, kind, text),
            tenant_id=self.tenant_id,
            source_uri=source_uri or self.source_uri,
            kind=kind,
            text=text,
            turns=turns or [],
            doc_date=doc_date or self.name_date,
            title=title or None,
            metadata=metadata or {},
        )


# ----------------------------------------------------------------------------------------------------------
# Bytes -> text
# ----------------------------------------------------------------------------------------------------------


def _check_not_empty_or_binary(data: bytes) -> None:
    """Reject empty and binary files before decoding, so the reason says what is really wrong."""
    if not data:
        raise _Reject("empty file")
    if not data.strip():
        raise _Reject("empty file (whitespace only)")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise _Reject(f"binary content (NUL byte at offset {nul})")


def _decode_utf8(data: bytes, *, base_offset: int = 0) -> str:
    """Strict UTF-8 (BOM tolerated): a clear failure beats silently mis-decoded text."""
    skip = len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = data[skip + exc.start : skip + exc.start + 4].hex(" ")
        raise _Reject(f"invalid UTF-8 at byte offset {base_offset + skip + exc.start} (bytes {bad})") from None
    return _normalize_newlines(text)


def _normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ----------------------------------------------------------------------------------------------------------
# Plain text / markdown
# ----------------------------------------------------------------------------------------------------------


def _read_text(text: str, ctx: _Ctx, *, markdown: bool) -> Document:
    """Notes are kept verbatim; only the title is derived (first heading or first line)."""
    title = None
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if markdown:
        for line in lines:
            match = _MD_HEADING.match(line)
            if match:
                title = match.group(1)
                break
    if title is None and lines:
        title = lines[0].lstrip("#").strip()
    if title and len(title) > 120:
        title = title[:117].rstrip() + "..."
    if not markdown and (turns := pasted_chat_turns(text)):
        header = text[: text.rfind("\n", 0, turns[0].start) + 1].strip()  # a title line above the messages
        speakers = sorted({t.speaker for t in turns if t.speaker})
        metadata = {"format": "pasted chat", "message_count": len(turns), "participants": speakers}
        return ctx.document(
            "chat",
            text,
            turns=turns,
            doc_date=_parse_iso_date(turns[0].timestamp),
            title=header.split("\n")[0][:120] if header else None,
            metadata=metadata,
        )
    fmt = "markdown" if markdown else "plain"
    return ctx.document("text", text, title=title, metadata={"format": fmt})


# ----------------------------------------------------------------------------------------------------------
# JSON: pulse check-ins, chat exports, transcripts
# ----------------------------------------------------------------------------------------------------------


def _read_json(text: str, ctx: _Ctx) -> Document:
    """Recognise the structure by its list key; the three shapes are mutually exclusive in practice."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Reject(f"malformed JSON at line {exc.lineno} col {exc.colno}: {exc.msg}") from None
    if isinstance(obj, dict):
        if "answers" in obj:
            return _pulse_document(obj, ctx)
        if "messages" in obj:
            return _chat_document(obj, ctx)
        if "turns" in obj:
            return _transcript_document(obj, ctx)
    raise _Reject("JSON is not a pulse, chat export or transcript")


def _read_jsonl(data: bytes, ctx: _Ctx) -> list[Document | ReadFailure]:
    """One pulse per line; each line is decoded and validated alone so one bad record costs only itself."""
    out: list[Document | ReadFailure] = []
    offset = 0
    if data.startswith(_UTF8_BOM):
        data, offset = data[len(_UTF8_BOM) :], len(_UTF8_BOM)
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        uri = f"{ctx.source_uri}#L{lineno}"
        line_offset = offset
        offset += len(raw) + 1
        try:
            line = _decode_utf8(raw, base_offset=line_offset).strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _Reject(f"malformed JSON at line {lineno} col {exc.colno}: {exc.msg}") from None
            if not isinstance(obj, dict) or "answers" not in obj:
                raise _Reject("JSONL record is not a pulse check-in")
            out.append(_pulse_document(obj, ctx, source_uri=uri))
        except _Reject as exc:
            out.append(ReadFailure(tenant_id=ctx.tenant_id, source_uri=uri, reason=str(exc)))
    if not out:
        raise _Reject("empty file (no JSONL records)")
    return out


def _pulse_document(obj: dict[str, Any], ctx: _Ctx, *, source_uri: str | None = None) -> Document:
    """Question line, answer line(s), blank line; a Turn spans exactly each answer."""
    answers = obj.get("answers")
    if not isinstance(answers, list) or not answers:
        raise _Reject("pulse 'answers' must be a non-empty list")
    author = _opt_str(obj, "author", "member")
    raw_date = _opt_str(obj, "date")
    parts: list[str] = []
    turns: list[Turn] = []
    pos = 0
    for i, item in enumerate(answers, start=1):
        if not isinstance(item, dict):
            raise _Reject(f"pulse answer {i} is not an object")
        question = item.get("question")
        answer = item.get("answer")
        if not isinstance(question, str) or not isinstance(answer, str):
            raise _Reject(f"pulse answer {i} needs string 'question' and 'answer'")
        question, answer = _normalize_newlines(question), _normalize_newlines(answer)
        head = f"{question}\n"
        start = pos + len(head)
        turns.append(Turn(turn_id=f"a{i}", start=start, end=start + len(answer), speaker=author, question=question))
        chunk = f"{head}{answer}\n\n"
        parts.append(chunk)
        pos += len(chunk)
    text = "".join(parts)
    if not any(t.end > t.start and text[t.start : t.end].strip() for t in turns):
        raise _Reject("pulse has no non-empty answers")
    metadata = {"author": author, "date": raw_date, "language": _opt_str(obj, "language")}
    title = "Pulse: " + " ".join(p for p in (author, raw_date) if p) if (author or raw_date) else "Pulse"
    return ctx.document(
        "pulse",
        text,
        turns=turns,
        doc_date=_parse_iso_date(raw_date),
        title=title,
        metadata={k: v for k, v in metadata.items() if v is not None},
        source_uri=source_uri,
    )


_TurnRow = tuple[str, str, str, str | None, str | None]  # turn id, line prefix, body, speaker, timestamp


def _lay_out_turns(rows: list[_TurnRow]) -> tuple[str, list[Turn]]:
    """One line per turn, `prefix + body`; each Turn spans only its body, so evidence cites the words said."""
    parts: list[str] = []
    turns: list[Turn] = []
    pos = 0
    for turn_id, prefix, body, speaker, stamp in rows:
        start = pos + len(prefix)
        turns.append(Turn(turn_id=turn_id, start=start, end=start + len(body), speaker=speaker, timestamp=stamp))
        line = f"{prefix}{body}\n"
        parts.append(line)
        pos += len(line)
    return "".join(parts), turns


def _chat_document(obj: dict[str, Any], ctx: _Ctx, *, source_uri: str | None = None) -> Document:
    """`[time] sender: text` per message; a Turn spans only the message text."""
    messages = obj.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Reject("chat 'messages' must be a non-empty list")
    rows: list[_TurnRow] = []
    for i, msg in enumerate(messages, start=1):
        if not isinstance(msg, dict):
            raise _Reject(f"chat message {i} is not an object")
        body = msg.get("text")
        if not isinstance(body, str):
            raise _Reject(f"chat message {i} has no string 'text'")
        sender = _opt_str(msg, "sender", "from")
        stamp = _opt_str(msg, "time", "timestamp")
        prefix = (f"[{stamp}] " if stamp else "") + (f"{sender}: " if sender else "")
        rows.append((f"m{i}", prefix, _normalize_newlines(body), sender, stamp))
    text, turns = _lay_out_turns(rows)
    channel = _opt_str(obj, "channel")
    title = _opt_str(obj, "title") or channel
    participants = sorted({t.speaker for t in turns if t.speaker})
    metadata: dict[str, Any] = {"message_count": len(turns), "participants": participants}
    if channel:
        metadata["channel"] = channel
    return ctx.document(
        "chat",
        text,
        turns=turns,
        doc_date=_parse_iso_date(turns[0].timestamp),
        title=title,
        metadata=metadata,
        source_uri=source_uri,
    )


def _transcript_document(obj: dict[str, Any], ctx: _Ctx) -> Document:
    """`speaker: text` per turn; turn ids come from the file so reviewers can cite them."""
    raw_turns = obj.get("turns")
    if not isinstance(raw_turns, list) or not raw_turns:
        raise _Reject("transcript 'turns' must be a non-empty list")
    rows: list[_TurnRow] = []
    seen: set[str] = set()
    for i, item in enumerate(raw_turns, start=1):
        if not isinstance(item, dict):
            raise _Reject(f"transcript turn {i} is not an object")
        body = item.get("text")
        if not isinstance(body, str):
            raise _Reject(f"transcript turn {i} has no string 'text'")
        body = _normalize_newlines(body)
        raw_id = item.get("turn_id", item.get("id"))
        turn_id = str(raw_id).strip() if isinstance(raw_id, (str, int)) and str(raw_id).strip() else f"t{i}"
        if turn_id in seen:
            raise _Reject(f"transcript turn id {turn_id!r} is used twice")
        seen.add(turn_id)
        speaker = _opt_str(item, "speaker")
        rows.append((turn_id, f"{speaker}: " if speaker else "", body, speaker, _opt_str(item, "time")))
    text, turns = _lay_out_turns(rows)
    raw_date = _opt_str(obj, "date")
    speakers = sorted({t.speaker for t in turns if t.speaker})
    metadata: dict[str, Any] = {"speakers": speakers, "turn_count": len(turns)}
    if raw_date:
        metadata["date"] = raw_date
    return ctx.document(
        "transcript",
        text,
        turns=turns,
        doc_date=_parse_iso_date(raw_date),
        title=_opt_str(obj, "title"),
        metadata=metadata,
    )


def _sheet_documents(records: list[SheetRecord], ctx: _Ctx) -> list[Document | ReadFailure]:
    """Sheet records through the pulse and chat readers; a bad record costs only itself, like a JSONL line."""
    if not records:
        raise _Reject("spreadsheet has no rows below its header")
    out: list[Document | ReadFailure] = []
    for record in records:
        uri = f"{ctx.source_uri}#{record.fragment}" if record.fragment else ctx.source_uri
        try:
            if record.kind == "pulse":
                out.append(_pulse_document(record.data, ctx, source_uri=uri))
            else:
                out.append(_chat_document(record.data, ctx, source_uri=uri))
        except _Reject as exc:
            out.append(ReadFailure(tenant_id=ctx.tenant_id, source_uri=uri, reason=str(exc)))
    return out


# ----------------------------------------------------------------------------------------------------------
# E-mail
# ----------------------------------------------------------------------------------------------------------


def _read_email(data: bytes, ctx: _Ctx) -> Document:
    """Headers then the body; plain text preferred, HTML converted, broken multipart rejected outright."""
    msg = BytesParser(policy=policy.default).parsebytes(data)
    fatal: list[str] = []
    for part in msg.walk():
        for defect in part.defects:
            label = _FATAL_MIME_DEFECTS.get(type(defect))
            name = type(defect).__name__
            if label and f"{name} ({label})" not in fatal:
                fatal.append(f"{name} ({label})")
    if fatal:
        raise _Reject("broken MIME: " + "; ".join(fatal))

    headers = {name: _header(msg, name) for name in (*_EMAIL_HEADERS, "Message-ID")}
    if not any(headers.values()):
        raise _Reject("not an e-mail: no From/To/Subject/Date/Message-ID header")

    body = _email_body(msg)
    if not body.strip():
        raise _Reject("e-mail has no readable body (text/plain or text/html part is empty)")

    head = "".join(f"{name}: {headers[name]}\n" for name in _EMAIL_HEADERS if headers[name])
    text = f"{head}\n{body}"
    metadata = {
        "message_id": headers["Message-ID"],
        "from": headers["From"],
        "to": headers["To"],
        "subject": headers["Subject"],
        "date": headers["Date"],
    }
    return ctx.document(
        "email",
        text,
        turns=body_turns(body_parts(text, len(head) + 1, forwarded=is_forward(headers["Subject"]))),
        doc_date=_email_date(headers["Date"]),
        title=headers["Subject"],
        metadata={k: v for k, v in metadata.items() if v},
    )


def _header(msg: Message, name: str) -> str | None:
    """Header value decoded (RFC 2047), unfolded onto one line so the text layout stays one line each."""
    value = msg.get(name)
    if value is None:
        return None
    flat = " ".join(str(value).split())
    return flat or None


def _email_body(msg: Message) -> str:
    """text/plain if present, else text/html turned into text; attachments are ignored."""
    plain = html = None
    if isinstance(msg, EmailMessage):
        plain = msg.get_body(preferencelist=("plain",))
        html = msg.get_body(preferencelist=("html",)) if plain is None else None
    if plain is None and html is None:
        raise _Reject("e-mail has no readable body (no text/plain or text/html part)")
    if plain is not None:
        return _normalize_newlines(_part_text(plain)).strip("\n") + "\n"
    assert html is not None
    return html_to_text(_part_text(html)) + "\n"


def _part_text(part: Message) -> str:
    """Decode a MIME part strictly with its declared charset (UTF-8 when none is declared)."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        raise _Reject("e-mail body part has no decodable payload")
    charset = part.get_content_charset() or "utf-8"
    if charset in ("us-ascii", "ascii"):
        charset = "utf-8"  # 8-bit bodies often lie about being ASCII; UTF-8 is a strict superset
    try:
        return payload.decode(charset)
    except LookupError:
        raise _Reject(f"e-mail body uses unknown charset {charset!r}") from None
    except UnicodeDecodeError as exc:
        raise _Reject(f"e-mail body is not valid {charset} at byte offset {exc.start}") from None


def html_to_text(html: str) -> str:
    """Readable text from HTML: block elements become lines, inline markup does not split sentences."""
    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "head", "title"]):
        tag.decompose()
    for br in soup.find_all("br"):
        br.replace_with("\n")
    for tag in soup.find_all(_HTML_BLOCK_TAGS):
        tag.insert_before("\n")
        tag.insert_after("\n")
    for tag in soup.find_all(_HTML_LINE_TAGS):
        tag.insert_before("\n")
    for tag in soup.find_all(_HTML_CELL_TAGS):
        tag.insert_after(" ")
    lines = [" ".join(line.split()) for line in _normalize_newlines(soup.get_text()).split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n")


def _email_date(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).date()
    except (TypeError, ValueError, IndexError):
        return None


# ----------------------------------------------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------------------------------------------


def _opt_str(obj: dict[str, Any], *keys: str) -> str | None:
    """First present, non-blank string (numbers are accepted as strings) among `keys`."""
    for key in keys:
        value = obj.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _parse_iso_date(value: str | None) -> date | None:
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


def _date_from_name(name: str) -> date | None:
    """Fallback doc_date from an ISO date in the file name (e.g. `2026-11-24-standup.md`)."""
    match = _ISO_DATE_IN_NAME.search(name)
    return _parse_iso_date(match.group(1)) if match else None


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
