"""Due-date parsing for Vietnamese and English commitment phrases.

Everything is relative to an explicit ``reference`` date (the document date), never the clock,
so extraction stays deterministic. Relative phrases are resolved with stdlib date arithmetic;
absolute dates are first located with narrow regexes and only those substrings are handed to
dateparser, so amounts such as "15.000.000 VND" or "1/2 lô hàng" are never read as dates.
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import Any, NamedTuple

import dateparser
from dateparser.data.date_translation_data import en as _en_data
from dateparser.data.date_translation_data import ru as _ru_data
from dateparser.data.date_translation_data import vi as _vi_data

from extraction_assets.lib.literals import LiteralScan

__all__ = ["parse_due_date"]

Resolver = Callable[[re.Match[str], date | None], date | None]

_VI_WEEKDAYS = {
    "hai": 0, "ba": 1, "tư": 2, "năm": 3, "sáu": 4, "bảy": 5, "2": 0, "3": 1, "4": 2, "5": 3, "6": 4, "7": 5,
}  # fmt: skip
_EN_WEEKDAYS = {
    "monday": 0, "mon": 0, "tuesday": 1, "tue": 1, "tues": 1, "wednesday": 2, "wed": 2,
    "thursday": 3, "thu": 3, "thur": 3, "thurs": 3, "friday": 4, "fri": 4,
    "saturday": 5, "sat": 5, "sunday": 6, "sun": 6,
}  # fmt: skip
_FRIDAY = 4
_SUNDAY = 6

_EN_WD_FULL = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_EN_WD_ABBR = r"(?P<wd>mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?"
_MONTHS = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"  # noqa: E501
_ORD = r"(?:st|nd|rd|th)?"
_MONTH_KEYS = tuple(name.lower() for name in calendar.month_name[1:])


def _month_names(*languages: dict[str, Any]) -> tuple[str, ...]:
    """The written month names dateparser knows for ``languages`` ("tháng một", "января"), longest first;
    numeric forms ("tháng 1") are left to the numeric rules."""
    names = {
        n.lower() for info in languages for key in _MONTH_KEYS for n in info[key] if not any(c.isdigit() for c in n)
    }
    return tuple(sorted(names, key=len, reverse=True))


_VI_RU_MONTH_NAMES = _month_names(_vi_data.info, _ru_data.info)
_VI_RU_MONTHS = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in _VI_RU_MONTH_NAMES)

_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14}
_UNIT_MONTHS = {"month": 1, "year": 12}


def _unit_words(*languages: dict[str, Any]) -> dict[str, str]:
    """Each word dateparser knows for a day, week, fortnight, month or year ("дня", "tuần", "weeks") -> that unit.

    Single letters ("d", "г") and phrases are left out: too loose to find in running text.
    """
    return {
        word.lower(): unit
        for info in languages
        for unit in (*_UNIT_DAYS, *_UNIT_MONTHS)
        for word in info.get(unit) or ()
        if len(word) > 1 and " " not in word
    }


def _number_words(*languages: dict[str, Any]) -> tuple[tuple[str, int], ...]:
    """dateparser's simplifications that read a number word as a plain number ("two" -> 2, "пару" -> 2)."""
    return tuple(
        (pattern.lower(), int(value))
        for info in languages
        for simplification in info.get("simplifications") or ()
        for pattern, value in simplification.items()
        if value.isdigit() and "(?<" not in pattern and not any(c.isdigit() for c in pattern)
    )


def _day_words(*languages: dict[str, Any]) -> dict[str, int]:
    """dateparser's words for today and the days ahead ("сегодня" 0, "завтра" 1, "послезавтра" 2) -> days."""
    found: dict[str, int] = {}
    for info in languages:
        for meaning, words in info.get("relative-type", {}).items():
            ahead = re.fullmatch(r"in (\d+) day|(0) day ago", meaning)
            if ahead:
                found.update((word.lower(), int(ahead.group(1) or ahead.group(2))) for word in words)
    return found


_RU_DAY_WORDS = _day_words(_ru_data.info)
_UNITS = _unit_words(_en_data.info, _vi_data.info, _ru_data.info)
# dateparser has no Vietnamese number words.
_VI_NUMBERS = {"một": 1, "hai": 2, "ba": 3, "bốn": 4, "năm": 5, "sáu": 6, "bảy": 7, "tám": 8, "chín": 9, "mười": 10}
_NUMBER_WORDS = (*_number_words(_en_data.info, _ru_data.info), *((re.escape(w), n) for w, n in _VI_NUMBERS.items()))
_COUNT = r"(?:(?<![\d.,])\d{1,3}(?![.,]\d)|" + "|".join(f"(?:{p})" for p, _ in _NUMBER_WORDS) + ")"
_UNIT = "(?:" + "|".join(re.escape(w) for w in sorted(_UNITS, key=len, reverse=True)) + ")"
# "3 days", "1 year, 2 months", "2 tuần 3 ngày": the amounts an offset adds up.
_AMOUNTS = rf"{_COUNT}\s+{_UNIT}(?:,?\s+(?:and\s+|và\s+|и\s+)?{_COUNT}\s+{_UNIT})*"
_AMOUNT_RE = re.compile(rf"(?<!\w)(?:(?P<n>{_COUNT})\s+)?(?P<unit>{_UNIT})(?!\w)")

# A weekday written next to a date only labels it ("by Friday, 11 December"): the date decides, so a weekday
# followed by a date is no mention of its own, and a deadline word before the label still cues the date.
_WD_LABEL = (
    r"(?:thứ\s*(?:hai|ba|tư|năm|sáu|bảy|[2-7])|chủ\s*nhật|cn"
    r"|(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?\.?)"
)
_NO_DATE_AFTER = (
    rf"(?![,\s]*(?:ngày\s*)?\d{{1,2}}(?:\s*[/.-]\s*\d|{_ORD}\s+(?:of\s+)?(?:{_MONTHS}|tháng|{_VI_RU_MONTHS}))"
    rf"|[,\s]+{_MONTHS}\s+\d)"
)

# Words that mark a date as a deadline ("trước thứ sáu", "by Friday"); such mentions win over others.
_CUE_RE = re.compile(
    r"(?:trước|hạn(?:\s+chót)?|chậm\s+nhất|muộn\s+nhất|đến|tới|hết|by|before|due(?:\s+on|\s+by)?|deadline:?"
    r"|within|trong(?:\s+vòng|\s+khoảng)?|в\s+течение"
    rf"|until|till|no\s+later\s+than|до|срок:?|не\s+позднее|не\s+позже)\s*(?:{_WD_LABEL},?\s*)?(?:ngày\s*)?$"
)


@dataclass(frozen=True)
class _Mention:
    start: int
    end: int
    when: date | None
    cue: bool


def parse_due_date(text: str, reference: date | None) -> date | None:
    """The due date named in ``text``, or None.

    Relative phrases need ``reference``; absolute dates without a year need it too (to pick the year),
    while fully specified dates ("15/12/2026", "2026-12-15") parse without it. When several dates
    appear, one introduced by a deadline word (trước, hạn, by, before, due ...) wins, else the first.
    """
    if not text or not text.strip():
        return None
    norm = unicodedata.normalize("NFC", text).lower().replace("’", "'")
    present = _RULE_WORDS.present(norm)
    if _DIGIT_RE.search(norm):
        present.add(DIGIT[0])
    found: list[_Mention] = []
    for rule, needles in zip(_RULES, _NEEDLE_SETS, strict=True):
        if present.isdisjoint(needles):
            continue  # the rule's words are not in the text: it cannot match
        pattern, resolver = rule.pattern, rule.resolve
        for m in pattern.finditer(norm):
            date_start = m.start("d") if "d" in pattern.groupindex and m.group("d") else m.start()
            prefix = norm[max(0, m.start() - 30) : date_start]
            found.append(_Mention(m.start(), m.end(), resolver(m, reference), bool(_CUE_RE.search(prefix))))
    chosen = _leftmost_longest(found)
    dated = [mention for mention in chosen if mention.when is not None]
    if not dated:
        return None
    cued = [mention for mention in dated if mention.cue]
    return (cued or dated)[0].when


def _leftmost_longest(mentions: list[_Mention]) -> list[_Mention]:
    """Drop mentions overlapped by an earlier or longer one ("thứ hai tuần sau" beats "tuần sau")."""
    kept: list[_Mention] = []
    last_end = -1
    for mention in sorted(mentions, key=lambda x: (x.start, -x.end)):
        if mention.start >= last_end:
            kept.append(mention)
            last_end = mention.end
    return kept


# ---------------------------------------------------------------- date arithmetic


def _strictly_after(ref: date, weekday: int) -> date:
    """Next occurrence of ``weekday`` after ``ref`` ("by Friday" said on a Friday means next week)."""
    return ref + timedelta(days=(weekday - ref.weekday()) % 7 or 7)


def _on_or_after(ref: date, weekday: int) -> date:
    return ref + timedelta(days=(weekday - ref.weekday()) % 7)


def _next_week(ref: date, weekday: int) -> date:
    """``weekday`` of the calendar week (Mon-Sun) after the one containing ``ref``."""
    return ref + timedelta(days=7 - ref.weekday() + weekday)


def _this_week(ref: date, weekday: int) -> date:
    return ref + timedelta(days=weekday - ref.weekday())


def _month_end(year: int, month: int) -> date:
    return date(year, month, calendar.monthrange(year, month)[1])


def _shift_month(ref: date, months: int) -> tuple[int, int]:
    index = ref.year * 12 + ref.month - 1 + months
    return index // 12, index % 12 + 1


# ---------------------------------------------------------------- resolvers


def _relative(fn: Callable[[re.Match[str], date], date | None]) -> Resolver:
    """Wrap a resolver that needs a reference: without one a relative phrase has no date."""

    def resolve(m: re.Match[str], ref: date | None) -> date | None:
        return None if ref is None else fn(m, ref)

    return resolve


def _offset(days: int) -> Resolver:
    return _relative(lambda _m, ref: ref + timedelta(days=days))


def _vi_weekday(m: re.Match[str], ref: date) -> date | None:
    """Resolve a Vietnamese weekday: "thứ hai tuần sau" -> Monday of next week, "... tuần này" -> this week.

    A bare weekday means the next one after ``ref``, but bare "thứ hai" only counts after a cue word
    ("trước thứ sáu"), since "lần thứ hai" means "the second time".
    """
    weekday = _SUNDAY if m.group("sun") else _VI_WEEKDAYS[m.group("wd")]
    which = m.group("which")
    if which in ("sau", "tới"):
        return _next_week(ref, weekday)
    if which in ("này", "nay"):
        return _this_week(ref, weekday)
    if m.group("pre") or (m.group("sun") and m.group("sun") != "cn"):
        return _strictly_after(ref, weekday)
    return None


def _en_weekday(m: re.Match[str], ref: date) -> date:
    weekday = _EN_WEEKDAYS[m.group("wd")]
    modifier = m.groupdict().get("mod")
    if modifier == "next":
        return _next_week(ref, weekday)
    if modifier == "this":
        return _on_or_after(ref, weekday)
    return _strictly_after(ref, weekday)


def _month_end_of(months_ahead: int) -> Resolver:
    def resolve(_m: re.Match[str], ref: date) -> date:
        return _month_end(*_shift_month(ref, months_ahead))

    return _relative(resolve)


def _month_start_of(months_ahead: int) -> Resolver:
    def resolve(_m: re.Match[str], ref: date) -> date:
        year, month = _shift_month(ref, months_ahead)
        return date(year, month, 1)

    return _relative(resolve)


def _end_of_named_month(m: re.Match[str], ref: date) -> date | None:
    month = int(m.group("month"))
    if not 1 <= month <= 12:
        return None
    year = ref.year if month >= ref.month else ref.year + 1
    return _month_end(year, month)


def _after_offset(m: re.Match[str], ref: date) -> date:
    """``ref`` moved by each amount in the phrase ("1 year 2 months", "недели": no count is one); a month
    step keeps the day, or the month's last when it is shorter."""
    days = months = 0
    for amount in _AMOUNT_RE.finditer(m.group(0)):
        count = _count(amount.group("n")) if amount.group("n") else 1
        unit = _UNITS[amount.group("unit")]
        days += count * _UNIT_DAYS.get(unit, 0)
        months += count * _UNIT_MONTHS.get(unit, 0)
    year, month = _shift_month(ref, months)
    return date(year, month, min(ref.day, calendar.monthrange(year, month)[1])) + timedelta(days=days)


@lru_cache(maxsize=256)
def _count(token: str) -> int:
    if token.isdigit():
        return int(token)
    return next(value for pattern, value in _NUMBER_WORDS if re.fullmatch(pattern, token))


def _absolute(m: re.Match[str], ref: date | None) -> date | None:
    """Hand a located date substring to dateparser (day-first, future-preferring, relative to ``ref``)."""
    raw = m.group("d")
    if ref is None and not m.groupdict().get("year"):
        return None  # a date without a year needs the document date to choose the year
    day, month = m.groupdict().get("day"), m.groupdict().get("month")
    if day is not None and not 1 <= int(day) <= 31:
        return None
    if month is not None and month.isdigit() and not 1 <= int(month) <= 12:
        return None
    return _parsed(raw, ref)


@lru_cache(maxsize=4096)
def _parsed(raw: str, ref: date | None) -> date | None:
    """dateparser's reading of a located date (about 2 ms a call; the same date string recurs across clauses).

    A date without a year is the first one on or after ``ref``: dateparser prefers dates strictly after its base,
    so the base is the day before (a deadline written on its own day stays that day).
    """
    settings: dict[str, Any] = {
        "PREFER_DATES_FROM": "future",
        "DATE_ORDER": "DMY",
        "REQUIRE_PARTS": ["day", "month"],
        "PARSERS": ["absolute-time"],
    }
    if ref is not None:
        day_before = ref - timedelta(days=1)
        settings["RELATIVE_BASE"] = datetime(day_before.year, day_before.month, day_before.day)
    parsed = dateparser.parse(raw, languages=["en", "vi", "ru"], settings=settings)
    return parsed.date() if parsed is not None else None


def _rule(pattern: str) -> re.Pattern[str]:
    """Compile with word boundaries on both sides (Unicode-aware)."""
    return re.compile(r"(?<!\w)(?:" + pattern + r")(?!\w)")


class _Rule(NamedTuple):
    """A date phrase, how it resolves, and the words one of which every match holds (``DIGIT``: a digit)."""

    pattern: re.Pattern[str]
    resolve: Resolver
    needles: tuple[str, ...]


DIGIT = ("<digit>",)  # any decimal digit, of any script (what the rules' \d accepts)
_DIGIT_RE = re.compile(r"\d")
_NUM_GUARD = r"(?<![\d.,/])"
_RULES: tuple[_Rule, ...] = (
    # Vietnamese weekdays: "thứ X tuần sau|tới" is one mention, so it wins over plain "tuần sau".
    _Rule(_rule(r"(?:(?P<pre>trước|vào|đến|tới|hạn|hết|trong|sáng|trưa|chiều|tối)\s+)?(?P<d>thứ\s*(?P<wd>hai|ba|tư|năm|sáu|bảy|[2-7])"
           r"|(?P<sun>chủ\s*nhật|cn))(?:\s+(?:của\s+)?tuần\s+(?P<which>sau|tới|này|nay))?" + _NO_DATE_AFTER),
     _relative(_vi_weekday),
     ("thứ", "chủ", "cn")),
    _Rule(_rule(r"(?:trong|cuối)\s+tuần\s+(?:sau|tới)"), _relative(lambda _m, ref: _next_week(ref, _FRIDAY)),
     ("tuần",)),
    _Rule(_rule(r"(?:đầu\s+)?tuần\s+(?:sau|tới)"), _relative(lambda _m, ref: _next_week(ref, 0)), ("tuần",)),
    _Rule(_rule(r"(?:trong|cuối)\s+tuần(?:\s+này|\s+nay)?|tuần\s+này"),
     _relative(lambda _m, ref: _on_or_after(ref, _FRIDAY)), ("tuần",)),
    _Rule(_rule(r"(?:ngày|sáng|trưa|chiều|tối)\s+mai"), _offset(1), ("mai",)),
    _Rule(_rule(r"ngày\s+(?:kia|mốt)"), _offset(2), ("ngày",)),
    _Rule(_rule(r"hôm\s+nay|(?:sáng|trưa|chiều|tối)\s+nay|trong\s+ngày(?!\s+\d)"), _offset(0), ("nay", "ngày")),
    _Rule(_rule(r"cuối\s+tháng(?:\s+này|\s+nay)?"), _month_end_of(0), ("tháng",)),
    _Rule(_rule(r"cuối\s+tháng\s+(?:sau|tới)"), _month_end_of(1), ("tháng",)),
    _Rule(_rule(r"(?:đầu\s+)?tháng\s+(?:sau|tới)"), _month_start_of(1), ("tháng",)),
    _Rule(_rule(r"cuối\s+tháng\s+(?P<month>\d{1,2})"), _relative(_end_of_named_month), ("tháng",)),
    # Russian day words, from dateparser's data.
    _Rule(_rule("|".join(sorted(_RU_DAY_WORDS, key=len, reverse=True))),
     _relative(lambda m, ref: ref + timedelta(days=_RU_DAY_WORDS[m.group(0)])), tuple(_RU_DAY_WORDS)),
    # English relative phrases.
    _Rule(_rule(r"day\s+after\s+tomorrow"), _offset(2), ("tomorrow",)),
    _Rule(_rule(r"tomorrow|tmrw?"), _offset(1), ("tomorrow", "tmr")),
    _Rule(_rule(r"today|tonight|eod|cob|end\s+of\s+(?:the\s+)?day|close\s+of\s+business"), _offset(0),
     ("today", "tonight", "eod", "cob", "end", "close")),
    _Rule(_rule(r"end\s+of\s+(?:the\s+|this\s+)?week|eow|(?:later\s+)?this\s+week|within\s+the\s+week"),
     _relative(lambda _m, ref: _on_or_after(ref, _FRIDAY)), ("week", "eow")),
    _Rule(_rule(r"end\s+of\s+next\s+week"), _relative(lambda _m, ref: _next_week(ref, _FRIDAY)), ("week",)),
    _Rule(_rule(r"(?:early\s+)?next\s+week"), _relative(lambda _m, ref: _next_week(ref, 0)), ("week",)),
    _Rule(_rule(r"end\s+of\s+(?:the\s+|this\s+)?month|eom"), _month_end_of(0), ("month", "eom")),
    _Rule(_rule(r"end\s+of\s+next\s+month"), _month_end_of(1), ("month",)),
    _Rule(_rule(r"next\s+month"), _month_start_of(1), ("month",)),
    _Rule(_rule(rf"(?:(?P<mod>next|this|coming)\s+)?{_EN_WD_FULL}{_NO_DATE_AFTER}"), _relative(_en_weekday), ("day",)),
    _Rule(_rule(rf"(?:(?P<mod>next|this|coming)|by|on|before|until|till|due)\s+(?P<d>{_EN_WD_ABBR}){_NO_DATE_AFTER}"),
     _relative(_en_weekday), ("mon", "tue", "wed", "thu", "fri", "sat", "sun")),
    # Offsets: "in 3 days", "within two weeks", "trong 3 ngày", "sau 2 tuần"; "4 days from now", "3 ngày nữa";
    # Russian "через 3 дня", "в течение недели" (a bare unit counts one). A date after the unit ("sau 15 tháng 12")
    # makes it a date, not an offset.
    _Rule(_rule(rf"(?:within|in|after|trong(?:\s+vòng|\s+khoảng)?|sau)\s+(?P<d>(?:about\s+|the\s+next\s+)?"
                rf"{_AMOUNTS}(?:'s?\s+time|\s+time|\s+nữa|\s+tới)?)(?!\s*\d)"), _relative(_after_offset),
     tuple(_UNITS)),
    _Rule(_rule(rf"{_AMOUNTS}\s+(?:from\s+now|later|nữa|tới|sau)(?!\s*\d)"), _relative(_after_offset),
     ("now", "later", "nữa", "tới", "sau")),
    _Rule(_rule(rf"(?:через|спустя|в\s+течение)\s+(?P<d>{_AMOUNTS}|{_UNIT})"), _relative(_after_offset),
     ("через", "спустя", "течение")),
    # Absolute dates: located here, parsed by dateparser.
    _Rule(re.compile(rf"{_NUM_GUARD}(?P<d>(?P<day>\d{{1,2}})\s*(?P<sep>[/.-])\s*(?P<month>\d{{1,2}})\s*(?P=sep)\s*"
                rf"(?P<year>\d{{4}}|\d{{2}}))(?![\d.,/]?\d)"), _absolute, DIGIT),
    # Day/month without a year only after a date word, so "1/2 lô hàng" stays a fraction.
    _Rule(re.compile(rf"(?<!\w)(?:(?:ngày|trước|hạn|by|before|on|due|until|till|đến|tới|deadline:?)\s+"
                rf"(?:{_WD_LABEL},?\s+)?|{_WD_LABEL},?\s+)(?:ngày\s+)?"
                rf"{_NUM_GUARD}(?P<d>(?P<day>\d{{1,2}})/(?P<month>\d{{1,2}}))(?![\d/])"), _absolute, DIGIT),
    _Rule(re.compile(r"(?<!\w)(?P<d>(?:ngày\s+)?(?P<day>\d{1,2})\s+tháng\s+(?P<month>\d{1,2})"
                r"(?:(?:\s*(?:năm|,)\s*|\s+)(?P<year>\d{4}))?)(?!\w)"), _absolute, DIGIT),
    _Rule(re.compile(rf"(?<!\w)(?P<d>(?P<day>\d{{1,2}})\s+(?:{_VI_RU_MONTHS})(?:\s*(?:năm|,|\s+в)?\s*(?P<year>\d{{4}}))?)(?!\w)"),
     _absolute, tuple({name.split()[0] for name in _VI_RU_MONTH_NAMES})),
    _Rule(re.compile(rf"{_NUM_GUARD}(?P<d>(?P<year>\d{{4}})-(?P<month>\d{{1,2}})-(?P<day>\d{{1,2}}))(?![\d.,/]?\d)"),
     _absolute, DIGIT),
    _Rule(re.compile(rf"(?<!\w)(?P<d>{_MONTHS}\s+(?P<day>\d{{1,2}}){_ORD}(?:,?\s+(?P<year>\d{{4}}))?)(?![\w:])"),
     _absolute, DIGIT),
    _Rule(re.compile(rf"(?<!\w)(?P<d>(?P<day>\d{{1,2}}){_ORD}\s+(?:of\s+)?{_MONTHS}(?:,?\s+(?P<year>\d{{4}}))?)(?!\w)"),
     _absolute, DIGIT),
)  # fmt: skip
_RULE_WORDS = LiteralScan(word for rule in _RULES for word in rule.needles if rule.needles != DIGIT)
# As sets, so the per-text test walks the few words present, not a rule's every word (an offset rule has dozens).
_NEEDLE_SETS = tuple(frozenset(rule.needles) for rule in _RULES)
