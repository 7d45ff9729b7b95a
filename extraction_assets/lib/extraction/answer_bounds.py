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
_SENTENCE_END = re.compile(r"[.!?\n]")


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


def suspicious(title: str, value: Any, evidence: list[EvidenceRecord], raw_text: str, instructions: str) -> list[str]:
    """Review reasons for an answer that echoes the instructions or stands inside an injection-looking sentence."""
    reasons = []
    answer = f"{title} {value}"
    echoed = _shingles(answer) & _instruction_shingles(instructions) if instructions else set()
    if echoed or _INJECTION.search(answer):
        reasons.append("injection_suspected: the answer repeats the prompt's instructions or an instruction")
    elif any(_INJECTION.search(_sentence_around(raw_text, e.char_start, e.char_end)) for e in evidence):
        reasons.append("injection_suspected: the evidence stands in an instruction-like sentence of the document")
    return reasons
