"""The text as the detectors read it: forms that hide a value from its pattern are undone first, with a map back
to the text's own offsets, so what is masked is always a span of the text itself.

Undone: zero-width characters and soft hyphens inside a value ("jo\u200bhn@x.com", a card with one between two
digits); Unicode dashes and spaces in place of ASCII ones (an SSN with non-breaking hyphens); an "@" written as a
percent code, a double-encoded one or an HTML entity ("%2540", "&#64;", "&commat;"); and a quote prefix after a
line break ("\\n> "), so a value wrapped inside a quoted reply reads as it does unquoted. A text with none of them
is its own view, at no cost."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

_HIDING = re.compile(
    r"[\u200b\u200c\u200d\u2060\ufeff\u00ad]"  # zero-width characters, the soft hyphen
    r"|[\u2010\u2011\u2012\u2013\u2212]"  # hyphens and minus signs that stand for "-"
    r"|[\u00a0\u2007\u2009\u202f]"  # spaces that stand for " "
    r"|%2540|%40|&#0*64;|&#x0*40;|&commat;"  # an "@" encoded
    r"|\n[ \t]*(?:>[ \t]?)+",  # a quote prefix after a line break
    re.IGNORECASE,
)
_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2212")
_SPACES = frozenset("\u00a0\u2007\u2009\u202f")


def _undone(found: str) -> str:
    if found in _DASHES:
        return "-"
    if found in _SPACES:
        return " "
    if found.startswith("\n"):
        return "\n"
    if len(found) == 1:  # zero-width
        return ""
    return "@"


@dataclass
class View:
    """The detectors' text and, for each undone form, where it sits in both texts."""

    text: str
    _view_starts: list[int] = field(default_factory=list)
    _segments: list[tuple[int, int, int, int]] = field(default_factory=list)  # view start, raw start, lengths

    def to_raw(self, start: int, end: int) -> tuple[int, int]:
        """A span of the view as a span of the text (an undone form cut by it counts whole)."""
        if not self._segments:
            return start, end
        return self._raw_start(start), self._raw_end(end)

    def _raw_start(self, at: int) -> int:
        i = bisect_right(self._view_starts, at) - 1
        if i < 0:
            return at
        view_start, raw_start, view_len, raw_len = self._segments[i]
        if at < view_start + view_len:
            return raw_start
        return raw_start + raw_len + at - view_start - view_len

    def _raw_end(self, at: int) -> int:
        i = bisect_left(self._view_starts, at) - 1
        if i < 0:
            return at
        view_start, raw_start, view_len, raw_len = self._segments[i]
        if at <= view_start + view_len:
            return raw_start + raw_len
        return raw_start + raw_len + at - view_start - view_len


def detection_view(text: str) -> View:
    """The view of `text`: itself when nothing in it hides a value."""
    if _HIDING.search(text) is None:
        return View(text)
    pieces: list[str] = []
    starts: list[int] = []
    segments: list[tuple[int, int, int, int]] = []
    cursor = length = 0
    for found in _HIDING.finditer(text):
        pieces.append(text[cursor : found.start()])
        length += found.start() - cursor
        replacement = _undone(found.group())
        starts.append(length)
        segments.append((length, found.start(), len(replacement), found.end() - found.start()))
        pieces.append(replacement)
        length += len(replacement)
        cursor = found.end()
    pieces.append(text[cursor:])
    return View("".join(pieces), starts, segments)
