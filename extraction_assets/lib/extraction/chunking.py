"""Long scrubbed documents -> overlapping chunks a model can read whole, cut where a reader would pause.

A document longer than the schema's `max_input_chars` is cut at the strongest break in the second half of the
window: the last paragraph break, else the last change of speaker, else the last turn start (turns as the reader
found them: transcript lines, chat messages, e-mail parts), else the last sentence end, else the last space;
never inside a PII placeholder (`[PHONE_1]` stays whole). Each next chunk starts `chunk_overlap_chars` before
the previous end, moved back to the start of the turn it falls in when that turn started no more than another
overlap earlier (a turn is read whole), else forward to a sentence or word start, so a statement cut by one
boundary is whole in the next chunk. Offsets are those of the scrubbed text, so a chunk's quote is grounded in
the whole document and mapped to raw offsets as any other quote.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from extraction_assets.lib.models import ExtractionInput, Turn

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
    """Positions a chunk may end at (after a paragraph break, at a change of speaker, at a turn start, after a
    sentence end, after a space), by preference."""

    def __init__(self, text: str, turns: Sequence[Turn] = ()) -> None:
        blocked = [m.span() for m in _PLACEHOLDER.finditer(text)]
        self._blocked_starts = [s for s, _ in blocked]
        self._blocked = blocked
        ordered = sorted(turns, key=lambda t: t.start)
        self.turn_starts = sorted({t.start for t in ordered if 0 < t.start < len(text)})
        changes = itertools.pairwise(ordered)
        speakers = sorted({t.start for before, t in changes if t.speaker != before.speaker and t.start < len(text)})
        self.levels = [
            self._ends(_PARAGRAPH, text),
            speakers,
            self.turn_starts,
            self._ends(_SENTENCE, text),
            self._ends(_SPACE, text),
        ]

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

    def overlap_start(self, wanted: int, earliest: int, high: int) -> int | None:
        """Where an overlap begins: the start of the turn `wanted` falls in, if it is not before `earliest`, else
        the first sentence (else word) start in [wanted, high)."""
        i = bisect.bisect_right(self.turn_starts, wanted) - 1
        if i >= 0 and self.turn_starts[i] >= earliest:
            return self.turn_starts[i]
        for ends in self.levels[3:]:
            i = bisect.bisect_left(ends, wanted)
            if i < len(ends) and ends[i] < high:
                return ends[i]
        return None


def document_chunks(doc: ExtractionInput, max_chars: int, overlap: int) -> list[Chunk]:
    """A document's chunks, cut at its own turns where it has them."""
    return split_chunks(doc.text, max_chars, overlap, doc.turns)


def split_chunks(text: str, max_chars: int, overlap: int, turns: Sequence[Turn] = ()) -> list[Chunk]:
    """The whole text as one chunk when it fits, else overlapping chunks of at most `max_chars` characters."""
    if len(text) <= max_chars:
        return [Chunk(0, 1, 0, len(text), text)]
    overlap = min(overlap, max_chars // 4)  # as the schema allows: each chunk moves on by a quarter of the limit
    cuts = _Cuts(text, turns)
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
        earliest = max(end - 2 * overlap, start + max_chars // 4)  # a whole turn, still moving on
        next_start = cuts.overlap_start(wanted, earliest, end)
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
