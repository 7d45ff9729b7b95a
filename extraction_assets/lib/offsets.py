"""The offset map between raw text and scrubbed text.

Extractors only ever see scrubbed text, but evidence must point into the raw
document. Scrubbing replaces some spans with placeholders of another length, so
every offset has to be translated; this module owns that translation and nothing
else.

Mapping rule (both directions): outside replacements the shift is linear; a span
boundary that falls inside a replacement snaps outwards, the start to the
replacement's start and the end to its end, so a mapped span always covers whole
replacements and never cuts a masked value (or a placeholder) in half.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator


class Replacement(BaseModel):
    """One raw span `[raw_start, raw_end)` shown as `placeholder` at `[scrub_start, scrub_end)`."""

    model_config = ConfigDict(frozen=True)

    kind: str
    raw_start: int
    raw_end: int
    scrub_start: int
    scrub_end: int
    placeholder: str


def _map_start(pos: int, src_starts: list[int], src_ends: list[int], dst_starts: list[int], dst_ends: list[int]) -> int:
    """Map a span start: inside a replacement it snaps to the replacement's start."""
    i = bisect_right(src_starts, pos) - 1
    if i < 0:
        return pos
    if pos < src_ends[i]:
        return dst_starts[i]
    return pos + dst_ends[i] - src_ends[i]


def _map_end(pos: int, src_starts: list[int], src_ends: list[int], dst_starts: list[int], dst_ends: list[int]) -> int:
    """Map a span end: inside a replacement it snaps to the replacement's end."""
    i = bisect_left(src_starts, pos) - 1
    if i < 0:
        return pos
    if pos <= src_ends[i]:
        return dst_ends[i]
    return pos + dst_ends[i] - src_ends[i]


class OffsetMap(BaseModel):
    """Sorted, non-overlapping replacements; lookups are O(log n) with bisect."""

    model_config = ConfigDict(frozen=True)

    replacements: list[Replacement] = Field(default_factory=list)

    _raw_starts: list[int] = PrivateAttr(default_factory=list)
    _raw_ends: list[int] = PrivateAttr(default_factory=list)
    _scrub_starts: list[int] = PrivateAttr(default_factory=list)
    _scrub_ends: list[int] = PrivateAttr(default_factory=list)

    @model_validator(mode="after")
    def _check_consistent(self) -> OffsetMap:
        """Reject maps that could not have come from one text (a bad map would silently corrupt evidence)."""
        prev_raw = prev_scrub = 0
        for r in self.replacements:
            if r.raw_end <= r.raw_start or r.scrub_end - r.scrub_start != len(r.placeholder) or not r.placeholder:
                raise ValueError(f"replacement must replace a non-empty span with its non-empty placeholder: {r!r}")
            if r.raw_start < prev_raw or r.scrub_start < prev_scrub:
                raise ValueError(f"replacements must be sorted and non-overlapping: {r!r}")
            if r.raw_start - prev_raw != r.scrub_start - prev_scrub:
                raise ValueError(f"text between replacements must keep its length: {r!r}")
            prev_raw, prev_scrub = r.raw_end, r.scrub_end
        return self

    def model_post_init(self, __context: object) -> None:
        """Cache the boundary lists that bisect needs."""
        self._raw_starts = [r.raw_start for r in self.replacements]
        self._raw_ends = [r.raw_end for r in self.replacements]
        self._scrub_starts = [r.scrub_start for r in self.replacements]
        self._scrub_ends = [r.scrub_end for r in self.replacements]

    @staticmethod
    def _check_span(start: int, end: int) -> None:
        if start < 0 or end < start:
            raise ValueError(f"invalid span ({start}, {end})")

    def to_raw(self, scrub_start: int, scrub_end: int) -> tuple[int, int]:
        """Map a span of scrubbed text to raw text (placeholders expand to the whole masked value)."""
        self._check_span(scrub_start, scrub_end)
        args = (self._scrub_starts, self._scrub_ends, self._raw_starts, self._raw_ends)
        return _map_start(scrub_start, *args), _map_end(scrub_end, *args)

    def to_scrubbed(self, raw_start: int, raw_end: int) -> tuple[int, int]:
        """Map a span of raw text to scrubbed text (a cut masked value expands to its whole placeholder)."""
        self._check_span(raw_start, raw_end)
        args = (self._raw_starts, self._raw_ends, self._scrub_starts, self._scrub_ends)
        return _map_start(raw_start, *args), _map_end(raw_end, *args)

    @classmethod
    def apply(cls, raw: str, spans: Iterable[tuple[int, int, str, str]]) -> tuple[str, OffsetMap]:
        """Build scrubbed text from raw text and `(start, end, kind, placeholder)` spans, with the map between them."""
        ordered = sorted(spans)
        pieces: list[str] = []
        replacements: list[Replacement] = []
        raw_pos = scrub_pos = 0
        for start, end, kind, placeholder in ordered:
            if start < raw_pos or end > len(raw):
                raise ValueError(f"span ({start}, {end}) overlaps another span or leaves the text")
            pieces.append(raw[raw_pos:start])
            pieces.append(placeholder)
            scrub_start = scrub_pos + start - raw_pos
            scrub_pos = scrub_start + len(placeholder)
            replacements.append(
                Replacement(
                    kind=kind,
                    raw_start=start,
                    raw_end=end,
                    scrub_start=scrub_start,
                    scrub_end=scrub_pos,
                    placeholder=placeholder,
                )
            )
            raw_pos = end
        pieces.append(raw[raw_pos:])
        return "".join(pieces), cls(replacements=replacements)
