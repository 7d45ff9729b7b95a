"""Sentence/clause segmentation that keeps exact character offsets.

Extractors must quote evidence verbatim, so every segment satisfies
``text[segment.start:segment.end] == segment.text``; nothing is rewritten here.
Matching helpers that *do* normalise (``normalize_for_match``) are kept separate
and are only ever applied to a segment's text, never used for offsets.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from extraction_assets.lib.models import Turn

# A scrubber placeholder ([EMAIL_1], `pii.PLACEHOLDER`) holds no character a clause ends or is cut at: it stays whole.
_LINE_BREAK_RE = re.compile(r"\r\n|[\n\r\u2028\u2029\x0b\x0c\x85]")
# List markers at the start of a line: "-", "*", "•", "1.", "2)", "(a)", "> " (email quoting) ...
_BULLET_RE = re.compile(r"(?:[-*•◦‣▪▫●○■□►▶➤→>+–—·]+|\(?\d{1,3}[.)]|\(?[A-Za-z]\))[ \t]+")
_CJK_TERMINATORS = "。！？"
_CJK_CLAUSE_SEPARATORS = "；"
_RUN_CHARS = ".!?…。！？"
_CLOSERS = "\"')]}»”’」』】"
_LONG_CLAUSE_SEPARATORS = "，、"
_ALNUM_RE = re.compile(r"[^\W_]")  # what str.isalnum() accepts: a word character other than "_"
# The characters a line's clauses can end at: ";", CJK separators and the terminator runs.
_CLAUSE_CHAR_RE = re.compile("[" + re.escape(";" + _CJK_CLAUSE_SEPARATORS + _RUN_CHARS) + "]")
# A "." after these does not end a sentence ("e.g. the", "Mr. Nam", "TP. HCM", "5 p.m. tomorrow").
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "mr", "mrs", "ms", "dr", "vs", "st", "jr", "sr", "tp", "a.m", "p.m", "approx"}
)
_ABBREV_WORD_RE = re.compile(r"(?<!\w)[A-Za-z.]+$")  # a whole word: "đơn" does not end in the initial "n"
# Hard-wrapped text (e-mail, notes pasted from it) breaks lines at 72-80 columns, inside sentences: a line at least
# this long that does not end a sentence runs on into the next line. A blank line, a list item, a header line
# ("Subject: ...", "# Notes") and a quoted-reply line ("> ...") still start one; a heading or a quoted line runs on
# into nothing (a header line may: its value is folded onto the next line).
WRAPPED_LINE_CHARS = 50
_LINE_CLOSERS = tuple(".!?:;…。！？：；")
_ENDS_AT_LINE_END_RE = re.compile(r"[ \t]*(?:>|#{1,6}(?:[ \t]|$))")
_STARTS_ANEW_RE = re.compile(r"[ \t]*(?:>|#{1,6}(?:[ \t]|$)|[^\W\d_][\w-]{0,30}[ \t]*:(?:[ \t]|$))")

_OLD_TONE_PLACEMENT = {
    "oà": "òa", "oá": "óa", "oả": "ỏa", "oã": "õa", "oạ": "ọa",
    "oè": "òe", "oé": "óe", "oẻ": "ỏe", "oẽ": "õe", "oẹ": "ọe",
    "uỳ": "ùy", "uý": "úy", "uỷ": "ủy", "uỹ": "ũy", "uỵ": "ụy",
}  # fmt: skip
_OLD_TONE_RE = re.compile(r"(?<!q)(" + "|".join(_OLD_TONE_PLACEMENT) + r")(?!\w)")
_QUOTE_FOLD = str.maketrans({"’": "'", "‘": "'", "ʼ": "'"})


@dataclass(frozen=True)
class Segment:
    """One clause: ``text`` equals the source slice ``[start:end]``; ``turn_id`` says which turn it came from."""

    start: int
    end: int
    text: str
    turn_id: str | None = None


def normalize_for_match(text: str) -> str:
    """Fold text for keyword matching: NFC, lower case, straight apostrophes, one Vietnamese tone placement.

    Both "huỷ" (old style) and "hủy" (new style) are common in chat, so the old placement is
    folded onto the new one. Lengths may change, so use the result for matching only.
    """
    folded = unicodedata.normalize("NFC", text).lower().translate(_QUOTE_FOLD)
    return _OLD_TONE_RE.sub(lambda m: _OLD_TONE_PLACEMENT[m.group(1)], folded)


def make_title(text: str, limit: int = 120) -> str:
    """A readable title from a clause: whitespace collapsed, cut at a word boundary to at most ``limit`` chars."""
    flat = " ".join(text.split()).rstrip(" ,;:；，")
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    else:
        opened = cut.rfind("[")
        if opened > 0 and "]" not in cut[opened:]:
            cut = cut[:opened]  # never cut a placeholder in half
    return cut.rstrip(" ,;:-–—") + "…"


def segment_text(text: str, start: int = 0, end: int | None = None, *, max_chars: int = 240) -> list[Segment]:
    """Split ``text[start:end]`` into clauses with absolute offsets.

    Breaks at line ends (except inside a hard-wrapped sentence, see ``runs_on``), ``; ! ?`` and CJK ``。！？；``
    anywhere, and at ``.``/``…`` only when followed by
    whitespace or the end (so "15.000.000", "v1.2" and placeholders stay whole). Leading list markers
    and surrounding whitespace are trimmed. Clauses longer than ``max_chars`` are further split at commas.
    """
    return _segments(text, max(0, start), len(text) if end is None else min(end, len(text)), max_chars, None)


def _segments(text: str, begin: int, stop: int, max_chars: int, turn_id: str | None) -> list[Segment]:
    if begin >= stop:
        return []
    segments: list[Segment] = []
    for lo, hi in _sentence_blocks(text, begin, stop):
        segments.extend(_segment_line(text, lo, hi, max_chars, turn_id))
    return segments


def runs_on(line: str, next_line: str) -> bool:
    """Whether ``next_line`` continues the sentence of the hard-wrapped ``line`` (both without their line break)."""
    tail = line.rstrip()
    if len(tail) < WRAPPED_LINE_CHARS or tail.endswith(_LINE_CLOSERS) or not next_line.strip():
        return False
    if _ENDS_AT_LINE_END_RE.match(line) or _STARTS_ANEW_RE.match(next_line):
        return False
    return _BULLET_RE.match(next_line, len(next_line) - len(next_line.lstrip())) is None


def _sentence_blocks(text: str, begin: int, stop: int) -> list[tuple[int, int]]:
    """The lines of ``text[begin:stop]``, a hard-wrapped line joined with the line it runs on into (see ``runs_on``).

    A block keeps its inner line breaks, so its clauses are still exact slices of the text.
    """
    lines: list[tuple[int, int]] = []
    line_start = begin
    for brk in _LINE_BREAK_RE.finditer(text, begin, stop):
        lines.append((line_start, brk.start()))
        line_start = brk.end()
    lines.append((line_start, stop))
    blocks = [lines[0]]
    for (prev_lo, prev_hi), (lo, hi) in pairwise(lines):
        if runs_on(text[prev_lo:prev_hi], text[lo:hi]):
            blocks[-1] = (blocks[-1][0], hi)
        else:
            blocks.append((lo, hi))
    return blocks


def segment_turns(text: str, turns: Sequence[Turn], *, max_chars: int = 240) -> list[Segment]:
    """Segment inside each turn only, so no clause crosses a turn boundary; output is in text order."""
    segments: list[Segment] = []
    for turn in sorted(turns, key=lambda t: (t.start, t.end, t.turn_id)):
        segments.extend(_segments(text, max(0, turn.start), min(len(text), turn.end), max_chars, turn.turn_id))
    segments.sort(key=lambda s: (s.start, s.end))
    return segments


def _segment_line(text: str, lo: int, hi: int, max_chars: int, turn_id: str | None) -> list[Segment]:
    """Clauses of one line (or run of wrapped lines) ``text[lo:hi]``."""
    pos = lo
    while pos < hi and text[pos].isspace():
        pos += 1
    bullet = _BULLET_RE.match(text, pos, hi)
    if bullet:
        pos = bullet.end()

    pieces: list[tuple[int, int]] = []
    clause_start = pos
    i = pos
    while i < hi:
        stop = _CLAUSE_CHAR_RE.search(text, i, hi)  # every other character only moves on
        if stop is None:
            break
        i = stop.start()
        ch = text[i]
        if ch == ";" or ch in _CJK_CLAUSE_SEPARATORS:
            pieces.append((clause_start, i))
            clause_start = i = i + 1
            continue
        if ch in _RUN_CHARS:
            j = i + 1
            while j < hi and text[j] in _RUN_CHARS:
                j += 1
            while j < hi and text[j] in _CLOSERS:
                j += 1
            if _ends_sentence(text, i, j, hi, clause_start):
                pieces.append((clause_start, j))
                clause_start = j
            i = j
            continue
        i += 1
    pieces.append((clause_start, hi))

    out: list[Segment] = []
    for ps, pe in pieces:
        for s, e in _split_long(text, ps, pe, max_chars):
            out.append(Segment(s, e, text[s:e], turn_id))
    return out


def _ends_sentence(text: str, i: int, j: int, hi: int, clause_start: int) -> bool:
    """Whether the terminator run ``text[i:j]`` ends a clause."""
    run = text[i:j]
    if any(c in _CJK_TERMINATORS for c in run):
        return True
    at_end = j >= hi
    nxt = "" if at_end else text[j]
    if run[0] in "!?":
        return at_end or not (nxt.isalnum() or nxt == "_")
    if not (at_end or nxt.isspace()):
        return False  # "15.000.000", "v1.2", "a.b@", "done.Next"
    if run == ".":
        word = _ABBREV_WORD_RE.search(text, clause_start, i)
        if word:
            token = word.group(0).lower().lstrip(".")
            if token in _ABBREVIATIONS or len(token) == 1:
                return False  # "e.g.", "Mr.", initials such as "J." or "Q."
    return True


def _split_long(text: str, lo: int, hi: int, max_chars: int) -> list[tuple[int, int]]:
    """Trim a clause; if it is still longer than ``max_chars`` split it at commas."""
    trimmed = _trim(text, lo, hi)
    if trimmed is None:
        return []
    lo, hi = trimmed
    if hi - lo <= max_chars:
        return [(lo, hi)]
    cuts: list[tuple[int, int]] = []
    start = lo
    for k in range(lo, hi):
        ch = text[k]
        if ch in _LONG_CLAUSE_SEPARATORS or (ch == "," and k + 1 < hi and text[k + 1].isspace()):
            cuts.append((start, k))
            start = k + 1
    cuts.append((start, hi))
    return [span for s, e in cuts if (span := _trim(text, s, e)) is not None]


def _trim(text: str, lo: int, hi: int) -> tuple[int, int] | None:
    """Strip whitespace; drop pieces with no letter or digit (stray punctuation, bare bullets)."""
    while lo < hi and text[lo].isspace():
        lo += 1
    while hi > lo and text[hi - 1].isspace():
        hi -= 1
    if _ALNUM_RE.search(text, lo, hi) is None:
        return None
    return lo, hi
