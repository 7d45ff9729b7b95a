"""What every PII detector shares: the candidate record, the per-text scan state and context tests.

Context words raise or lower a candidate: a phone context ("call", "điện thoại", "телефон") lets a
national number from an unknown region through; a business label right before a number ("Order No.",
"INV-", "订单号") keeps it readable as the business id it is.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from extraction_assets.lib.literals import LiteralScan

if TYPE_CHECKING:
    from phonenumbers import PhoneNumber

# What the phone matcher found in a line, by (region, line): `(start, end, number)` in the line, in its order. One
# document's scrub and its re-check share one (`Scan.matched_lines`): the matcher is a pure function of the line and
# the region, and the re-check reads again most lines the scrub read (phonenumbers' matcher is the scrub's costliest
# step), as does a long thread its quoted lines.
MatchedLines = dict[tuple[str, str], list[tuple[int, int, "PhoneNumber"]]]


class Hit(NamedTuple):
    """A validated candidate; `norm` decides which occurrences share a placeholder."""

    kind: str
    start: int
    end: int
    score: float
    value: str
    norm: str


@dataclass
class Scan:
    """Per-text state shared by the detectors of one run; `hits` holds what earlier detectors found."""

    text: str
    region: str
    hits: list[Hit] = field(default_factory=list)
    matched_lines: MatchedLines = field(default_factory=dict)
    _hinted: tuple[int, set[str]] | None = field(default=None, repr=False)  # (`_HINTS.version`, hints found)

    @cached_property
    def lowered(self) -> str:
        """The text in lower case, for the cheap substring pre-checks that let a detector skip its pattern."""
        return self.text.lower()

    def mentions(self, hints: tuple[str, ...]) -> bool:
        """Whether any (lower-case) hint occurs in the text. Every hint any detector asks about is looked for at once,
        in one pass over the text (`_HintWords`), the first time one is asked about: one search per hint word (about
        fifty) was a tenth of the scrub."""
        if not _HINTS.words.issuperset(hints):
            _HINTS.add(hints)
        if self._hinted is None or self._hinted[0] != _HINTS.version:
            self._hinted = (_HINTS.version, _HINTS.present(self.lowered))
        return not self._hinted[1].isdisjoint(hints)

    def lines_holding(self, needles: tuple[str, ...], ignore_case: bool = False) -> list[tuple[int, int]]:
        """The spans of the lines (line break left out) that hold one of `needles` (lower-case ones in the lower-cased
        text with `ignore_case`), in text order: where a value that holds a needle and no line break can be."""
        text = self.text
        within = self.lowered if ignore_case else text
        if len(within) != len(text):  # a character whose lower case is longer: offsets would not agree
            return [(0, len(text))]
        lines: list[tuple[int, int]] = []
        for needle in needles:
            at = within.find(needle)
            while at != -1:
                start = text.rfind("\n", 0, at) + 1
                end = text.find("\n", at)
                lines.append((start, len(text) if end == -1 else end))
                at = within.find(needle, lines[-1][1])
        return sorted(set(lines))

    def in_lines(self, pattern: re.Pattern[str], lines: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
        """`pattern.finditer` over these lines of the text (a pattern whose matches never hold a line break)."""
        for lo, hi in lines:
            yield from pattern.finditer(self.text, lo, hi)

    @cached_property
    def number_stretches(self) -> list[tuple[int, int]]:
        """The stretches of the text a number-shaped value can lie in: every run of digits with what separates it
        from the next (whitespace of any length, anything else up to a long gap), widened on both sides by more
        than any value's letters and any context a pattern reads (`NUMBER_REACH_BEFORE`, `NUMBER_REACH_AFTER`).

        A value of a kind that needs digits has its digits in one run, so it lies inside one stretch; outside them
        (most of a contract or a meeting transcript) those detectors have nothing to find."""
        return [(lo, hi) for lo, _, hi in self._number_runs]

    @cached_property
    def _number_runs(self) -> list[tuple[int, int, int]]:
        """Each number stretch as (its start, its first digit, its end): no digit stands between its start and its
        first digit (`_DIGIT_RUN`'s gaps are shorter than the reaches together)."""
        end = len(self.text)
        return [
            (max(0, m.start() - NUMBER_REACH_BEFORE), m.start(), min(end, m.end() + NUMBER_REACH_AFTER))
            for m in _DIGIT_RUN.finditer(self.text)
        ]

    @cached_property
    def _digits_held(self) -> list[int]:
        """How many digits each number stretch holds (all of them lie between its first digit and its end)."""
        return [sum(map(len, _DIGITS.findall(self.text, digit, hi))) for _, digit, hi in self._number_runs]

    def _searched(self, lead: int | None, digits: int, first: int = 0) -> Iterator[tuple[int, int]]:
        """The spans of the number stretches from the `first` on a pattern with this `lead` and `digits` is searched
        in (`numbers`)."""
        runs = self._number_runs
        held = self._digits_held if digits > 1 else None
        for i in range(first, len(runs)):
            if held is None or held[i] >= digits:
                lo, digit, hi = runs[i]
                yield (lo if lead is None else max(lo, digit - lead), hi)

    def numbers(
        self, pattern: re.Pattern[str], text: str | None = None, lead: int | None = None, digits: int = 1
    ) -> Iterator[re.Match[str]]:
        """`pattern.finditer` over the number stretches of the text (or of a same-length copy of it that holds no
        digit where the text holds none, `text`).

        `lead`: for a pattern every match of which holds a digit and opens at most `lead` characters before its
        first digit, the search of a stretch starts there before the stretch's first digit: no match can open
        earlier, so the matches are the same, and the engine does not walk the stretch's lead-in (a third of its
        characters) once per pattern. A lookbehind still reads the text before where the search starts.
        `digits`: how many digits every match of the pattern holds at least: a stretch that holds fewer (a year, a
        count, a time: a third of the stretches' characters) cannot hold a match and is not searched."""
        within = self.text if text is None else text
        for lo, hi in self._searched(lead, digits):
            yield from pattern.finditer(within, lo, hi)

    def next_number(
        self, pattern: re.Pattern[str], pos: int, text: str | None = None, lead: int | None = None, digits: int = 1
    ) -> re.Match[str] | None:
        """`pattern.search(text, pos)` in the number stretches from `pos` on (`lead` and `digits` as for `numbers`)."""
        within = self.text if text is None else text
        first = max(0, bisect_right(self._number_runs, (pos, len(within) + 1)) - 1)
        for lo, hi in self._searched(lead, digits, first):
            if hi > pos and (found := pattern.search(within, max(lo, pos), hi)) is not None:
                return found
        return None


class _HintWords:
    """Every hint word the detectors have asked about in this process, and one Aho-Corasick automaton over them (made
    again when a word is added: the first document teaches it every detector's words)."""

    def __init__(self) -> None:
        self.words: set[str] = set()
        self.version = 0
        self._scan: LiteralScan | None = None

    def add(self, hints: tuple[str, ...]) -> None:
        self.words.update(hints)
        self.version += 1
        self._scan = None

    def present(self, lowered: str) -> set[str]:
        """The words that occur in `lowered`."""
        if self._scan is None:
            self._scan = LiteralScan(self.words)
        return self._scan.present(lowered)


_HINTS = _HintWords()

# What a pattern may read around a number's digits: letters before them (an IBAN's country code, a label within
# 64 characters of its account number, context words within 60), and after them (an IBAN's letters, a zone id).
NUMBER_REACH_BEFORE = 128
NUMBER_REACH_AFTER = 96
# Digits and what lies between them: a line wrap with any indentation (a wrapped SSN), or any other gap shorter
# than the two reaches together (a wider one starts a new stretch, the reaches of both kept). The gaps are taken
# possessively (`{0,n}+`, `++`): a gap holds no digit, so giving characters of it back never lets a digit follow, and
# the engine no longer walks back over each long gap before it gives up on it (a fifth of this pattern's time).
_DIGIT_RUN = re.compile(rf"\d(?:\D{{0,{NUMBER_REACH_BEFORE + NUMBER_REACH_AFTER}}}+\d|\s++\d)*")


def squash(value: str) -> str:
    return "".join(value.split()).casefold()


_NON_DIGIT = re.compile(r"\D")
_DIGITS = re.compile(r"\d+")


def digits_of(value: str) -> str:
    return _NON_DIGIT.sub("", value)


def near(pattern: re.Pattern[str], text: str, start: int, end: int, before: int, after: int = 0) -> bool:
    """Whether `pattern` occurs within `before` characters before the span or `after` characters after it."""
    if pattern.search(text, max(0, start - before), start) is not None:
        return True
    return after > 0 and pattern.search(text, end, min(len(text), end + after)) is not None


# A business-id label ending right before a number ("INV-", "Order No. ", "PO #", "ID: ", "ИНН ", "订单号："):
# such numbers are invoices, orders, company registration numbers and ids, not phones, cards or SSNs. Account
# labels are not among them: a number after one is a bank account (masked) or, when it passes as one, a card.
_LABEL_BEFORE = re.compile(
    r"(?:(?i:(?<![^\W\d_])(?:invoice|inv|order|ord|po|p\.o|purchase[^\S\n]+order|id|ref|reference|ticket|sku"
    r"|tracking|contract|receipt|transaction|txn|shipment|vat|tax|mst|mã|hóa[^\S\n]+đơn|hoá[^\S\n]+đơn"
    r"|đơn[^\S\n]+hàng|заказ|сч[её]т|инн|огрн|кпп|бик))|订单|发票|编号|单号)"
    r"\.?[^\S\n]*(?i:(?:no|nr|num|number|số|号|№|#)\.?[^\S\n]*)?[:#№：\-]?[^\S\n]*[#№]?[^\S\n]*\Z"
)
_LABEL_WINDOW = 40


def labelled_business_id(text: str, start: int) -> bool:
    return _LABEL_BEFORE.search(text, max(0, start - _LABEL_WINDOW), start) is not None


def blank(text: str, spans: list[tuple[int, int]]) -> str:
    """Same-length copy of `text` with the spans overwritten by letters, so offsets stay valid.

    Letters rather than spaces: phonenumbers rejects a candidate touching a Latin letter, so a blanked
    span can neither join nor extend a neighbouring number.
    """
    if not spans:
        return text
    pieces: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if end <= pos:
            continue
        start = max(start, pos)
        pieces.append(text[pos:start])
        pieces.append("Q" * (end - start))
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces)
