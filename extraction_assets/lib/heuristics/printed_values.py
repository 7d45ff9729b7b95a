"""Dates, amounts and currencies as printed on receipts and contracts, found with their exact offsets.

Patterns run on a *scan view* of the text: the same length as the text, lower-cased, with non-breaking
and other odd spaces, typographic quotes and OCR look-alikes (a Latin "o" inside a Cyrillic word, a
zero inside a word) folded one character for one. So a match in the view is a match at the same
offsets in the source, and evidence is always a verbatim slice of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation

from price_parser import Price

__all__ = ["DateMention", "find_dates", "parse_amount", "scan_view"]

_SPACES = dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2009\u200a\u2002\u2003\u2004\u2005\u2006\u3000\t\u00ad"), " ")
_QUOTES = dict.fromkeys(map(ord, "«»“”„‟″"), '"') | dict.fromkeys(map(ord, "‘’‚‛′`"), "'")
_DASHES = dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
# Each folded character and its fold, one character each. A text is folded by replacing them one after the other:
# `str.translate` looks every character of the text up in its table once the text holds a non-ASCII character (a
# long contract: milliseconds), where a `str.replace` of a character the text does not hold is a scan in C. No fold is
# itself a folded character, so the order of the replacements does not matter: the text is `translate`'s.
_FOLD = tuple((chr(code), folded) for code, folded in (_SPACES | _QUOTES | _DASHES).items())
# Latin letters and digits that OCR (or a careless typist) puts inside Cyrillic words.
_TO_CYRILLIC = str.maketrans("aceopxykmthb03", "асеорхукмтнвоз")
_CYRILLIC = re.compile(r"[а-яё]")
_MIXED_WORD = re.compile(r"[^\W_]+")

_EN_MONTHS = {
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11,
    "dec": 12,
}  # fmt: skip
_RU_MONTHS = {
    "январ": 1, "янв": 1, "феврал": 2, "фев": 2, "март": 3, "мар": 3, "апрел": 4, "апр": 4, "ма": 5, "июн": 6,
    "июл": 7, "август": 8, "авг": 8, "сентябр": 9, "сен": 9, "октябр": 10, "окт": 10, "ноябр": 11, "ноя": 11,
    "декабр": 12, "дек": 12,
}  # fmt: skip
_EN_MONTH = (
    r"(?P<m>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_RU_MONTH = (
    r"(?P<m>январ[яье]|феврал[яье]|март[ае]?|апрел[яье]|ма[яей]|июн[яье]|июл[яье]|август[ае]?|сентябр[яье]"
    r"|октябр[яье]|ноябр[яье]|декабр[яье]|янв|фев|мар|апр|июн|июл|авг|сент?|окт|ноя|дек)\.?"
)
_MONTH = rf"(?:{_EN_MONTH}|{_RU_MONTH.replace('?P<m>', '?P<mr>')})"
# "23rd", "1st", OCR-split "24t h" / "21s t"
_ORDINAL = r"(?:\s?(?:st|nd|rd|th|t\s?h|s\s?t|n\s?d|r\s?d))?"
_DAY = r"(?P<d>[0-3]?\d)"
_DIGIT_LED_DAY = r"(?P<d>\d(?<!\w\d)(?:(?<=[0-3])\d)?)"  # "(?<!\w)" + _DAY, led by its digit (see _ISO_DATE)
_YEAR = r"(?P<y>(?:19|20)\d\d)"
_RU_YEAR_TAIL = r"(?:\s*(?:г\.|года|год|г(?![а-я])))?"

_NAMED_DATES = (
    # 23rd day of September, 2016 / 19 Jan. 1998 / «15» января 2026 г. / 05 MAR 2018
    re.compile(
        rf'(?<!\w)(?:"\s?)?{_DAY}{_ORDINAL}\s?"?(?:\s+day)?(?:\s+of)?[\s/-]*{_MONTH}[\s,/-]*(?:of\s+)?'
        rf"{_YEAR}(?!\d){_RU_YEAR_TAIL}"
    ),
    # 19-MAR-18 / 27/JUN/18: a two-digit year only in this compact form
    re.compile(rf"{_DIGIT_LED_DAY}(?P<s>[-/]){_MONTH}(?P=s)(?P<y>\d\d)(?!\d)"),
    # September 23, 2016 / May 25th, 2018
    re.compile(rf"(?<!\w){_MONTH}\s+{_DAY}{_ORDINAL},?\s+{_YEAR}(?!\d)"),
)
# The digit-led patterns open with their first digit and test what stands before it with a lookbehind after it
# ("\d(?<!\w\d)" for "(?<!\w)\d"; "[0-3]?\d" as "\d(?:(?<=[0-3])\d)?", tried in the same order): the same test, but
# the regex engine skips from digit to digit instead of trying the pattern at every position.
_ISO_DATE = re.compile(
    r"(?P<y>1(?<![\d/.-]1)9\d\d|2(?<![\d/.-]2)0\d\d)(?P<s>[-/.])(?P<m>[01]?\d)(?P=s)(?P<d>[0-3]?\d)(?![\d])"
)
_NUMERIC_DATE = re.compile(
    r"(?P<a>\d(?<![\d/.,-]\d)(?:(?<=[0-3])\d)?)(?P<s>[-/.])(?P<b>[0-3]?\d)(?P=s)(?P<y>(?:19|20)\d\d|\d\d)"
    r"(?![\d]|[.,]\d)" + _RU_YEAR_TAIL
)


@dataclass(frozen=True)
class DateMention:
    """A date printed in the text: ``text[start:end]`` is exactly what was printed."""

    start: int
    end: int
    value: date


def _lower_one_for_one(text: str) -> str:
    """Lower-case without changing the length (a few characters lower-case to two code points)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def scan_view(text: str) -> str:
    """The text folded for matching, one character for one, so offsets in it are offsets in ``text``."""
    view = _lower_one_for_one(text)
    for char, folded in _FOLD:
        view = view.replace(char, folded)
    if not _CYRILLIC.search(view):
        return view

    def fold_word(m: re.Match[str]) -> str:
        word = m.group(0)
        return word.translate(_TO_CYRILLIC) if _CYRILLIC.search(word) else word

    return _MIXED_WORD.sub(fold_word, view)


def _year(raw: str) -> int:
    value = int(raw)
    if value >= 100:
        return value
    return 2000 + value if value < 70 else 1900 + value


def _month_number(match: re.Match[str]) -> int | None:
    if match.groupdict().get("m"):
        return _EN_MONTHS.get(match.group("m")[:3])
    name = match.group("mr")
    for stem in sorted(_RU_MONTHS, key=len, reverse=True):
        if name.startswith(stem):
            return _RU_MONTHS[stem]
    return None


def _safe_date(year: int, month: int | None, day: int) -> date | None:
    if month is None:
        return None
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _numeric(match: re.Match[str], day_first: bool) -> date | None:
    a, b, year = int(match.group("a")), int(match.group("b")), _year(match.group("y"))
    if a > 12:
        day_first = True
    elif b > 12:
        day_first = False
    day, month = (a, b) if day_first else (b, a)
    return _safe_date(year, month, day)


# Every date holds digits: the patterns (each led by a lookbehind, which the regex engine tries at every position)
# search only around them. A date's digits lie in one run of digits and what separates them (a month's name, "day
# of", spaces or dashes); before its first digit at most a month's name and the spaces after it, after its last a
# suffix ("th", " г.").
_DATE_DIGITS = re.compile(r"\d(?:\D{0,128}\d|\s+\d)*")
_BEFORE_DIGITS = 24
_AFTER_DIGITS = 24


def _digit_stretches(view: str) -> list[tuple[int, int]]:
    stretches: list[tuple[int, int]] = []
    for m in _DATE_DIGITS.finditer(view):
        lo = m.start()
        while lo > 0 and view[lo - 1].isspace():  # a month's name, then any number of spaces, then the day
            lo -= 1
        lo, hi = max(0, lo - _BEFORE_DIGITS), m.end() + _AFTER_DIGITS
        while hi < len(view) and view[hi - 1].isspace():  # the spaces before a year's suffix
            hi += 1
        if stretches and lo <= stretches[-1][1]:
            stretches[-1] = (stretches[-1][0], min(len(view), hi))
        else:
            stretches.append((lo, min(len(view), hi)))
    return stretches


def _within(pattern: re.Pattern[str], view: str, stretches: list[tuple[int, int]]) -> Iterator[re.Match[str]]:
    for lo, hi in stretches:
        yield from pattern.finditer(view, lo, hi)


def find_dates(view: str, *, day_first: bool) -> list[DateMention]:
    """Every date printed in ``view`` (a scan view), in text order, overlapping mentions resolved longest first.

    Numeric dates whose day and month are both 12 or less are read day first when ``day_first``.
    """
    found: list[DateMention] = []
    stretches = _digit_stretches(view)
    for pattern in _NAMED_DATES:
        for m in _within(pattern, view, stretches):
            when = _safe_date(_year(m.group("y")), _month_number(m), int(m.group("d")))
            if when is not None:
                found.append(DateMention(m.start(), m.end(), when))
    for m in _within(_ISO_DATE, view, stretches):
        when = _safe_date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
        if when is not None:
            found.append(DateMention(m.start(), m.end(), when))
    for m in _within(_NUMERIC_DATE, view, stretches):
        when = _numeric(m, day_first)
        if when is not None:
            found.append(DateMention(m.start(), m.end(), when))
    found.sort(key=lambda d: (d.start, -(d.end - d.start)))
    kept: list[DateMention] = []
    for mention in found:
        if not kept or mention.start >= kept[-1].end:
            kept.append(mention)
    return kept


def parse_amount(printed: str) -> Decimal | None:
    """The number in a printed amount ("1 500 000,00", "1,007.50", "RM 29.70"), or None when there is none."""
    try:
        amount = Price.fromstring(printed).amount
    except (InvalidOperation, ValueError):
        return None
    return amount
