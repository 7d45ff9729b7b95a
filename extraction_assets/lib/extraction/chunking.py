"""Long scrubbed documents -> overlapping chunks a model can read whole, cut where a reader would pause.

The evidence an item quotes is a turn or a sentence, so a document with turns (transcript lines, chat and session
messages, e-mail parts, as the reader found them) is cut between turns only, at a change of speaker where one
falls in the window's second half: a turn no longer than a chunk is never cut. Prose, and a turn longer than a
chunk alone, is cut at the last paragraph break of the window's second half, else sentence end, else space; never
inside a PII placeholder (`[PHONE_1]` stays whole). Each next chunk starts `chunk_overlap_chars` before the
previous end: at the first whole turn there that leaves room for the turn after the cut to be read whole, or in
prose at a sentence (else word) start. Offsets are those of the scrubbed text, so a chunk's quote is grounded in
the whole document and mapped to raw offsets as any other quote.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from extraction_assets.lib.models import ExtractionInput, Turn
from extraction_assets.lib.pii import PLACEHOLDER

_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE = re.compile(r"(?<=[.!?;:\u3002\uff01\uff1f])\s+|\n\s*")
_SPACE = re.compile(r"\s+")
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
    """Where a chunk may end and the next begin. A document with turns (a transcript's lines, a session's
    messages, an e-mail's parts) is cut at turn starts only, a change of speaker preferred; prose at a paragraph
    break, else a sentence end, else a space; a turn longer than a chunk alone is cut as prose is. No cut splits a
    placeholder."""

    def __init__(self, text: str, turns: Sequence[Turn] = ()) -> None:
        blocked = [m.span() for m in PLACEHOLDER.finditer(text)]
        self._blocked_starts = [s for s, _ in blocked]
        self._blocked = blocked
        ordered = sorted(turns, key=lambda t: t.start)
        self.turn_starts = sorted({t.start for t in ordered if 0 < t.start < len(text)})
        self._turn_ends = [t.end for t in ordered]  # by start, as `_starts`
        self._starts = [t.start for t in ordered]
        self._boundaries = sorted({t.start for t in ordered} | set(self._turn_ends))
        boundaries = [b for b in self._boundaries if 0 < b < len(text)]
        changes = itertools.pairwise(ordered)
        speakers = sorted({t.start for before, t in changes if t.speaker != before.speaker and t.start < len(text)})
        self.turn_levels = [speakers, boundaries] if boundaries else []
        self.prose_levels = [self._ends(_PARAGRAPH, text), self._ends(_SENTENCE, text), self._ends(_SPACE, text)]
        self.length = len(text)

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

    def cut(self, start: int, done: int, max_chars: int) -> int:
        """Where the chunk starting at `start` ends: after `done` (the previous chunk's end: each chunk reads
        something new) and within `max_chars`, at the last preferred cut of the window's second half; with turns,
        at any later turn start rather than inside a turn; else as prose; else at the limit."""
        limit = start + max_chars
        low = max(start + int(max_chars * MIN_FILL), done)
        for levels, floor in ((self.turn_levels, low), (self.turn_levels[-1:], done), (self.prose_levels, low)):
            for ends in levels:
                i = bisect.bisect_right(ends, limit) - 1
                if i >= 0 and ends[i] > floor:
                    return ends[i]
        end = self.outside_placeholder(limit, forward=False)
        return end if end > done else self.outside_placeholder(limit, forward=True)  # a placeholder held whole

    def next_start(self, end: int, overlap: int, max_chars: int, start: int) -> int:
        """Where the chunk after one ending at `end` begins, `overlap` earlier: at the first whole turn that leaves
        room for the turn at `end` to be read whole too (else at `end`), or in prose (or inside a long turn) at the
        first sentence (else word) start of the overlap."""
        wanted = max(end - overlap, start + 1)
        at = bisect.bisect_left(self._boundaries, end)
        if at < len(self._boundaries) and self._boundaries[at] == end:  # between turns
            following = bisect.bisect_left(self._starts, end)
            following_end = self._turn_ends[following] if following < len(self._starts) else self.length
            i = bisect.bisect_left(self.turn_starts, max(wanted, following_end - max_chars))
            return self.turn_starts[i] if i < len(self.turn_starts) and self.turn_starts[i] <= end else end
        for ends in self.prose_levels[1:]:
            i = bisect.bisect_left(ends, wanted)
            if i < len(ends) and ends[i] < end:
                return ends[i]
        return self.outside_placeholder(wanted, forward=True)


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
    start = done = 0
    while len(text) - start > max_chars:
        end = cuts.cut(start, done, max_chars)
        spans.append((start, end))
        start, done = cuts.next_start(end, overlap, max_chars, start), end
    spans.append((start, len(text)))
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
