"""The structure of an e-mail body: the sender's own text versus quoted replies and signatures.

Quoted history repeats someone else's older words and a signature is boilerplate, so neither may
become an item; both stay in the raw text (offsets never move) and are only left out of the
extractable ranges, which readers record as the document's turns. Forwarded content is the payload
of a forward, so it stays extractable. Works on raw and on scrubbed text alike: every marker it
looks for survives PII masking.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal, NamedTuple

from pydantic import BaseModel

from extraction_assets.lib.models import Turn

PartKind = Literal["text", "forwarded", "quoted", "signature", "separator"]
EXTRACTABLE: frozenset[str] = frozenset({"text", "forwarded"})

# "-----Original Message-----", "-----Reply Message-----" and their translations, or an attribution between
# rules ("---- Dana wrote ----"): everything below is earlier history.
_ORIGINAL_MESSAGE = re.compile(
    r"^\s*-{2,}\s*(?:(?:original|reply) message|ursprüngliche nachricht|antwort nachricht|message d'origine"
    r"|mensaje original|исходное сообщение|oprindelig meddelelse|原始邮件|thư gốc|.*\bwrote)\s*-{2,}\s*$",
    re.IGNORECASE,
)
# "On Mon, 24 Nov 2026 Dana <x> wrote:" (may wrap over up to three lines) and its translations.
_ATTRIBUTION_END = re.compile(
    r"(?:wrote|sent|schrieb|a écrit|escribió|đã viết|написал[аи]?|пишет|写道|schreef|geschreven|napisał[a]?|skrev)"
    r"\s*[:：]\s*$",
    re.IGNORECASE,
)
_ATTRIBUTION_START = re.compile(
    r"^\s*(?:(?:on|am|le|el|vào|в|op|w dniu|den|på|пользователь)\s|\d{1,4}[-./]\d)|\sот\s", re.IGNORECASE
)
# An attribution that ends at the address ("Op 13-02-2014 Dana <x>:", "2014-10-17 11:28 Dana <x>:", Russian
# "... от Dana <x>:"): taken only when it also begins like one.
_ADDRESS_END = re.compile(r">\s*[:：]\s*$")
_COLONS = (":", "：")


def _ends_on_colon(line: str) -> bool:
    """Both attribution endings end on a colon: a line that does not is no attribution's last line, and the
    patterns (searched from every position of a line) need not be tried on it."""
    return line.rstrip().endswith(_COLONS)


# Where an attribution begins after the sender's own words on the same line ("ok On Mon, ... wrote:").
_INLINE_ATTRIBUTION = re.compile(r"(?:-{2,}\s*|\s+)(?=(?:On|Am|Le|El|Op|Den|På)\s)")
# An Outlook header block pasted into the body: a "From:" or "Date:" line (bold "*From:*" too) and another
# header field within the next three lines; or a rule of underscores or dashes over "From:".
_HEADER_FROM = re.compile(r"^\s*\*?(?:from|von|de|от|发件人|từ|fra|från|van|od|date|datum)\*?\s*[:：]", re.IGNORECASE)
_HEADER_FIELD = re.compile(
    r"^\s*\*?(?:from|sent|date|to|subject|von|gesendet|datum|an|betreff|envoyé|à|objet|enviado|para|asunto"
    r"|отправлено|кому|тема|发送时间|đã gửi|fra|sendt|til|emne|från|skickat|till|ämne|verzonden|aan|onderwerp)"
    r"\*?\s*[:：]",
    re.IGNORECASE,
)
_RULE = re.compile(r"^\s*(?:_{10,}|-{10,})\s*$")
# A mailing list's footer under a rule ("riak-users mailing list", a listinfo or unsubscribe link).
_LIST_FOOTER = re.compile(r"mailing list|listinfo|unsubscribe", re.IGNORECASE)
_FORWARD = re.compile(
    r"^\s*(?:-{2,}.*forward(?:ed)?\b.*|begin forwarded message\s*:|-{2,}\s*(?:weitergeleitete nachricht"
    r"|message transféré|пересылаемое сообщение|转发的邮件|thư chuyển tiếp)\s*-{2,})\s*$",
    re.IGNORECASE,
)
# A forward marker wrapped onto a second line ("PM ------------").
_RULE_TAIL = re.compile(r"^\s*\S{0,12}\s*-{5,}\s*$")
_FORWARD_SUBJECT = re.compile(r"^\s*(?:fwd?|tr|wg|rv|пересл|转发)\s*[:：]", re.IGNORECASE)
_SIGNATURE = re.compile(r"^--[ \t]?$")
# "Sent from my iPhone" and a "-Dana" sign-off: a signature only where the sender's own text ends.
_SENT_FROM_DEVICE = re.compile(r"^\s*sent from my \w+(?: \w+){0,4}(?: \([^)]*\))?\s*$", re.IGNORECASE)
_SIGN_OFF = re.compile(r"^\s*-[A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2}\s*$")
_QUOTED_LINE = re.compile(r"^\s*>")


class BodyPart(BaseModel):
    """A run of body lines of one kind; `text[start:end]` is its exact content."""

    kind: PartKind
    start: int
    end: int


def line_spans(text: str, start: int) -> list[tuple[int, int]]:
    """(start, end) of each line from `start`, line break (LF or CRLF) excluded."""
    return list(iter_line_spans(text, start))


def iter_line_spans(text: str, start: int) -> Iterator[tuple[int, int]]:
    """`line_spans`, one line at a time: a reader that stops early does not split the rest of the text. A line ends at
    its line feed (found with `str.find`), the carriage returns before it left out."""
    size = len(text)
    while start < size:
        stop = text.find("\n", start)
        if stop == -1:
            stop = size
        end = stop
        while end > start and text[end - 1] == "\r":
            end -= 1
        yield start, end
        start = stop + 1


class _Lines(NamedTuple):
    """A body's lines as strings (line break excluded), and which of them end on a colon: the tests below read each
    line several times (as the first, second or third line of an attribution, as history, as what comes next), so
    each is cut from the text and tested for its colon once."""

    text: list[str]
    colon: list[bool]


def _lines(text: str, spans: list[tuple[int, int]]) -> _Lines:
    lines = [text[start:end] for start, end in spans]
    return _Lines(lines, [_ends_on_colon(line) for line in lines])


def _attribution_length(lines: _Lines, i: int) -> int:
    """How many lines from `i` form an "On ... wrote:" attribution (0 when they do not)."""
    if not any(lines.colon[i : i + 3]):  # every attribution's last line ends on a colon
        return 0
    for size in (1, 2, 3):
        if i + size > len(lines.text):
            break
        last = lines.text[i + size - 1]
        if not last.strip():  # an attribution wraps, it has no blank line
            break
        if not lines.colon[i + size - 1]:
            continue
        first = lines.text[i]
        if _ATTRIBUTION_END.search(last):
            return size if size == 1 or _ATTRIBUTION_START.search(first) else 0
        if _ADDRESS_END.search(last) and _ATTRIBUTION_START.search(first):
            return size
    return 0


def _next_content(lines: _Lines, i: int) -> str:
    for line in lines.text[i:]:
        if line.strip():
            return line
    return ""


def _pasted_history(lines: _Lines, i: int) -> bool:
    """An "Original Message" rule, a rule over "From:", or an Outlook header block ("From:"/"Date:" + a field)."""
    line = lines.text[i]
    if _ORIGINAL_MESSAGE.match(line):
        return True
    if _RULE.match(line):
        return bool(_HEADER_FROM.match(_next_content(lines, i + 1)))
    return bool(_HEADER_FROM.match(line)) and any(_HEADER_FIELD.match(field) for field in lines.text[i + 1 : i + 4])


def _ends_own_text(lines: _Lines, i: int) -> bool:
    """Nothing of the sender's follows line `i - 1`: only blank lines, or a rule, signature, quote or history."""
    following = next((n for n in range(i, len(lines.text)) if lines.text[n].strip()), None)
    if following is None:
        return True
    line = lines.text[following]
    return bool(
        _RULE.match(line)
        or _SIGNATURE.match(line)
        or _QUOTED_LINE.match(line)
        or _pasted_history(lines, following)
        or _attribution_length(lines, following)
    )


def _split_inline_attributions(text: str, lines: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Lines with a reply before an attribution on the same line ("ok On Mon, ... wrote:") cut in two."""
    spans = []
    for start, end in lines:
        line = text[start:end]
        ends = _ends_on_colon(line) and _ATTRIBUTION_END.search(line)
        cut = _INLINE_ATTRIBUTION.search(line) if ends else None
        own = line[: cut.start()].rstrip() if cut else ""
        if cut and own:
            attribution = len(line) - len(line[cut.start() :].lstrip())
            spans += [(start, start + len(own)), (start + attribution, end)]
        else:
            spans.append((start, end))
    return spans


def _classify_lines(lines: _Lines, forwarded: bool) -> list[PartKind]:
    """One kind per line, top to bottom.

    Pasted history (Outlook's "Original Message" and header blocks) is quoted to the end, unless the
    message is a forward, whose pasted history is the payload. An attribution followed by lines
    without ">" (HTML mail turned to text) is quoted to the end as well.
    """
    kinds: list[PartKind] = []
    mode: PartKind = "text"  # what an ordinary line is: text, forwarded or signature
    count = len(lines.text)
    i = 0
    while i < count:
        line = lines.text[i]
        if (forwarded or mode != "forwarded") and _pasted_history(lines, i):
            if not forwarded:
                kinds.extend(["quoted"] * (count - i))
                break
            kinds.append("separator")
            mode = "forwarded"
            i += 1
            continue
        attribution = _attribution_length(lines, i)
        if attribution:
            kinds.extend(["quoted"] * attribution)
            i += attribution
            if not _QUOTED_LINE.match(_next_content(lines, i)):
                kinds.extend(["quoted"] * (count - i))
                break
            continue
        if _FORWARD.match(line) or (kinds[-1:] == ["separator"] and _RULE_TAIL.match(line)):
            kinds.append("separator")
            mode = "forwarded"
        elif _QUOTED_LINE.match(line):
            kinds.append("quoted")
        elif (
            _SIGNATURE.match(line)
            or (_RULE.match(line) and _LIST_FOOTER.search(_next_content(lines, i + 1)))
            or ((_SENT_FROM_DEVICE.match(line) or _SIGN_OFF.match(line)) and _ends_own_text(lines, i + 1))
        ):
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
    spans = _split_inline_attributions(text, line_spans(text, body_start))
    lines = _lines(text, spans)
    kinds = _classify_lines(lines, forwarded)
    runs: list[tuple[PartKind, int, int]] = []  # made parts once complete: a long thread has thousands of lines
    for (start, end), line, kind in zip(spans, lines.text, kinds, strict=True):
        if not line.strip():
            continue
        if runs and runs[-1][0] == kind:
            runs[-1] = (kind, runs[-1][1], end)
        else:
            runs.append((kind, start, end))
    return [BodyPart(kind=kind, start=start, end=end) for kind, start, end in runs]


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
