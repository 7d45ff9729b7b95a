"""The text as the detectors read it: forms that hide a value from its pattern are undone first, with a map back
to the text's own offsets, so what is masked is always a span of the text itself.

Undone: zero-width characters and soft hyphens inside a value ("jo\u200bhn@x.com", a card with one between two
digits); Unicode dashes and spaces in place of ASCII ones (an SSN with non-breaking hyphens); an "@" written as a
percent code, encoded once or more, or an HTML entity ("%40", "%252540", "&#64;", "&commat;"); a quote prefix after
a line break ("\n> "), so a value wrapped inside a quoted reply reads as it does unquoted (a number wrapped between
two of its groups reads with a space there, one wrapped at its dash with none); and compatibility forms, each
character as NFKC gives it ("＠" and "﹫" as "@", fullwidth digits as digits, the one-dot leader "․" as "."). A text
with none of them is its own view, at no cost."""

from __future__ import annotations

import functools
import re
import unicodedata
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

_QUOTE = r"\n[ \t]*(?:>[ \t]?)+"  # a line break and the quote prefix of the next line
_DASHES = "\u2010\u2011\u2012\u2013\u2212"  # hyphens and minus signs that stand for "-"
_SPACES = "\u00a0\u2007\u2009\u202f"  # spaces that stand for " "
_FORMS = (
    r"(?P<gone>[\u200b\u200c\u200d\u2060\ufeff\u00ad])"  # zero-width characters, the soft hyphen
    rf"|(?P<dash>[{_DASHES}])|(?P<space>[{_SPACES}])"
    r"|(?P<at>(?i:%(?:25)*40|&#0*64;|&#x0*40;|&commat;))"  # an "@" encoded, once or more
    rf"|(?P<joined>(?<=\d-){_QUOTE}(?=\d)|(?<=\d){_QUOTE}(?=-\d))"  # a quoted number wrapped at its dash
    rf"|(?P<spaced>(?<=\d)[ \t]*{_QUOTE}[ \t]*(?=\d))"  # ... or between two of its groups
    rf"|(?P<quote>{_QUOTE})"
)
_HIDING = re.compile(_FORMS)  # case-insensitive only where it says so: the Kelvin sign must not match "k"
# Where a form can start: at one of its own characters (a zero-width one, a dash, a space, the "%" or "&" of an
# encoded "@"), at a line break followed by a quote prefix, or at the spaces and tabs right before such a break (a
# number wrapped between two of its groups). Those places are found with `str.find`, character by character, and
# the forms' pattern is tried there only: searched itself, it tries each of its branches at every position of the
# text (a quarter of a scrub's time), and a character class is searched for a character at a time too.
_START = "\u200b\u200c\u200d\u2060\ufeff\u00ad" + _DASHES + _SPACES + "%&"
_QUOTED_BREAK = re.compile(r"\n[ \t]*>")
_UNDONE = {"dash": "-", "space": " ", "at": "@", "joined": "", "spaced": " ", "quote": "\n", "gone": ""}
# inside a run of compatibility characters, the dashes and spaces above read as they do alone (NFKC would keep a
# non-breaking hyphen a Unicode hyphen)
_PLAIN = {**dict.fromkeys(_DASHES, "-"), **dict.fromkeys(_SPACES, " ")}


@functools.lru_cache(maxsize=256)
def _with_compatibility_forms(changed: frozenset[str]) -> re.Pattern[str]:
    """The forms above and runs of `changed`, the characters of a text that NFKC changes (fullwidth and small forms,
    ligatures, circled and superscript digits, ...). Only a text's own such characters can match in it, so the class
    holds those, not the 4,866 of Unicode: building that class walked every code point, about 0.1 s quiet and
    0.5 s on a busy machine, once in every process whose texts held one (each run's own, each worker)."""
    members = "".join(re.escape(c) for c in sorted(changed))
    return re.compile(f"{_FORMS}|(?P<compat>[{members}]+)")


def _changed_by_nfkc(text: str) -> frozenset[str]:
    """The characters of `text` that NFKC changes, each alone (what the compatibility forms undo)."""
    return frozenset(c for c in set(text) if c >= "\x80" and not unicodedata.is_normalized("NFKC", c))


def _undone(found: re.Match[str]) -> str:
    kind = found.lastgroup or "gone"
    if kind == "compat":  # a run, each character alone: NFKC of the run would compose some ("ｶﾞ" -> "ガ")
        return "".join(_PLAIN.get(c) or unicodedata.normalize("NFKC", c) for c in found.group())
    return _UNDONE[kind]


@dataclass
class View:
    """The detectors' text and, for each undone form, where it sits in both texts."""

    text: str
    _view_starts: list[int] = field(default_factory=list)
    _segments: list[tuple[int, int, int, int]] = field(default_factory=list)  # view start, raw start, lengths

    def to_raw(self, start: int, end: int) -> tuple[int, int]:
        """A span of the view as a span of the text (an undone form cut by it counts whole, unless each of its
        characters stands for one: a run of fullwidth digits is cut where the view is)."""
        if not self._segments:
            return start, end
        return self._raw_start(start), self._raw_end(end)

    def _raw_start(self, at: int) -> int:
        i = bisect_right(self._view_starts, at) - 1
        if i < 0:
            return at
        view_start, raw_start, view_len, raw_len = self._segments[i]
        if at < view_start + view_len:
            return raw_start + (at - view_start if view_len == raw_len else 0)  # one for one: character by character
        return raw_start + raw_len + at - view_start - view_len

    def _raw_end(self, at: int) -> int:
        i = bisect_left(self._view_starts, at) - 1
        if i < 0:
            return at
        view_start, raw_start, view_len, raw_len = self._segments[i]
        if at <= view_start + view_len:
            return raw_start + (at - view_start if view_len == raw_len else raw_len)
        return raw_start + raw_len + at - view_start - view_len


def _hiding_forms(text: str) -> list[re.Match[str]]:
    """`finditer` of the forms' pattern over `text`, its pattern tried only where a form can start."""
    hiding, characters = _HIDING, _START
    if not unicodedata.is_normalized("NFKC", text) and (changed := _changed_by_nfkc(text)):
        hiding = _with_compatibility_forms(changed)
        characters += "".join(changed)
    starts: list[int] = []
    for character in characters:
        at = text.find(character)
        while at != -1:
            starts.append(at)
            at = text.find(character, at + 1)
    if ">" in text:
        for m in _QUOTED_BREAK.finditer(text):
            before = m.start()
            while before > 0 and text[before - 1] in " \t":
                before -= 1
            starts += (before, m.start())
    found: list[re.Match[str]] = []
    for at in sorted(set(starts)):
        if (not found or at >= found[-1].end()) and (form := hiding.match(text, at)) is not None:
            found.append(form)
    return found


def detection_view(text: str) -> View:
    """The view of `text`: itself when nothing in it hides a value."""
    forms = _hiding_forms(text)
    if not forms:
        return View(text)
    pieces: list[str] = []
    starts: list[int] = []
    segments: list[tuple[int, int, int, int]] = []
    cursor = length = 0
    for found in forms:
        pieces.append(text[cursor : found.start()])
        length += found.start() - cursor
        replacement = _undone(found)
        starts.append(length)
        segments.append((length, found.start(), len(replacement), found.end() - found.start()))
        pieces.append(replacement)
        length += len(replacement)
        cursor = found.end()
    pieces.append(text[cursor:])
    return View("".join(pieces), starts, segments)
