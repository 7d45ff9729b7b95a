"""Typed values found in scrubbed text, each with its exact span: amounts, organisations, masked PII.

Heuristic packs build records from these; every value keeps the `[start, end)` it was read from,
so the span can be quoted verbatim as evidence. Extractors only ever see scrubbed text, where
e-mail addresses and phone numbers are placeholders such as `[EMAIL_1]`: those placeholders are
the values here, and grounding maps their evidence back to the raw text.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import regex
from price_parser import Price

from extraction_assets.lib.pii import PLACEHOLDER

__all__ = [
    "Found",
    "Money",
    "find_amounts",
    "find_organisations",
    "find_placeholders",
]

# ISO 4217 codes written as words, and the symbols and local words that stand for one.
_CODES = "USD|EUR|GBP|JPY|CNY|RMB|VND|RUB|BYN|KZT|UAH|INR|SGD|AUD|CAD|CHF|HKD|KRW|THB|MYR|IDR|NZD|SEK|NOK|DKK"
_CURRENCY_WORDS: dict[str, str] = {
    "$": "USD", "us$": "USD", "usd": "USD", "dollars": "USD", "dollar": "USD", "€": "EUR", "euro": "EUR",
    "euros": "EUR", "£": "GBP", "¥": "JPY", "円": "JPY", "元": "CNY", "rmb": "CNY", "人民币": "CNY",
    "₫": "VND", "đ": "VND", "đồng": "VND", "vnđ": "VND", "₽": "RUB", "руб": "RUB", "руб.": "RUB",
    "рублей": "RUB", "рубля": "RUB", "рубль": "RUB", "₹": "INR", "₩": "KRW", "฿": "THB", "s$": "SGD",
    "a$": "AUD", "c$": "CAD", "hk$": "HKD", "бел. руб.": "BYN",
}  # fmt: skip
_MULTIPLIERS: dict[str, int] = {
    "thousand": 10**3, "k": 10**3, "nghìn": 10**3, "ngàn": 10**3, "тыс": 10**3, "тыс.": 10**3,
    "million": 10**6, "millions": 10**6, "mln": 10**6, "mm": 10**6, "triệu": 10**6, "млн": 10**6, "млн.": 10**6,
    "billion": 10**9, "billions": 10**9, "bn": 10**9, "tỷ": 10**9, "tỉ": 10**9, "млрд": 10**9, "млрд.": 10**9,
    "万": 10**4, "亿": 10**8,
}  # fmt: skip
# Amounts implied to be đồng when no currency is written ("2 triệu").
_VND_MULTIPLIERS = frozenset({"triệu", "tỷ", "tỉ"})

_NUMBER = r"\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?:[.,]\d{1,2})?(?!\d)|\d+(?:[.,]\d+)?"
_MULT = r"(?:thousand|millions?|mln|mm|billions?|bn|nghìn|ngàn|triệu|tỷ|tỉ|тыс\.?|млн\.?|млрд\.?|万|亿|k(?![^\W\d_]))"
_PREFIX_CURRENCY = rf"(?:US\$|HK\$|[SAC]\$|[$€£¥₫₽₹₩฿]|(?:{_CODES})(?![^\W\d_]))"
_SUFFIX_CURRENCY = (
    rf"(?:{_CODES}|VNĐ|đồng|dollars?|euros?|рублей|рубля|рубль|руб\.?|бел\.\s?руб\.?|[€₫₽元円đ]|人民币)(?![^\W\d_])"
)
_AMOUNT = regex.compile(
    rf"(?<![\w.,])(?:(?P<pre>{_PREFIX_CURRENCY})\s?(?P<num>{_NUMBER})(?:\s?(?P<mult>{_MULT}))?"
    rf"|(?P<num2>{_NUMBER})(?:\s?(?P<mult2>{_MULT}))?(?:\s?(?P<suf>{_SUFFIX_CURRENCY}))?)",
    regex.IGNORECASE,
)

_LEGAL_SUFFIX = (
    r"(?:Inc|LLC|L\.L\.C|Ltd|Limited|Corp|Corporation|Co|Company|GmbH|AG|S\.A|SA|SAS|PLC|plc|LLP|LP|JSC|Pty"
    r"|Group|Holdings|Partners|Industries|Bank)"
)
_CAPITALISED = r"(?:\p{Lu}[\p{L}\p{M}&'’.-]*|\p{Lu}{2,}|&)"
_ORGANISATION = regex.compile(
    # Latin names ending in a legal suffix: "Northwind Packaging Inc.", "Acme Fixtures, LLC"
    rf"(?P<en>{_CAPITALISED}(?:[ \t]+{_CAPITALISED}){{0,5}},?[ \t]+{_LEGAL_SUFFIX}\b\.?)"
    # Vietnamese "Công ty TNHH Bao Bì Việt", Russian 'ООО «Ромашка»', Chinese "上海某某有限公司"
    r"|(?P<vi>(?:Công ty|CÔNG TY|Cty)(?:[ \t]+(?:TNHH|CP|Cổ phần|cổ phần|CỔ PHẦN|MTV))*"
    r"(?:[ \t]+\p{Lu}[\p{L}\p{M}&-]*){1,6})"
    r"|(?P<ru>(?:ООО|ОАО|ЗАО|ПАО|АО|ИП|ТОО|ОДО|УП)[ \t]*[«\"„“][^»\"“”\n]{1,60}[»\"“”])"
    r"|(?P<zh>\p{Han}{2,20}?(?:股份有限公司|有限责任公司|有限公司|集团|公司))"
)
# Sentence-initial words that are not part of a company name ("The", "Dear", "Thanks").
_NOT_NAME_START = frozenset({
    "the", "our", "your", "dear", "hi", "hello", "thanks", "from", "to", "at", "with", "for", "when", "if", "and",
    "but", "as", "by", "in", "on", "of", "that", "this", "while", "after", "before", "since", "because", "said",
})  # fmt: skip
_ABBREVIATED_SUFFIX = regex.compile(r"(?:Inc|Ltd|Corp|Co|Pty|S\.A|L\.L\.C)\.$")


@dataclass(frozen=True)
class Found:
    """A value and the exact span of text it was read from."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Money(Found):
    """An amount of money; `currency` is an ISO 4217 code where the text names one."""

    amount: float = 0.0
    currency: str | None = None


def _currency(token: str | None) -> str | None:
    if not token:
        return None
    key = " ".join(token.split()).lower()
    return _CURRENCY_WORDS.get(key) or (token.upper() if regex.fullmatch(_CODES, token, regex.IGNORECASE) else None)


def find_amounts(text: str, start: int = 0, end: int | None = None) -> list[Money]:
    """Amounts of money in `text[start:end]`: a number with a currency (before or after) or a multiplier.

    A bare number without a currency is not money ("300 units", "2026"), except đồng amounts written
    with triệu/tỷ. Thousands separators of any locale ("1,200.50", "1.200,50", "1 200") are read by
    price-parser; multipliers such as "million" or "triệu" scale the amount.
    """
    stop = len(text) if end is None else end
    found: list[Money] = []
    for m in _AMOUNT.finditer(text, start, stop):
        number = m.group("num") or m.group("num2")
        multiplier_word = (m.group("mult") or m.group("mult2") or "").lower()
        currency = _currency(m.group("pre") or m.group("suf"))
        if currency is None and multiplier_word in _VND_MULTIPLIERS:
            currency = "VND"
        if currency is None:
            continue
        parsed = Price.fromstring(number).amount
        if parsed is None:
            continue
        value = parsed * Decimal(_MULTIPLIERS.get(multiplier_word, 1))
        span_end = m.end()
        while span_end > m.start() and text[span_end - 1].isspace():
            span_end -= 1
        found.append(Money(m.start(), span_end, text[m.start() : span_end], amount=float(value), currency=currency))
    return found


def find_organisations(text: str, start: int = 0, end: int | None = None) -> list[Found]:
    """Company names marked by a legal form: "... Inc.", "Công ty TNHH ...", 'ООО «...»', "...有限公司"."""
    stop = len(text) if end is None else end
    found: list[Found] = []
    for m in _ORGANISATION.finditer(text, start, stop):
        lo, hi = m.span()
        words = text[lo:hi].split()
        while len(words) > 2 and words[0].lower().strip(",") in _NOT_NAME_START:
            lo = text.index(words[1], lo + len(words[0]))
            words = words[1:]
        if m.group("en") and len(words) < 2:
            continue
        if text[hi - 1] == "." and not _ABBREVIATED_SUFFIX.search(text, lo, hi):
            hi -= 1  # the sentence's full stop, not part of the name
        found.append(Found(lo, hi, text[lo:hi]))
    return found


def find_placeholders(text: str, kind: str, start: int = 0, end: int | None = None) -> list[Found]:
    """The scrubber's placeholders of one kind (`EMAIL`, `PHONE`, ...) in `text[start:end]`."""
    stop = len(text) if end is None else end
    return [
        Found(m.start(), m.end(), m.group()) for m in PLACEHOLDER.finditer(text, start, stop) if m.group("kind") == kind
    ]
