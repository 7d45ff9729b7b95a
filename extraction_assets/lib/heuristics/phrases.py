"""Keyword phrases as patterns, the one way every pack writes them (as Presidio's recognizers share one builder).

A phrase is matched against `normalize_for_match` text and is normalized the same way; its words match across any
whitespace; it is bounded where its first or last character is a word character (a phrase in CJK, which has no
spaces between words, is not); `a ... b` is `a`, then up to 60 characters, then `b`; a word ending in `*` is a stem
(`terminat*`). A word list is one alternation, longest phrase first, each alternative opening with a literal so the
regex engine skips to the positions holding a first letter. Negation (a keyword right after "not", "không", "不")
is `negation.py`'s.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import NamedTuple

from extraction_assets.lib.heuristics.segments import normalize_for_match

KEYWORD_GAP = "..."  # "a ... b": "a", then up to 60 characters of the same clause, then "b"
_GAP = r"(?!\w).{1,60}?(?<!\w)"
_CJK_CHAR_RE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_NOTHING = r"(?!x)x"


def phrase_source(phrase: str) -> str:
    """The regex source of one phrase: to join into a larger pattern, or to compile when first needed (compiling is
    most of what a pack's import costs)."""
    norm = normalize_for_match(phrase).strip()
    body = _GAP.join(r"\s+".join(_word(w) for w in part.split()) for part in norm.split(KEYWORD_GAP))
    core = norm.replace("*", "")
    if not core or _CJK_CHAR_RE.search(norm):
        return body
    right = r"(?!\w)" if core[-1].isalnum() else ""
    if not core[0].isalnum():
        return body + right
    if body[:1].isalnum():  # "(?<!\w)t..." as "t(?<!\wt)...": the same test, opening with a literal
        return body[0] + rf"(?<!\w{body[0]})" + body[1:] + right
    return r"(?<!\w)" + body + right


def _word(word: str) -> str:
    return re.escape(word[:-1]) + r"\w*" if word.endswith("*") and len(word) > 1 else re.escape(word)


def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """One phrase, compiled."""
    return re.compile(phrase_source(phrase))


def any_phrase_source(phrases: Iterable[str]) -> str:
    """The source of one alternation over `phrases`, longest first (a phrase that holds another wins at the same
    place); an empty list matches nothing."""
    unique: dict[str, str] = {}  # normalized -> the phrase as first written
    for phrase in phrases:
        if norm := normalize_for_match(phrase).strip():
            unique.setdefault(norm, phrase)
    ordered = sorted(unique.items(), key=lambda pair: len(pair[0]), reverse=True)
    if not ordered:
        return _NOTHING
    return "|".join(f"(?:{phrase_source(p)})" for _, p in ordered)


def any_phrase(phrases: Iterable[str]) -> re.Pattern[str]:
    """One alternation over `phrases`, compiled: the text is scanned once per word list."""
    return re.compile(any_phrase_source(phrases))


def phrase_needle(phrase: str) -> str:
    """The longest word of a phrase, normalized (a stem without its `*`): every match of the phrase contains it."""
    return max(normalize_for_match(phrase).replace(KEYWORD_GAP, " ").replace("*", "").split(), key=len)


_WORD_RUN = re.compile(r"\w+")
LONG_WORD = 6  # an opening word this long is found with `str.find` (`PhraseScan._word_starts`)


class Opening(NamedTuple):
    """Where every match of a phrase opens: at the start of a word of the text that is `word` (or, for a `stem`,
    begins with it), followed by whitespace and a word beginning with `then` when `then` is not empty."""

    word: str
    stem: bool
    then: str


def phrase_opening(phrase: str) -> Opening | None:
    """The opening of every match of the phrase (`Opening`); None when a match may open elsewhere (a phrase opening
    with a sign, a phrase in CJK)."""
    norm = normalize_for_match(phrase).strip()
    first = norm.split(KEYWORD_GAP)[0].split()
    if not first or _CJK_CHAR_RE.search(norm) or not first[0][:1].isalnum():
        return None
    stem = first[0].endswith("*") and len(first[0]) > 1
    word = first[0][:-1] if stem else first[0]
    lead = _WORD_RUN.match(word)
    if lead is None:
        return None
    whole = lead.group() == word  # the first word is all word characters: whitespace follows it in a match
    then = _WORD_RUN.match(first[1]) if whole and not stem and len(first) > 1 else None
    return Opening(lead.group(), stem and whole, then.group() if then else "")


class PhraseScan:
    """`any_phrase(phrases).finditer` over one text, tried only where a phrase of the list can open.

    The alternation of a word list has no literal prefix, so the regex engine tries the list at nearly every position
    of the text: a contract read with a dozen lists spent most of its time there. A phrase that opens with a word
    character opens at the start of a word of the text (its `(?<!\\w)`), and that word is the phrase's first word
    (or begins with it, for a stem) up to the end of the text. Each first word is found once per text by a pattern
    that opens with it (a literal the engine skips to); the list's pattern is then matched only where one of its
    first words stands, in text order and from where the last match ended, as `finditer` does. A list with a phrase
    that can open anywhere else (`phrase_opening`), and a window that ends before the text (a word cut there may
    still match), are searched with the pattern itself."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._words: dict[Opening, list[int]] = {}
        self._starts: dict[tuple[str, ...], list[int] | None] = {}

    def finditer(self, phrases: tuple[str, ...], lo: int = 0, hi: int | None = None) -> Iterator[re.Match[str]]:
        pattern = _any_phrase(phrases)
        text = self.text
        hi = len(text) if hi is None else hi
        starts = self._list_starts(phrases) if hi == len(text) else None
        if starts is None:
            yield from pattern.finditer(text, lo, hi)
            return
        pos = lo
        for start in starts[bisect_left(starts, lo) :]:
            if start < pos:
                continue
            if (m := pattern.match(text, start, hi)) is not None:
                yield m
                pos = m.end()

    def _list_starts(self, phrases: tuple[str, ...]) -> list[int] | None:
        if phrases not in self._starts:
            openings = _openings(phrases)
            places: set[int] = set()
            for opening in openings or ():
                places.update(self._word_starts(opening))
            self._starts[phrases] = None if openings is None else sorted(places)
        return self._starts[phrases]

    def _word_starts(self, opening: Opening) -> list[int]:
        """Where the opening stands in the text."""
        if opening not in self._words:
            self._words[opening] = _opening_starts(self.text, opening)
        return self._words[opening]


def _opening_starts(text: str, opening: Opening) -> list[int]:
    """Where `_word_pattern(*opening)` matches in the text. A word of `LONG_WORD` characters or more is found with
    `str.find` and the pattern matched only there (over the bench inbox, a fifth less time than the engine's search for
    the literal); a shorter one stands inside too many other words ("a", "in", "to"), so its pattern searches. A match
    is the word after no word character, and the word is word characters alone: two matches never overlap, so both
    give the places `finditer` would."""
    pattern = _word_pattern(*opening)
    if len(opening.word) < LONG_WORD:
        return [m.start() for m in pattern.finditer(text)]
    starts: list[int] = []
    at = text.find(opening.word)
    while at != -1:
        if pattern.match(text, at) is not None:
            starts.append(at)
        at = text.find(opening.word, at + 1)
    return starts


@lru_cache(maxsize=256)
def _openings(phrases: tuple[str, ...]) -> frozenset[Opening] | None:
    """The opening words of a list's phrases (`phrase_opening`); None when one phrase can open elsewhere."""
    openings = [phrase_opening(p) for p in phrases if normalize_for_match(p).strip()]
    return None if None in openings else frozenset(o for o in openings if o is not None)


@lru_cache(maxsize=1024)
def _word_pattern(word: str, stem: bool, then: str) -> re.Pattern[str]:
    """The opening (`Opening`), as a pattern that opens with its word (a literal the engine skips to)."""
    escaped = re.escape(word)
    follows = rf"(?=\s+{re.escape(then)})" if then else "" if stem else r"(?!\w)"
    return re.compile(rf"{escaped}(?<!\w{escaped}){follows}")


_any_phrase = lru_cache(maxsize=256)(any_phrase)


def prepare(phrases: tuple[str, ...]) -> None:
    """Compile what `PhraseScan.finditer` compiles for a word list at its first use (the list's alternation and the
    patterns of its opening words), so a warm process pays it before its first document, not on it."""
    _any_phrase(phrases)
    for opening in _openings(phrases) or ():
        _word_pattern(*opening)
