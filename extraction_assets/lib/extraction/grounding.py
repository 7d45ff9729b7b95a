"""Locate an extractor's evidence quote in the source text and compute trustworthy offsets.

Extractors (keyword heuristics or LLMs) hand back an ``evidence_span`` that should be a verbatim quote.
Offsets they report are never trusted: grounding searches the source itself with a cascade
exact -> normalized -> fuzzy, so every stored span is a real slice of the text, and the match kind
records how much the quote had to be bent to fit. Every match respects token boundaries (runs of letters,
runs of digits): "Napro" is not evidence in "Naprosyn", nor "$100" in "$1000", while "4.00" is in "RM4.00".
CJK ideographs and kana are tokens of their own, since those scripts write no spaces.

All offsets are Python ``str`` indices (code points), so they stay right on Vietnamese, Russian or
Chinese text, where byte offsets would drift.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from itertools import compress, pairwise

from rapidfuzz import fuzz

from extraction_assets.lib.models import Grounding, Turn

# Quotes shorter than this (after normalization) are only grounded exactly or normalized:
# a fuzzy match on a handful of characters proves nothing.
MIN_FUZZY_CHARS = 12
# The aligned source span must be comparable in length to the quote, so a long claim cannot
# ground on a short fragment that happens to match (LangExtract #289).
MIN_SPAN_RATIO = 0.75
MAX_SPAN_RATIO = 1.33
# Above this many characters, and with a hint, the fuzzy search only looks near the hint.
LONG_TEXT_CHARS = 20_000
FUZZY_WINDOW_RADIUS = 4_000
# Snapping to word boundaries gives up on a side when the "word" is longer than this
# (URLs, scripts without spaces), rather than swallowing a paragraph.
MAX_SNAP_CHARS = 30

_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_CHAR_MAP: dict[str, str] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    "\u2026": "...",
}


@lru_cache(maxsize=64)
def _normalize_spans(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """Normalize ``text``; for each output char keep the original [start, end) it came from.

    Cached because one document's text is grounded against many items.
    Characters are processed in clusters (a base character plus its combining marks) so that
    decomposed input (common in Vietnamese) composes under NFKC just like the whole string would,
    and the end map lets a match cover the full cluster in the original.
    """
    return _normalize_ascii_spans(text) if text.isascii() else _normalize_clusters(text)


def _normalize_clusters(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """`_normalize_spans` of any text: runs of ASCII as `_fold_ascii` reads them, every other character cluster by
    cluster (a contract with a few curly quotes is mostly ASCII)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    n = len(text)
    i = 0
    while i < n:
        if text[i].isascii():
            j = _ASCII_CHUNK.match(text, i).end()  # type: ignore[union-attr]
            if j < n and _joins_cluster(text[j]):
                j -= 1  # the run's last character heads a cluster: "e" + U+0301 is "é"
            if j > i:
                _fold_ascii(text, i, j, out, starts, ends)
                i = j
                continue
        ch = text[i]
        if ch in _ZERO_WIDTH:
            i += 1
            continue
        j = i + 1
        while j < n and _joins_cluster(text[j]):
            j += 1
        cluster = "".join(c for c in text[i:j] if c not in _ZERO_WIDTH)
        folded = unicodedata.normalize("NFKC", cluster).casefold()
        for folded_char in folded:
            piece = _CHAR_MAP.get(folded_char, folded_char)
            if piece.isspace():
                if not out or out[-1] == " ":
                    continue  # collapse runs; never lead with a space
                piece = " "
            for c in piece:
                out.append(c)
                starts.append(i)
                ends.append(j)
        i = j
    return _finish(out, starts, ends)


def _joins_cluster(ch: str) -> bool:
    """A combining mark or a zero-width character belongs to the cluster of the character before it."""
    return bool(unicodedata.combining(ch)) or ch in _ZERO_WIDTH


_ASCII_SPACE = re.escape("".join(c for c in map(chr, range(128)) if c.isspace()))
_ASCII_SPACES = re.compile(f"[{_ASCII_SPACE}]+")
_ASCII_CHUNK = re.compile(r"[\x00-\x7f]+")
# ASCII as bytes: 1 for a character that is not whitespace, 0 for one that is.
_NOT_SPACE = bytes(0 if chr(b).isspace() else 1 for b in range(256))  # (a translation table has 256 entries)


def _normalize_ascii_spans(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """`_normalize_spans` of ASCII text, in one run (long contracts are mostly ASCII)."""
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    _fold_ascii(text, 0, len(text), out, starts, ends)
    return _finish(out, starts, ends)


def _fold_ascii(text: str, lo: int, hi: int, out: list[str], starts: list[int], ends: list[int]) -> None:
    """Normalize the ASCII ``text[lo:hi]`` onto ``out``: NFKC changes no ASCII character and casefold lowers it, so
    only whitespace runs change (one space, and none after a space or at the start). A character stays where it is
    no whitespace or where it opens a whitespace run, and the maps are the positions of the characters that stay,
    picked in C (`itertools.compress`) rather than word by word (a long contract's grounding took milliseconds)."""
    if lo == hi:
        return
    lowered = text[lo:hi].lower()
    not_space = lowered.encode("ascii").translate(_NOT_SPACE)
    # a character stays when it is no whitespace or the character before it is none (the first: the output so far)
    before = b"\x01" if out and out[-1] != " " else b"\x00"
    stays = (int.from_bytes(not_space, "big") | int.from_bytes(before + not_space[:-1], "big")).to_bytes(
        len(not_space), "big"
    )
    folded = _ASCII_SPACES.sub(" ", lowered)
    if not stays[0]:  # a leading whitespace run the output drops
        folded = folded[1:]
    if folded.endswith(" "):  # a trailing space is an element of its own: the next run and `_finish` look for it
        out.extend((folded[:-1], " ") if len(folded) > 1 else (" ",))
    elif folded:
        out.append(folded)
    starts.extend(compress(range(lo, hi), stays))
    ends.extend(compress(range(lo + 1, hi + 1), stays))


def _finish(out: list[str], starts: list[int], ends: list[int]) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """The normalized text and its maps, without a trailing space."""
    if out and out[-1] == " ":
        out.pop()
        starts.pop()
        ends.pop()
    return "".join(out), tuple(starts), tuple(ends)


def normalize_with_map(text: str) -> tuple[str, list[int]]:
    """Normalized form of ``text`` used for matching, plus the original index of each normalized char.

    Normalization: NFKC, casefold, whitespace runs -> one space (trimmed at both ends), curly quotes and
    guillemets -> straight quotes, dashes -> "-", "…" -> "...", zero-width characters and soft hyphens removed.
    The map is non-decreasing and every entry is a valid index into ``text``.
    """
    normalized, starts, _ = _normalize_spans(text)
    return normalized, list(starts)


def _nearest(positions: Sequence[int], hint: int | None) -> int:
    """The position closest to ``hint`` (earliest on ties), or the first when there is no hint."""
    if hint is None:
        return positions[0]
    return min(positions, key=lambda p: (abs(p - hint), p))


def _find_all(haystack: str, needle: str) -> list[int]:
    """Start offsets of every (possibly overlapping) occurrence of ``needle``."""
    found: list[int] = []
    pos = haystack.find(needle)
    while pos != -1:
        found.append(pos)
        pos = haystack.find(needle, pos + 1)
    return found


def _is_word_char(ch: str) -> bool:
    """Characters a word is made of; CJK ideographs and kana are excluded since those scripts have no spaces."""
    if ch == "_" or unicodedata.combining(ch):
        return True
    if not ch.isalnum():
        return False
    name = unicodedata.name(ch, "")
    return not name.startswith(("CJK ", "HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA"))


def _splits_word(s: str, pos: int) -> bool:
    """Whether a span edge at ``pos`` would cut a token of ``s`` in two.

    A token is a run of letters or a run of digits (as in LangExtract's tokenizer), so "4.00" is a token
    of "RM4.00" and "03-04-06" of "HD03-04-06", while "Napro" is no token of "Naprosyn" nor "100" of "1000".
    """
    if not 0 < pos < len(s) or not _is_word_char(s[pos - 1]) or not _is_word_char(s[pos]):
        return False
    return s[pos - 1].isdigit() == s[pos].isdigit()


def _on_token_boundaries(s: str, start: int, end: int) -> bool:
    return not _splits_word(s, start) and not _splits_word(s, end)


def _edge_candidates(s: str, pos: int) -> list[int]:
    """Token edges near ``pos``: the nearest one at or before it and the two nearest after it.

    "After" skips whitespace, so a candidate never leaves the span starting or ending on a space. Within a word
    longer than ``MAX_SNAP_CHARS`` (a URL, a script without spaces) ``pos`` itself is kept.
    """
    edges = [
        p for p in range(max(0, pos - MAX_SNAP_CHARS), min(len(s), pos + MAX_SNAP_CHARS) + 1) if not _splits_word(s, p)
    ]
    before = [p for p in edges if p <= pos][-1:]
    after = [p for p in edges if p > pos][:2]
    return before + after or [pos]


def _best_token_span(nquote: str, s: str, start: int, end: int) -> tuple[int, int, float] | None:
    """The token-aligned span near [start, end) that reads most like the quote, with its similarity (0-100).

    The aligner's window is as long as the quote, so it may cut a word or take in a neighbouring one
    ("with degenerative disc disease" for "mild degenerative disc disease"); each edge may widen to the
    word it cuts or give up the word it took in, and the candidate most similar to the quote as a whole wins
    (ties: the one closest to the aligner's window).
    """
    best: tuple[float, int, int, int] | None = None
    for a in _edge_candidates(s, start):
        for b in _edge_candidates(s, end):
            while a < b and s[a].isspace():
                a += 1
            while b > a and s[b - 1].isspace():
                b -= 1
            if not MIN_SPAN_RATIO * len(nquote) <= b - a <= MAX_SPAN_RATIO * len(nquote):
                continue
            score = fuzz.ratio(nquote, s[a:b])
            key = (score, -(abs(a - start) + abs(b - end)), a, b)
            if best is None or key[:2] > best[:2]:
                best = key
    return None if best is None else (best[2], best[3], best[0])


def _ground_exact(quote: str, text: str, hint: int | None) -> Grounding | None:
    positions = [p for p in _find_all(text, quote) if _on_token_boundaries(text, p, p + len(quote))]
    if not positions:
        return None
    start = _nearest(positions, hint)
    return Grounding(start=start, end=start + len(quote), match_kind="exact", strength="strong", score=100.0)


def _ground_normalized(
    nquote: str, ntext: str, starts: Sequence[int], ends: Sequence[int], hint: int | None
) -> Grounding | None:
    positions = [p for p in _find_all(ntext, nquote) if _on_token_boundaries(ntext, p, p + len(nquote))]
    if not positions:
        return None
    by_original = {starts[p]: p for p in reversed(positions)}
    start = _nearest(sorted(by_original), hint)
    nstart = by_original[start]
    end = ends[nstart + len(nquote) - 1]
    return Grounding(start=start, end=end, match_kind="normalized", strength="medium", score=100.0)


def _ground_fuzzy(
    nquote: str,
    ntext: str,
    starts: Sequence[int],
    ends: Sequence[int],
    text_len: int,
    hint: int | None,
    min_score: float,
) -> Grounding | None:
    if len(nquote) < MIN_FUZZY_CHARS:
        return None
    lo, hi = 0, len(ntext)
    if hint is not None and text_len > LONG_TEXT_CHARS:
        radius = FUZZY_WINDOW_RADIUS + 2 * len(nquote)
        lo = bisect.bisect_left(starts, hint - radius)
        hi = bisect.bisect_right(starts, hint + radius)
    window = ntext[lo:hi]
    if len(window) < MIN_SPAN_RATIO * len(nquote):
        return None
    alignment = fuzz.partial_ratio_alignment(nquote, window, score_cutoff=min_score)
    if alignment is None or alignment.score < min_score:
        return None
    span = _best_token_span(nquote, ntext, lo + alignment.dest_start, lo + alignment.dest_end)
    if span is None or span[2] < min_score:
        return None
    nstart, nend, score = span
    return Grounding(start=starts[nstart], end=ends[nend - 1], match_kind="fuzzy", strength="weak", score=score)


def ground(quote: str, text: str, hint: int | None = None, min_fuzzy_score: float = 90.0) -> Grounding | None:
    """Find ``quote`` in ``text`` and return offsets computed from ``text`` itself, or None.

    Cascade: exact (strong) -> normalized (medium) -> fuzzy (weak, long quotes only, with length gates).
    ``hint`` is an offset near where the extractor saw the quote; it breaks ties between occurrences
    and, for very long texts, bounds the fuzzy search. It is never used as an offset by itself.
    """
    quote = quote.strip()
    if not quote or not text:
        return None
    exact = _ground_exact(quote, text, hint)
    if exact is not None:
        return exact
    nquote, _, _ = _normalize_spans(quote)
    if not nquote:
        return None
    ntext, starts, ends = _normalize_spans(text)
    normalized = _ground_normalized(nquote, ntext, starts, ends, hint)
    if normalized is not None:
        return normalized
    return _ground_fuzzy(nquote, ntext, starts, ends, len(text), hint, min_fuzzy_score)


def turn_for_span(turns: Sequence[Turn], start: int, end: int) -> str | None:
    """The turn a span belongs to, so an item can be attributed to a speaker or a pulse question.

    Prefers a turn that contains ``start``; otherwise the turn overlapping [start, end) most.
    None when there are no turns or the span lies outside all of them (e.g. a header line):
    guessing a speaker would be worse than leaving it unattributed.
    """
    end = max(end, start)
    best: str | None = None
    best_key: tuple[int, int] | None = None
    for turn in turns:
        contains = turn.start <= start < turn.end
        overlap = min(end, turn.end) - max(start, turn.start)
        if not contains and overlap <= 0:
            continue
        key = (1 if contains else 0, overlap)
        if best_key is None or key > best_key:
            best, best_key = turn.turn_id, key
    return best


class TurnIndex:
    """`turn_for_span` for the many spans of one document. Turns in text order that do not overlap (what the readers
    make: a transcript has hundreds) are narrowed by bisection to those the span can touch; any other list is
    searched turn by turn."""

    def __init__(self, turns: Sequence[Turn]) -> None:
        self._turns = list(turns)
        self._starts = [t.start for t in self._turns]
        self._ends = [t.end for t in self._turns]
        self._ordered = all(t.start <= t.end for t in self._turns) and all(
            a.end <= b.start for a, b in pairwise(self._turns)
        )

    def turn_for_span(self, start: int, end: int) -> str | None:
        if not self._ordered:
            return turn_for_span(self._turns, start, end)
        end = max(end, start)
        lo = bisect.bisect_right(self._ends, start)  # the first turn ending after the span starts
        hi = bisect.bisect_left(self._starts, max(end, start + 1))  # the first starting at or after its end
        return turn_for_span(self._turns[lo:hi], start, end)
