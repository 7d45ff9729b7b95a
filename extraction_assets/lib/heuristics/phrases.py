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
from collections.abc import Iterable

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
