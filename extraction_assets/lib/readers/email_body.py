"""The structure of an e-mail body: the sender's own text versus quoted replies and signatures.

Quoted history repeats someone else's older words and a signature is boilerplate, so neither may
become an item; both stay in the raw text (offsets never move) and are only left out of the
extractable ranges, which readers record as the document's turns. Forwarded content is the payload
of a forward, so it stays extractable. Works on raw and on scrubbed text alike: every marker it
looks for survives PII masking.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel

from extraction_assets.lib.models import Turn

PartKind = Literal["text", "forwarded", "quoted", "signature", "separator"]
EXTRACTABLE: frozenset[str] = frozenset({"text", "forwarded"})

# "-----Original Message-----" and its translations: everything below is earlier history.
_ORIGINAL_MESSAGE = re.compile(
    r"^\s*-{2,}\s*(?:original message|ursprüngliche nachricht|message d'origine|mensaje original"
    r"|исходное сообщение|原始邮件|thư gốc)\s*-{2,}\s*$",
    re.IGNORECASE,
)
# "On Mon, 24 Nov 2026 Dana <x> wrote:" (may wrap over up to three lines) and its translations.
_ATTRIBUTION_END = re.compile(
    r"(?:wrote|schrieb|a écrit|escribió|đã viết|написал[аи]?|пишет|写道)\s*[:：]\s*$", re.IGNORECASE
)
_ATTRIBUTION_START = re.compile(r"^\s*(?:on|am|le|el|vào|в)\s", re.IGNORECASE)
# An Outlook header block pasted into the body ("From: ..." then "Sent: ..."), or a rule of underscores.
_HEADER_FROM = re.compile(r"^\s*(?:from|von|de|от|发件人|từ)\s*[:：]", re.IGNORECASE)
_HEADER_SENT = re.compile(r"^\s*(?:sent|gesendet|envoyé|enviado|отправлено|发送时间|đã gửi)\s*[:：]", re.IGNORECASE)
_RULE = re.compile(r"^\s*_{10,}\s*$")
_FORWARD = re.compile(
    r"^\s*(?:-{2,}.*forward(?:ed)?\b.*|begin forwarded message\s*:|-{2,}\s*(?:weitergeleitete nachricht"
    r"|message transféré|пересылаемое сообщение|转发的邮件|thư chuyển tiếp)\s*-{2,})\s*$",
    re.IGNORECASE,
)
# A forward marker wrapped onto a second line ("PM ------------").
_RULE_TAIL = re.compile(r"^\s*\S{0,12}\s*-{5,}\s*$")
_FORWARD_SUBJECT = re.compile(r"^\s*(?:fwd?|tr|wg|rv|пересл|转发)\s*[:：]", re.IGNORECASE)
_SIGNATURE = re.compile(r"^--[ \t]?$")
_SENT_FROM_DEVICE = re.compile(r"^\s*sent from my \w+", re.IGNORECASE)
_QUOTED_LINE = re.compile(r"^\s*>")
_LINE = re.compile(r"[^\n]*\n?")


class BodyPart(BaseModel):
    """A run of body lines of one kind; `text[start:end]` is its exact content."""

    kind: PartKind
    start: int
    end: int


def line_spans(text: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of each line from `start`, line break (LF or CRLF) excluded."""
    spans = []
    for m in _LINE.finditer(text, start):
        if m.start() == m.end():
            break
        end = m.end()
        while end > m.start() and text[end - 1] in "\r\n":
            end -= 1
        spans.append((m.start(), end))
    return spans


def _attribution_length(text: str, lines: list[tuple[int, int]], i: int) -> int:
    """How many lines from `i` form an "On ... wrote:" attribution (0 when they do not)."""
    for size in (1, 2, 3):
        if i + size > len(lines):
            break
        last = text[lines[i + size - 1][0] : lines[i + size - 1][1]]
        if _ATTRIBUTION_END.search(last):
            first = text[lines[i][0] : lines[i][1]]
            return size if size == 1 or _ATTRIBUTION_START.match(first) else 0
    return 0


def _next_content(text: str, lines: list[tuple[int, int]], i: int) -> str:
    for start, end in lines[i:]:
        if text[start:end].strip():
            return text[start:end]
    return ""


def _pasted_history(text: str, lines: list[tuple[int, int]], i: int) -> bool:
    """An "Original Message" rule, a rule of underscores over "From:", or an Outlook "From:" + "Sent:" pair."""
    line = text[slice(*lines[i])]
    if _ORIGINAL_MESSAGE.match(line):
        return True
    if _RULE.match(line):
        return bool(_HEADER_FROM.match(_next_content(text, lines, i + 1)))
    return bool(_HEADER_FROM.match(line) and i + 1 < len(lines) and _HEADER_SENT.match(text[slice(*lines[i + 1])]))


def _classify_lines(text: str, lines: list[tuple[int, int]], forwarded: bool) -> list[PartKind]:
    """One kind per line, top to bottom.

    Pasted history (Outlook's "Original Message" and header blocks) is quoted to the end, unless the
    message is a forward, whose pasted history is the payload. An attribution followed by lines
    without ">" (HTML mail turned to text) is quoted to the end as well.
    """
    kinds: list[PartKind] = []
    mode: PartKind = "text"  # what an ordinary line is: text, forwarded or signature
    i = 0
    while i < len(lines):
        line = text[slice(*lines[i])]
        if _pasted_history(text, lines, i):
            if not forwarded:
                kinds.extend(["quoted"] * (len(lines) - i))
                break
            kinds.append("separator")
            mode = "forwarded"
            i += 1
            continue
        attribution = _attribution_length(text, lines, i)
        if attribution:
            kinds.extend(["quoted"] * attribution)
            i += attribution
            if not _QUOTED_LINE.match(_next_content(text, lines, i)):
                kinds.extend(["quoted"] * (len(lines) - i))
                break
            continue
        if _FORWARD.match(line) or (kinds[-1:] == ["separator"] and _RULE_TAIL.match(line)):
            kinds.append("separator")
            mode = "forwarded"
        elif _QUOTED_LINE.match(line):
            kinds.append("quoted")
        elif _SIGNATURE.match(line) or _SENT_FROM_DEVICE.match(line):
            kinds.append("signature")
            mode = "signature"
        else:
            kinds.append(mode)
        i += 1
    return kinds


def body_parts(text: str, body_start: int, forwarded: bool = False) -> list[BodyPart]:
    """The body from `body_start` as runs of text, forwarded, quoted, signature and separator lines.

    `forwarded` says the message is a forward (its subject starts with "Fwd:"): pasted history is then
    content. Blank lines join the run around them; each run spans its first to its last non-blank line.
    """
    lines = line_spans(text, body_start)
    kinds = _classify_lines(text, lines, forwarded)
    parts: list[BodyPart] = []
    for (start, end), kind in zip(lines, kinds, strict=True):
        if not text[start:end].strip():
            continue
        if parts and parts[-1].kind == kind:
            parts[-1] = parts[-1].model_copy(update={"end": end})
        else:
            parts.append(BodyPart(kind=kind, start=start, end=end))
    return parts


def body_turns(parts: list[BodyPart]) -> list[Turn]:
    """The extractable runs as turns `b1`, `b2`, ...: extractors read only these."""
    extractable = [p for p in parts if p.kind in EXTRACTABLE]
    return [Turn(turn_id=f"b{n}", start=p.start, end=p.end) for n, p in enumerate(extractable, start=1)]


def is_forward(subject: str | None) -> bool:
    """A subject that starts with a forward prefix ("Fwd:", "FW:", ...); "Re: Fwd:" is a reply."""
    return bool(subject and _FORWARD_SUBJECT.match(subject))


def body_start(text: str) -> int:
    """Where the body begins in a header-block-then-body text: after the first blank line (0 when none)."""
    match = re.search(r"\r?\n\r?\n", text)
    return match.end() if match else 0
