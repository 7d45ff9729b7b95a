"""E-mail: `.eml` files and every message of an `.mbox` mailbox, with HTML bodies turned into text.

A mailbox message is read by the same reader as an `.eml` file, so both give identical documents;
one unreadable message costs only itself.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import date
from email import errors as email_errors
from email import policy
from email.headerregistry import BaseHeader, HeaderRegistry
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.utils import parsedate_to_datetime

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers.email_body import body_parts, body_turns, is_forward
from extraction_assets.lib.readers.record import RecordContext, Rejected, TooLarge, normalize_newlines

_BLANK_RUNS = re.compile(r"\n{3,}")

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


_KEPT_PARSED = frozenset({"content-type", "content-transfer-encoding", "content-disposition"})
_PARSED_KEPT = 1024  # parsed MIME headers kept (by name and value) before the memo starts again


class _HeaderClasses(HeaderRegistry):
    """The standard header registry, each header's class made once: the registry builds a new class (`type(...)`) for
    every header a message is asked for, a fifth of the time an e-mail's parse and header reads took."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type[BaseHeader]] = {}
        self._parsed: dict[tuple[str, str, str], BaseHeader] = {}

    def __getitem__(self, name: str) -> type[BaseHeader]:
        key = name.lower()
        if key not in self._made:
            self._made[key] = super().__getitem__(key)
        return self._made[key]

    def map_to_type(self, name: str, cls: type[BaseHeader]) -> None:
        super().map_to_type(name, cls)
        self._made.pop(name.lower(), None)
        self._parsed.clear()

    def __call__(self, name: str, value: str) -> BaseHeader:
        """The header parsed; a MIME structure header (`_KEPT_PARSED`) parsed once per value: the parser and
        `get_body` ask for a part's Content-Type about six times (each a new parse: 5,400 parses for 900 e-mails),
        and a mailbox repeats a few such values in every message. A parsed header is immutable (a `str` with read-only
        attributes), so the same object serves every reader."""
        key = name.lower()
        if key not in _KEPT_PARSED:
            return super().__call__(name, value)
        found = self._parsed.get((key, name, value))
        if found is None:
            if len(self._parsed) >= _PARSED_KEPT:
                self._parsed.clear()
            found = self._parsed[(key, name, value)] = super().__call__(name, value)
        return found


POLICY = policy.default.clone(header_factory=_HeaderClasses())  # policy.default, header classes made once


def read_email(data: bytes, ctx: RecordContext) -> Document:
    """Headers then the body; plain text preferred, HTML converted, broken multipart rejected outright."""
    msg = BytesParser(policy=POLICY).parsebytes(data)
    fatal: list[str] = []
    for part in msg.walk():
        for defect in part.defects:
            label = _FATAL_MIME_DEFECTS.get(type(defect))
            name = type(defect).__name__
            if label and f"{name} ({label})" not in fatal:
                fatal.append(f"{name} ({label})")
    if fatal:
        raise Rejected("broken MIME: " + "; ".join(fatal))

    headers = {name: _header(msg, name) for name in (*_EMAIL_HEADERS, "Message-ID")}
    if not any(headers.values()):
        raise Rejected("not an e-mail: no From/To/Subject/Date/Message-ID header")

    body = _email_body(msg)
    if not body.strip():
        raise Rejected("e-mail has no readable body (text/plain or text/html part is empty)")

    ctx.budget.row("lines", body.count("\n") + 1)  # the body's structure is read line by line
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
    value = _bare_addresses(msg, name) if name.lower() in _ADDRESS_HEADERS else None
    if value is None:
        parsed = msg.get(name)
        if parsed is None:
            return None
        value = str(parsed)
    flat = " ".join(value.split())
    return flat or None


# A From or To header that is a list of bare addresses ("a.b@example.com, c@example.org"), as most are: the standard
# parser's reading of it (an address list of RFC 5322, parsed token by token in Python: about a tenth of reading an
# e-mail) prints each address as written, joined by ", ". Such a value is recognised by a pattern and printed the
# same way; any other (a display name, a quoted or encoded word, a comment, a group, anything outside ASCII) is parsed.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_BARE_ADDRESS = rf"{_ATOM}(?:\.{_ATOM})*@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*"
_BARE_ADDRESS_LIST = re.compile(rf"[ \t]*{_BARE_ADDRESS}[ \t]*(?:,[ \t]*{_BARE_ADDRESS}[ \t]*)*")
_ADDRESS_HEADERS = frozenset({"from", "to"})
_LINE_BREAK = re.compile(r"\n|\r")  # what the policy removes from a value before parsing it (unfolding)


def _bare_addresses(msg: Message, name: str) -> str | None:
    """The header's first value as the parser would print it, when it is a list of bare addresses; else None."""
    key = name.lower()
    for header, raw in msg.raw_items():
        if header.lower() == key:
            if not isinstance(raw, str):
                return None
            unfolded = "".join(_LINE_BREAK.split(raw))
            if _BARE_ADDRESS_LIST.fullmatch(unfolded) is None:
                return None
            return ", ".join(address.strip(" \t") for address in unfolded.split(","))
    return None


def _email_body(msg: Message) -> str:
    """text/plain if present, else text/html turned into text; attachments are ignored."""
    plain = html = None
    if isinstance(msg, EmailMessage):
        plain = msg.get_body(preferencelist=("plain",))
        html = msg.get_body(preferencelist=("html",)) if plain is None else None
    if plain is None and html is None:
        raise Rejected("e-mail has no readable body (no text/plain or text/html part)")
    if plain is not None:
        return normalize_newlines(_part_text(plain)).strip("\n") + "\n"
    assert html is not None
    return html_to_text(_part_text(html)) + "\n"


def _part_text(part: Message) -> str:
    """Decode a MIME part strictly with its declared charset (UTF-8 when none is declared)."""
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        raise Rejected("e-mail body part has no decodable payload")
    charset = part.get_content_charset() or "utf-8"
    if charset in ("us-ascii", "ascii"):
        charset = "utf-8"  # 8-bit bodies often lie about being ASCII; UTF-8 is a strict superset
    try:
        return payload.decode(charset)
    except LookupError:
        raise Rejected(f"e-mail body uses unknown charset {charset!r}") from None
    except UnicodeDecodeError as exc:
        raise Rejected(f"e-mail body is not valid {charset} at byte offset {exc.start}") from None


def html_to_text(html: str) -> str:
    """Readable text from HTML: block elements become lines, inline markup does not split sentences."""
    from bs4 import BeautifulSoup  # ~0.1 s to import: only an inbox with HTML mail pays for it

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
    lines = [" ".join(line.split()) for line in normalize_newlines(soup.get_text()).split("\n")]
    return _BLANK_RUNS.sub("\n\n", "\n".join(lines)).strip("\n")


def _email_date(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).date()
    except (TypeError, ValueError, IndexError):
        return None


_MBOX_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


def mbox_messages(data: bytes) -> list[bytes]:
    """A mailbox's messages, split as the stdlib `mailbox.mbox` splits a file, from the bytes already read.

    Every line that starts with "From " begins a message (the line itself is not part of it); the blank line
    before it (or at the end) ends the previous one; text before the first "From " line belongs to no message.
    Working on the bytes the inbox read from its open file means the mailbox is never opened again by name."""
    messages: list[bytes] = []
    current: list[bytes] | None = None

    def close(lines: list[bytes]) -> None:
        messages.append(b"".join(lines[:-1] if lines and lines[-1] == b"\n" else lines))

    for match in _MBOX_LINE.finditer(data):
        line = match.group()
        if line.startswith(b"From "):
            if current is not None:
                close(current)
            current = []
        elif current is not None:
            current.append(line)
    if current is not None:
        close(current)
    return messages


def read_mbox(data: bytes, ctx: RecordContext) -> list[Document | ReadFailure]:
    """Every message of the mailbox in file order, as `<file>.mbox#<n>` (n from 1), or a ReadFailure with its reason.

    The file is split at its "From " lines (`mbox_messages`); each message's bytes then go through `read_email`,
    so a mailbox message and an `.eml` file give identical documents.
    """
    messages = mbox_messages(data)
    if not messages:
        return [
            ReadFailure(
                tenant_id=ctx.tenant_id,
                source_uri=ctx.source_uri,
                reason="mbox has no messages (no line starts with 'From ')",
            )
        ]
    out: list[Document | ReadFailure] = []
    for number, message in enumerate(messages, start=1):
        ctx.budget.row("messages")
        uri = f"{ctx.source_uri}#{number}"
        try:
            out.append(read_email(message, replace(ctx, source_uri=uri)))
        except TooLarge:  # the file as a whole
            raise
        except Exception as exc:  # one unreadable message must not cost the others
            out.append(ReadFailure(tenant_id=ctx.tenant_id, source_uri=uri, reason=str(exc) or type(exc).__name__))
    return out
