"""What a model's answer may store: bounded titles and values, and no echo of its instructions or of an injection.

A hostile or broken model can return a five-million-character value, the system prompt as a title, or an
instruction planted in the document as an item. Such an item is cut to its bounds and sent to review; it is
never stored as a draft. Heuristic items are the pipeline's own and are not bounded here.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from extraction_assets.lib.models import EvidenceRecord
from extraction_assets.lib.pii import PLACEHOLDER

MAX_TITLE_CHARS = 80  # a title is the matched clause, never a text dump
MAX_STRING_CHARS = 1000  # one value of type string (a clause, a name, a summary line)
MAX_LIST_ITEMS = 50
_SHINGLE_WORDS = 8  # this many consecutive words of the instructions, repeated, is an echo
_WORDS = re.compile(r"\w+")
_INJECTION = re.compile(
    r"(?i)\b(ignore|disregard|forget)\b.{0,40}\b(instructions?|prompt|rules|above)\b|"
    r"\b(system prompt|developer message|you are now|act as)\b|</?\s*document\b|"
    r"\b(reveal|print|show)\b.{0,30}\b(prompt|instructions|secrets?|api key)\b"
)
# what reads as an order to the pipeline or to a reviewer, not as something the document says
_ORDER = re.compile(
    r"(?i)\b(approve|accept|mark|set|make|reject|delete|skip|trust)\b.{0,30}"
    r"\b(every|all|everything|each|items?|status|confidence|review)\b|"
    r"\bauto[- ]?(approved?|accepted)\b|^\W*(approved|accepted|verified)\b\s*:|\bconfidence\s*[:=]?\s*1(\.0+)?\b"
)
_SENTENCE_END = re.compile(r"[.!?\n]")
_NUMBER = re.compile(r"\d(?:[\d,. ]*\d)?")
_CONTENT_WORD = re.compile(r"[^\W\d_]{4,}")
_SUPPORTED_SHARE = 1 / 3  # at least this share of a title's content words stand near its evidence


def bounded_title(title: str) -> str:
    """At most MAX_TITLE_CHARS, cut at a word boundary."""
    title = " ".join(title.split())
    if len(title) <= MAX_TITLE_CHARS:
        return title
    cut = title[: MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "…"


def bound_value(value: Any) -> tuple[Any, list[str]]:
    """The value with every string and list cut to its bound, and what was cut (empty: nothing)."""
    if isinstance(value, str) and len(value) > MAX_STRING_CHARS:
        return value[:MAX_STRING_CHARS], [f"a value of {len(value)} characters (cut to {MAX_STRING_CHARS})"]
    if isinstance(value, list):
        problems = [f"a list of {len(value)} entries (cut to {MAX_LIST_ITEMS})"] if len(value) > MAX_LIST_ITEMS else []
        items = [bound_value(v) for v in value[:MAX_LIST_ITEMS]]
        return [v for v, _ in items], problems + [p for _, ps in items for p in ps]
    if isinstance(value, dict):
        bounded = {k: bound_value(v) for k, v in value.items()}
        return {k: v for k, (v, _) in bounded.items()}, [p for _, ps in bounded.values() for p in ps]
    return value, []


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORDS.findall(text)]
    return {tuple(words[i : i + _SHINGLE_WORDS]) for i in range(len(words) - _SHINGLE_WORDS + 1)}


@functools.lru_cache(maxsize=64)
def _instruction_shingles(instructions: str) -> frozenset[tuple[str, ...]]:
    """A schema's instructions are the same for every item of every document: their shingles are counted once."""
    return frozenset(_shingles(instructions))


def _sentence_around(text: str, start: int, end: int) -> str:
    before = [m.end() for m in _SENTENCE_END.finditer(text, max(0, start - 400), start)]
    after = _SENTENCE_END.search(text, end, end + 400)
    return text[before[-1] if before else max(0, start - 400) : after.end() if after else end + 400]


def unsupported(title: str, context: str) -> str | None:
    """Why the evidence's sentences do not support a model's title, or None: a number of the title that they do
    not hold ("pay 1,000,000 USD" beside evidence about a delivery date), or too few of its content words there."""
    title = PLACEHOLDER.sub(" ", title)
    digits = "".join(ch for ch in context if ch.isdigit())
    missing = [
        n for n in _NUMBER.findall(title) if len(d := "".join(c for c in n if c.isdigit())) > 1 and d not in digits
    ]
    if missing:
        return f"the title's {', '.join(missing)} is not in its evidence"
    words = {w.casefold() for w in _CONTENT_WORD.findall(title)}
    if len(words) >= 3:
        near = context.casefold()
        found = sum(w[:5] in near for w in words)
        if found < len(words) * _SUPPORTED_SHARE:
            return f"{len(words) - found} of the title's {len(words)} words are not near its evidence"
    return None


def suspicious(title: str, value: Any, evidence: list[EvidenceRecord], raw_text: str, instructions: str) -> list[str]:
    """Review reasons for a model's answer that echoes the instructions, reads as an order, stands inside an
    injection-looking sentence, or says what its evidence does not support. What a model writes is data: it never
    becomes a draft on its own say-so."""
    reasons = []
    answer = f"{title} {value}"
    echoed = _shingles(answer) & _instruction_shingles(instructions) if instructions else set()
    context = " ".join(_sentence_around(raw_text, e.char_start, e.char_end) for e in evidence)
    if echoed or _INJECTION.search(answer):
        reasons.append("injection_suspected: the answer repeats the prompt's instructions or an instruction")
    elif _ORDER.search(answer) and not _ORDER.search(context):
        reasons.append("injection_suspected: the answer reads as an order to the pipeline or its reviewers")
    elif any(_INJECTION.search(_sentence_around(raw_text, e.char_start, e.char_end)) for e in evidence):
        reasons.append("injection_suspected: the evidence stands in an instruction-like sentence of the document")
    if evidence and (why := unsupported(title, context)):
        reasons.append(f"unsupported_by_evidence: {why}")
    return reasons
