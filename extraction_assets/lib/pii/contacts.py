"""Contact points: e-mail addresses, phone numbers and IP addresses (v4 and v6).

Phones are found in two passes over a copy of the text in which dates, times, amounts, labelled business
ids and everything earlier detectors found are blanked out:
1. phonenumbers' matcher with the tenant's region hint: numbers valid in that region, or written with `+`;
2. phone-shaped runs the first pass did not take: an international (`+`) number whose length is possible
   for its country code, or a national number of another region when a phone context word stands next to
   it ("Phone:", "call", "fax", "gọi", "телефон", "电话"). Validating a national number against every
   region costs milliseconds a candidate, so the context word is what admits it.
"""

from __future__ import annotations

import ipaddress
import re

import phonenumbers

from extraction_assets.lib.pii.scan import Hit, Scan, blank, digits_of, labelled_business_id, near

# --- e-mail --------------------------------------------------------------------------------------------------------

# Local parts may use accented Latin letters (Vietnamese names); the boundary checks use the same class, so an
# address glued to CJK text ("邮箱li@qq.com") is still found without swallowing the CJK characters.
_LOCAL = r"A-Za-z0-9\u00C0-\u024F\u1E00-\u1EFF_%+\-"
_EMAIL = re.compile(
    rf"(?<![{_LOCAL}.])[{_LOCAL}](?:[{_LOCAL}.]{{0,62}}[{_LOCAL}])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9_-])"
)


def find_emails(scan: Scan) -> list[Hit]:
    if "@" not in scan.text:
        return []
    return [
        Hit("EMAIL", m.start(), m.end(), 0.95, m.group(), m.group().casefold())
        for m in _EMAIL.finditer(scan.text)
        if ".." not in m.group()
    ]


# --- phones --------------------------------------------------------------------------------------------------------

# Spans the phone passes must not see: dates, times and amounts (digit-led, one pattern so `re` can skip ahead to
# digits), and currency-led amounts plus placeholders. Lookbehinds sit after the first digit for the same reason.
_CURRENCY_CODES = r"USD|VND|EUR|GBP|JPY|SGD|AUD|CAD|CHF|CNY|RMB|RUB|INR|THB|KRW|HKD|VNĐ"
_CURRENCY_SUFFIXES = rf"{_CURRENCY_CODES}|đồng|руб|đ|₫|元"
_NOT_PHONE_DIGIT_LED = re.compile(
    r"\d(?<![\d.,:]\d)(?:"
    r"\d{3}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"  # ISO date / datetime
    r"|\d{3}/\d{1,2}/\d{1,2}(?!\d)|\d?[/.]\d{1,2}[/.]\d{4}(?!\d)"  # 2026/11/30, 30/11/2026, 30.11.2026
    r"|\d?:\d{2}(?::\d{2})?(?![\d:])"  # 10:30, 10:30:15
    r"|\d{0,2}(?:,\d{3})+(?:\.\d+)?(?!\d|[.,]\d)"  # 1,234,567.89
    r"|\d{0,2}(?:\.\d{3})+,\d+(?!\d)"  # 1.234.567,89
    r"|\d{0,2}(?:\.\d{1,3}){3}(?!\d|\.\d)|\d?\.\d{1,2}\.\d{1,3}(?!\d|\.\d)"  # 192.168.1.10, versions 1.2.3
    rf"|[\d,.]*[^\S\n]?(?i:{_CURRENCY_SUFFIXES})(?![^\W\d_])"  # 15.000.000 VND, 500.000đ
    r")"
)
_NOT_PHONE_SYMBOL_LED = re.compile(rf"(?:[$€£¥₫₹₽]|{_CURRENCY_CODES})[^\S\n]?\d[\d,.]*|\[[A-Z][A-Z_]*_\d+\]")

# Cheap gate: the phone matcher is the slowest step, so skip it when no run of 7+ digits (the shortest national
# numbers the passes accept) exists.
_PHONE_HINT = re.compile(r"\d(?:[^\w\n]{0,3}\d){6,}")
_E164 = phonenumbers.PhoneNumberFormat.E164
_WHITESPACE = re.compile(r"\s")

# A phone-shaped run: optional +, 7 to 15 digits with at most two separators between neighbours.
_PHONE_SHAPE = re.compile(r"(?<![0-9A-Za-z_+.,/-])\+?\(?\d(?:[ .\-()]{0,2}\d){6,14}\)?(?![0-9A-Za-z_]|[.,/-]?\d)")
_PHONE_CONTEXT = re.compile(
    r"(?i)\b(?:phones?|telephone|tel|mobile|mob|cell|cellphone|fax|call(?:s|ed|ing)?|ring|dial(?:led|ing)?"
    r"|sms|text(?:ed|ing)?|whatsapp|viber|zalo|telegram|wechat|hotline|helpline|contact|reach|answer(?:s|ed|ing)?"
    r"|voicemail|messages?|messaging)\b|\b(?:my|your|his|her|their|our)[^\S\n]+number(?:[^\S\n]+is\b|[^\S\n]*:)"
    r"|\b(?:office|home|work|direct)[^\S\n]*:"
    r"|điện[^\S\n]+thoại|\bs?đt\b|số[^\S\n]+máy|di[^\S\n]+động|\bgọi\b|liên[^\S\n]+hệ|nhắn"
    r"|телефон|\bтел\b|\bмоб|факс|звон|связ|电话|手机|联系|致电|传真|微信"
)
# A label written after the number, vCard style: "930.167.3943 fax", "555 0143 (mobile)".
_PHONE_LABEL_AFTER = re.compile(
    r"[^\S\n]{0,3}[(\[]?(?i:mobile|mob|cell|fax|office|home|work|tel|phone|direct|landline)\b"
)
_CONTEXT_BEFORE = 48
_MIN_NATIONAL_DIGITS = 7
_MAX_NATIONAL_DIGITS = 12


def _blocked_spans(scan: Scan, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    text = scan.text
    blocked = [m.span() for m in _NOT_PHONE_DIGIT_LED.finditer(text)]
    blocked.extend(m.span() for m in _NOT_PHONE_SYMBOL_LED.finditer(text))
    blocked.extend((h.start, h.end) for h in scan.hits)
    for start, end in runs:
        if labelled_business_id(text, start):
            gap = _WHITESPACE.search(text, start, end)
            blocked.append((start, gap.start() if gap else end))  # the id itself, not a phone written after it
    return blocked


def _context_phone(text: str, visible: str, start: int, end: int) -> Hit | None:
    """A phone-shaped run the region-aware pass rejected: international and possible, or national with context."""
    value = text[start:end]
    if value.startswith("+"):
        try:
            number = phonenumbers.parse(value, None)
        except phonenumbers.NumberParseException:
            return None
        if not phonenumbers.is_possible_number(number):
            return None
        return Hit("PHONE", start, end, 0.8, value, phonenumbers.format_number(number, _E164))
    national = digits_of(value).removeprefix("0")
    if not _MIN_NATIONAL_DIGITS <= len(national) <= _MAX_NATIONAL_DIGITS or len(set(national)) == 1:
        return None
    label_after = _PHONE_LABEL_AFTER.match(visible, end) is not None
    if not label_after and not near(_PHONE_CONTEXT, visible, start, end, _CONTEXT_BEFORE):
        return None
    return Hit("PHONE", start, end, 0.75, value, digits_of(value))


def _shaped_phones(text: str, visible: str) -> list[Hit]:
    """Pass 2; a run that fails whole is retried without its leading groups (a postcode glued in front)."""
    hits: list[Hit] = []
    for m in _PHONE_SHAPE.finditer(visible):
        start, end = m.span()
        while start < end:
            hit = _context_phone(text, visible, start, end)
            if hit is not None:
                hits.append(hit)
                break
            gap = _WHITESPACE.search(visible, start, end)
            if gap is None:
                break
            start = gap.end()
    return hits


def find_phones(scan: Scan) -> list[Hit]:
    """Both passes, on a same-length copy with dates, amounts, labelled ids and earlier hits blanked out.

    Blanking (rather than filtering matches afterwards) also stops the matcher from gluing a date or an
    invoice number onto a neighbouring phone and then rejecting the whole run. Earlier hits include cards,
    so a Luhn-valid card is never re-read as a phone.
    """
    text = scan.text
    runs = [m.span() for m in _PHONE_HINT.finditer(text)]
    if not runs:
        return []
    visible = blank(text, _blocked_spans(scan, runs))
    if not _PHONE_HINT.search(visible):
        return []
    hits: list[Hit] = []
    for m in phonenumbers.PhoneNumberMatcher(visible, scan.region, leniency=phonenumbers.Leniency.VALID):
        value = text[m.start : m.end]
        score = 0.95 if near(_PHONE_CONTEXT, visible, m.start, m.end, _CONTEXT_BEFORE) else 0.9
        hits.append(Hit("PHONE", m.start, m.end, score, value, phonenumbers.format_number(m.number, _E164)))
    rest = blank(visible, [(h.start, h.end) for h in hits])
    hits.extend(_shaped_phones(text, rest))
    return hits


# --- IP addresses --------------------------------------------------------------------------------------------------

_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")
# Colon-separated hex groups; ipaddress decides (times such as 10:30:15 and MAC addresses fail it).
_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?(?![0-9A-Za-z:]|\.\d)"
)
_HEX_GROUP = re.compile(r"[0-9A-Fa-f]{1,4}")


def find_ips(scan: Scan) -> list[Hit]:
    hits: list[Hit] = []
    for m in _IPV4.finditer(scan.text):
        try:
            address = ipaddress.IPv4Address(m.group())  # rejects octets > 255 and leading zeros
        except ValueError:
            continue
        hits.append(Hit("IP_ADDRESS", m.start(), m.end(), 0.9, m.group(), str(address)))
    if "::" in scan.text or scan.text.count(":") >= 7:
        for m in _IPV6.finditer(scan.text):
            if len(_HEX_GROUP.findall(m.group())) < 2 or not any(c.isdigit() for c in m.group()):
                continue  # "::", "a::b" or "std::" are code or punctuation far more often than an address
            try:
                v6 = ipaddress.IPv6Address(m.group())
            except ValueError:
                continue
            hits.append(Hit("IP_ADDRESS", m.start(), m.end(), 0.9, m.group(), str(v6)))
    return hits
