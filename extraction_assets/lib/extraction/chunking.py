"""Long scrubbed documents -> overlapping chunks a model can read whole, cut where a reader would pause.

A document longer than the schema's `max_input_chars` is cut at the last paragraph break that fits, else the
last sentence end, else the last space, never inside a PII placeholder (`[PHONE_1]` stays whole). Each next
chunk starts `chunk_overlap_chars` before the previous end, moved forward to a sentence or word start, so a
statement cut by one boundary is whole in the next chunk. Offsets are those of the scrubbed text, so a
chunk's quote is grounded in the whole document and mapped to raw offsets as any other quote.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from extraction_assets.lib.models import ExtractionInput

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"(?<=[.!?;:\u3002\uff01\uff1f])\s+|\n\s*")
_SPACE = re.compile(r"\s+")
_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z_]*_\d+\]")
MIN_FILL = 0.5  # a cut is looked for in the second half of the window only, so chunks stay near the limit


@dataclass(frozen=True)
class Chunk:
    """One piece of a document's scrubbed text: `text == full_text[start:end]`."""

    index: int
    count: int
    start: int
    end: int
    text: str


class _Cuts:
    """Positions a chunk may end at (after a paragraph break, a sentence end, a space), by preference."""

    def __init__(self, text: str) -> None:
        blocked = [m.span() for m in _PLACEHOLDER.finditer(text)]
        self._blocked_starts = [s for s, _ in blocked]
        self._blocked = blocked
        self.levels = [self._ends(pattern, text) for pattern in (_PARAGRAPH, _SENTENCE, _SPACE)]

    def _ends(self, pattern: re.Pattern[str], text: str) -> list[int]:
        return [m.end() for m in pattern.finditer(text) if not self.inside_placeholder(m.end())]

    def inside_placeholder(self, pos: int) -> bool:
        i = bisect.bisect_right(self._blocked_starts, pos - 1) - 1
        return i >= 0 and self._blocked[i][0] < pos < self._blocked[i][1]

    def outside_placeholder(self, pos: int, forward: bool) -> int:
        """`pos`, or the nearest position before (or after) it that splits no placeholder."""
        i = bisect.bisect_right(self._blocked_starts, pos - 1) - 1
        if i >= 0 and self._blocked[i][0] < pos < self._blocked[i][1]:
            return self._blocked[i][1] if forward else self._blocked[i][0]
        return pos

    def last_cut(self, low: int, high: int) -> int | None:
        """The preferred cut in (low, high]: the last paragraph break, else sentence end, else space."""
        for ends in self.levels:
            i = bisect.bisect_right(ends, high) - 1
            if i >= 0 and ends[i] > low:
                return ends[i]
        return None

    def first_start(self, low: int, high: int) -> int | None:
        """The first sentence (else word) start in [low, high): where an overlap begins."""
        for ends in self.levels[1:]:
            i = bisect.bisect_left(ends, low)
            if i < len(ends) and ends[i] < high:
                return ends[i]
        return None


def split_chunks(text: str, max_chars: int, overlap: int) -> list[Chunk]:
    """The whole text as one chunk when it fits, else overlapping chunks of at most `max_chars` characters."""
    if len(text) <= max_chars:
        return [Chunk(0, 1, 0, len(text), text)]
    overlap = min(
        overlap, max_chars // 4
    )  # as the schema allows: each chunk moves on by a quarter of the limit or more
    cuts = _Cuts(text)
    spans: list[tuple[int, int]] = []
    start = 0
    while True:
        if len(text) - start <= max_chars:
            spans.append((start, len(text)))
            break
        limit = start + max_chars
        end = cuts.last_cut(start + int(max_chars * MIN_FILL), limit)
        if end is None:
            end = cuts.outside_placeholder(limit, forward=False)
            if end <= start:  # a placeholder as long as the window: keep it whole
                end = cuts.outside_placeholder(limit, forward=True)
        spans.append((start, end))
        wanted = max(end - overlap, start + 1)
        next_start = cuts.first_start(wanted, end)
        start = next_start if next_start is not None else cuts.outside_placeholder(wanted, forward=True)
    return [Chunk(i, len(spans), s, e, text[s:e]) for i, (s, e) in enumerate(spans)]


def chunk_input(doc: ExtractionInput, chunk: Chunk) -> ExtractionInput:
    """What the model sees for one chunk: its text, and the turns it overlaps re-based onto it."""
    if chunk.count == 1:
        return doc
    turns = [
        turn.model_copy(
            update={"start": max(turn.start, chunk.start) - chunk.start, "end": min(turn.end, chunk.end) - chunk.start}
        )
        for turn in doc.turns
        if turn.start < chunk.end and turn.end > chunk.start
    ]
    return doc.model_copy(update={"text": chunk.text, "turns": turns})
