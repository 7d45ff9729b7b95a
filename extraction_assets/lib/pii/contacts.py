"""Contact points: e-mail addresses, phone numbers and IP addresses (v4 and v6).

Phones are found in two passes over a copy of the text in which dates, times, amounts, labelled business
ids and everything earlier detectors found are blanked out:
1. phonenumbers' matcher with the tenant's region hint: numbers valid in that region, or written with `+`;
2. phone-shaped runs the first pass did not take: an international (`+`) number whose length is possible
   for its country code, or a national number of another region when a phone context word stands next to
   it ("Phone:", "call", "fax", "gọi", "телефон", "电话"). Validating a national number against every
   region costs milliseconds a candidate, so the context word is what admits it.

phonenumbers looks its metadata's patterns up through `re.compile` at each use (191,000 calls on a 2,000-document
inbox, for 98 patterns); its pattern cache (`enable_pattern_cache`: patterns of the fixed metadata, so bounded) keeps
them in a dict instead, which took 5 to 7% off the phone pass.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from functools import cache

import phonenumbers

from extraction_assets.lib.pii.placeholders import PLACEHOLDER
from extraction_assets.lib.pii.scan import Hit, Scan, blank, digits_of, labelled_business_id, near

phonenumbers.enable_pattern_cache()

# --- e-mail --------------------------------------------------------------------------------------------------------

# As real mail systems write them, not only as the RFC allows: local parts with leading or doubled dots
# ("d..steffes@", "<.hall@"), accented Latin letters (Vietnamese names); domains in Latin, accented Latin, Greek or
# Cyrillic letters (internationalised names) or punycode ("xn--"); a bare host in lower case ("first.last@localhost")
# when the address stands alone (Lotus Notes' "Enron@ENRON" names no mailbox); "%40" for the "@" of a URL-encoded
# address. The boundary checks use the local-part class, so an address glued to CJK text ("邮箱li@qq.com") is found
# without swallowing the CJK characters.
_LOCAL = r"A-Za-z0-9\u00C0-\u024F\u1E00-\u1EFF_%+\-"
_DOMAIN_CHAR = r"A-Za-z0-9\u00C0-\u024F\u1E00-\u1EFF\u0370-\u03FF\u0400-\u04FF"
_LABEL = rf"[{_DOMAIN_CHAR}](?:[{_DOMAIN_CHAR}-]{{0,61}}[{_DOMAIN_CHAR}])?"
_TLD = r"(?:[A-Za-z\u00C0-\u024F\u0370-\u03FF\u0400-\u04FF]{2,24}|xn--[A-Za-z0-9-]{1,59})"
_LOCAL_PART = rf"(?<![{_LOCAL}.])\.*[{_LOCAL}](?:[{_LOCAL}.]{{0,63}})"
_EMAIL = re.compile(
    rf"{_LOCAL_PART}(?:@|%40)(?:{_LABEL}\.)+{_TLD}(?![{_DOMAIN_CHAR}_-])"
    rf"|(?<![{_LOCAL}.])[A-Za-z][{_LOCAL}.]{{0,63}}@[a-z][a-z0-9-]{{0,62}}(?=$|[\s>)\]\"',;])"
)
# Spelled out to dodge harvesters: "name at example dot org", "name [at] example [dot] org".
_AT_WORD = r"[^\S\n]*[\[({]at[\])}][^\S\n]*|[^\S\n]+at[^\S\n]+"  # " at ", "[at]", "(at)"
_DOT_WORD = r"[^\S\n]*[\[({]dot[\])}][^\S\n]*|[^\S\n]+dot[^\S\n]+"
_SPELLED_EMAIL = re.compile(
    rf"(?i)(?<![\w.])[a-z0-9][a-z0-9._%+-]{{0,63}}(?:{_AT_WORD})"
    rf"[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?(?:(?:{_DOT_WORD})"
    rf"[a-z0-9](?:[a-z0-9-]{{0,61}}[a-z0-9])?)+(?![\w.])"
)
# Spaced out around a real "@" ("x @ example . org"): a space next to the "@" or a dot, and a last label of letters
# (so "2 @ 3.50" is a price).
_SPACED_EMAIL = re.compile(
    r"(?<![\w.])[a-z0-9][a-z0-9._%+-]{0,63}(?:[^\S\n]+@[^\S\n]*|@[^\S\n]+)"
    r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?[^\S\n]*\.[^\S\n]*)+[a-z]{2,24}(?![\w.])"
    r"|(?<![\w.])[a-z0-9][a-z0-9._%+-]{0,63}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?[^\S\n]*\.[^\S\n]*)*"
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?[^\S\n]+\.[^\S\n]*[a-z]{2,24}(?![\w.])",
    re.IGNORECASE,
)
_SPELLED_AT = re.compile(rf"(?i){_AT_WORD}")
_SPELLED_DOT = re.compile(rf"(?i){_DOT_WORD}")
# An address broken by a line wrap: the characters around a line break, joined and searched again.
# Only a break after the "@" is joined: before it, the line above may end with anything (a phone, "=20").
# The search starts at each "@" that a line break follows closely and looks back a bounded stretch for its local
# part: a pattern that led with the local part's class backtracked over every long run of letters or digits
# (quadratic: a 1 MB token stalled a whole scrub). Past `_LOCAL_REACH` characters no local part can match `_EMAIL`.
_AROUND_WRAP = re.compile(rf"[{_LOCAL}.]+@[{_DOMAIN_CHAR}.-]*\r?\n[{_DOMAIN_CHAR}.-]+")
_AT_NEAR_WRAP = re.compile(r"@[^\s@]{0,254}\n")
_LOCAL_BEFORE = re.compile(rf"[{_LOCAL}.]+")
_LOCAL_REACH = 256
_LINE_BREAK = re.compile(r"\r?\n")


def _email_norm(value: str) -> str:
    return _LINE_BREAK.sub("", value).replace("%40", "@").casefold()


def find_emails(scan: Scan) -> list[Hit]:
    """Every pattern but the line-wrapped one matches within a line and holds its rare part (an "@", or the word
    "dot"): only the lines that hold it are searched."""
    text = scan.text
    hits: list[Hit] = []
    at_lines = scan.lines_holding(("@",))
    if at_lines or "%40" in text:
        hits.extend(
            Hit("EMAIL", m.start(), m.end(), 0.95, m.group(), _email_norm(m.group()))
            for m in scan.in_lines(_EMAIL, scan.lines_holding(("@", "%40")))
        )
        if "\n" in text and _AT_NEAR_WRAP.search(text) is not None:
            hits.extend(_emails_across_wraps(text))
    hits.extend(
        Hit("EMAIL", m.start(), m.end(), 0.8, m.group(), "".join(m.group().split()).casefold())
        for m in scan.in_lines(_SPACED_EMAIL, at_lines)
    )
    if scan.mentions(("dot",)):
        for m in scan.in_lines(_SPELLED_EMAIL, scan.lines_holding(("dot",), ignore_case=True)):
            norm = _SPELLED_DOT.sub(".", _SPELLED_AT.sub("@", m.group(), count=1)).casefold()
            hits.append(Hit("EMAIL", m.start(), m.end(), 0.8, m.group(), norm))
    return hits


def _wrapped_runs(text: str) -> Iterator[re.Match[str]]:
    """Each stretch `local@domain-start<line break>domain-rest` around an "@" close before a line break, found in time
    linear in the text: the local part is looked for in a bounded window before the "@"."""
    for close_break in _AT_NEAR_WRAP.finditer(text):
        at = close_break.start()
        window = max(0, at - _LOCAL_REACH)
        local = next((m for m in _LOCAL_BEFORE.finditer(text, window, at) if m.end() == at), None)
        if local is None or (local.start() == window and window > 0 and _LOCAL_BEFORE.match(text, window - 1)):
            continue  # nothing before the "@", or a run too long to be a local part
        run = _AROUND_WRAP.match(text, local.start())
        if run is not None:
            yield run


def _emails_across_wraps(text: str) -> list[Hit]:
    hits: list[Hit] = []
    for run in _wrapped_runs(text):
        brk = _LINE_BREAK.search(run.group())
        assert brk is not None
        before = run.group()[: brk.start()]
        whole = before.rstrip(".")
        if any(m.end() == len(whole) and "." in m.group().rpartition("@")[2] for m in _EMAIL.finditer(whole)):
            continue  # a whole address ends the line; the next line's first word is not part of it
        joined = before + run.group()[brk.end() :]
        for m in _EMAIL.finditer(joined):
            if m.start() < brk.start() < m.end() and "." in m.group().rpartition("@")[2]:  # spans the break
                start = run.start() + m.start()
                end = run.start() + m.end() + (brk.end() - brk.start())
                hits.append(Hit("EMAIL", start, end, 0.85, text[start:end], _email_norm(text[start:end])))
    return hits


# --- phones --------------------------------------------------------------------------------------------------------

# Spans the phone passes must not see: dates, times and amounts (digit-led, one pattern so `re` can skip ahead to
# digits), and currency-led amounts plus placeholders. Lookbehinds sit after the first digit for the same reason.
_CURRENCY_CODES = r"USD|VND|EUR|GBP|JPY|SGD|AUD|CAD|CHF|CNY|RMB|RUB|INR|THB|KRW|HKD|VNĐ"
_CURRENCY_SUFFIXES = rf"{_CURRENCY_CODES}|đồng|руб|đ|₫|元"
_NOT_PHONE_DIGIT_LED = re.compile(
    r"\d(?<![\d.,:]\d)(?:"
    r"\d{3}-\d{2}-\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?"  # ISO date / datetime
    r"|\d{3}/\d{1,2}/\d{1,2}(?!\d)|\d?(?P<date_sep>[/.\-])\d{1,2}(?P=date_sep)\d{4}(?!\d|-\d)"  # 2026/11/30, 30-11-2026
    r"|\d?:\d{2}(?::\d{2})?(?![\d:])"  # 10:30, 10:30:15
    r"|\d{0,2}(?:,\d{3})+(?:\.\d+)?(?!\d|[.,]\d)"  # 1,234,567.89
    r"|\d{0,2}(?:\.\d{3})+,\d+(?!\d)"  # 1.234.567,89
    r"|\d{0,2}(?:\.\d{1,3}){3}(?!\d|\.\d)|\d?\.\d{1,2}\.\d{1,3}(?!\d|\.\d)"  # 192.168.1.10, versions 1.2.3
    rf"|[\d,.]*[^\S\n]?(?i:{_CURRENCY_SUFFIXES})(?![^\W\d_])"  # 15.000.000 VND, 500.000đ
    r")"
)
# Currency-led amounts and placeholders, one pattern each so that each opens with what the engine can skip to (a
# currency sign, a code's first letter, "["): together, one pattern of the three would be tried at every position.
# No match of one can overlap a match of another (an amount holds no "[", a placeholder no digit after a letter).
# Each with its `Scan.numbers` lead: how far before its first digit a match opens (a placeholder's kind: any length).
_NOT_PHONE_SYMBOL_LED: tuple[tuple[re.Pattern[str], int | None], ...] = (
    (re.compile(r"[$€£¥₫₹₽][^\S\n]?\d[\d,.]*"), 2),
    (re.compile(rf"(?:{_CURRENCY_CODES})[^\S\n]?\d[\d,.]*"), 4),
    (PLACEHOLDER, None),
)

# Cheap gate: the phone matcher is the slowest step, so skip it when no run of 7+ digits (the shortest national
# numbers the passes accept) exists.
_PHONE_HINT = re.compile(r"\d(?:[^\w\n]{0,3}\d){6,}")
# Which lines the matcher reads. Its candidates never cross a line break (no line break is phone punctuation), and
# a line break before or after a candidate counts as the start or end of the text, so a line read alone gives what
# the whole text gives there. A line can hold a valid number only with a "+" (an international number) or with as
# many digits as the region's shortest national number, separated as the matcher allows (up to four punctuation
# characters, "x" among them; the national prefix and an international one only add digits).
_LINE_HINT_DIGITS = 7
_E164 = phonenumbers.PhoneNumberFormat.E164
_WHITESPACE = re.compile(r"\s")

# A phone-shaped run: optional +, 7 to 15 digits with at most two separators between neighbours.
# An opening parenthesis only starts a number, or follows its country code or trunk prefix ("+44 (0) 20 ...",
# "8 (912) 345-67-89"): one further inside the run starts the next number ("(202) 555-0143 (202) 555-0188" is
# two), which would otherwise lend it its area code.
# Written to open with the character a match opens with ("+", "(" or a digit: a class the regex engine skips to, where
# "(?<!...)(?:\+?\d{1,4}[ .\-]{0,2}\(|\+|\()?\d..." is tried at every position), then, by that character, the same
# alternatives in the same order: after "+", a country code and "(" or the number; after "(", the number; after a
# digit, the rest of a country code or trunk prefix and "(", or the rest of the number. A "+" or "(" stands right before
# a digit: the number stretches are searched from one character before their first digit (`Scan.numbers`' lead).
_PHONE_NUMBER = r"\d(?:[ .\-)]{0,2}\d){6,14}\)?(?![0-9A-Za-z_]|[.,/-]?\d)"
_PHONE_SHAPE = re.compile(
    r"[+(\d](?<![0-9A-Za-z_+.,/-].)(?:"
    rf"(?<=\+)(?:\d{{1,4}}[ .\-]{{0,2}}\({_PHONE_NUMBER}|{_PHONE_NUMBER})"
    rf"|(?<=\(){_PHONE_NUMBER}"
    rf"|(?<=\d)(?:\d{{0,3}}[ .\-]{{0,2}}\({_PHONE_NUMBER}|(?:[ .\-)]{{0,2}}\d){{6,14}}\)?(?![0-9A-Za-z_]|[.,/-]?\d))"
    r")"
)
_PHONE_CONTEXT = re.compile(
    r"(?i)\b(?:phones?|telephone|tel|mobile|mob|cell|cellphone|fax|desk|call(?:s|ed|ing)?|ring|dial(?:led|ing)?"
    r"|sms|text(?:ed|ing)?|whatsapp|viber|zalo|telegram|wechat|hotline|helpline|contact|reach|answer(?:s|ed|ing)?"
    r"|voicemail|messages?|messaging)\b|\b(?:my|your|his|her|their|our)[^\S\n]+(?:\w+[^\S\n]+)?number(?:[^\S\n]+is\b|[^\S\n]*:)"
    r"|\b(?:office|home|work|direct|desk)[^\S\n]*:"
    r"|điện[^\S\n]+thoại|\bs?đt\b|số[^\S\n]+máy|di[^\S\n]+động|\bgọi\b|liên[^\S\n]+hệ|nhắn"
    r"|телефон|\bтел\b|\bмоб|факс|звон|связ|电话|手机|联系|致电|传真|微信"
)
# A label written after the number, vCard style: "930.167.3943 fax", "555 0143 (mobile)".
_PHONE_LABEL_AFTER = re.compile(
    r"[^\S\n]{0,3}[(\[]?(?i:mobile|mob|cell|fax|office|home|work|tel|phone|direct|desk|landline)\b"
)
_CONTEXT_BEFORE = 48
_MIN_NATIONAL_DIGITS = 7
_MAX_NATIONAL_DIGITS = 12
# An extension written after the number: "x4587", "ext. 12", "#123", "доб. 123", "máy lẻ 12".
_EXTENSION = re.compile(
    r"[^\S\n]*,?[^\S\n]*(?i:x|ext\.?|extn\.?|extension|#|доб\.?|máy[^\S\n]+lẻ)[^\S\n]*\d{1,6}(?!\w)"
)
# What a phone looks like when no word says so: an area code in parentheses, or at least three groups of two to four
# digits joined by one kind of separator and ending on a group of three or more ("53409-001-0006" is not). Thousands
# groups ("12 345 678") are amounts and the 3-2-4 shape is an SSN's, not a phone's.
_PHONE_LOOK = re.compile(
    r"\+?\(\d{1,5}\)[^\S\n]?\d{2,5}(?:[ .\-]\d{2,5}){0,2}"
    r"|(?!\d{3}[ .\-]\d{2}[ .\-]\d{4}$)\d{2,4}(?P<sep>[ .\-])\d{2,4}(?:(?P=sep)\d{2,4})*(?P=sep)\d{3,5}"
)
_AREA_CODE_BEFORE = re.compile(r"(?<![\w+(])\(\d{1,5}\)[^\S\n]?\Z")
_AREA_CODE_REACH = 8
_THOUSANDS = re.compile(r"\d{1,3}(?:([ .])\d{3})(?:\1\d{3})*")


def _blocked_spans(scan: Scan, runs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    text = scan.text
    blocked = [m.span() for m in scan.numbers(_NOT_PHONE_DIGIT_LED, lead=0)]
    blocked.extend(m.span() for pattern, lead in _NOT_PHONE_SYMBOL_LED for m in scan.numbers(pattern, lead=lead))
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
        number = _possible_international(value)
        if number is None:
            return None
        return Hit("PHONE", start, end, 0.8, value, phonenumbers.format_number(number, _E164))
    national = digits_of(value).removeprefix("0")
    if not _MIN_NATIONAL_DIGITS <= len(national) <= _MAX_NATIONAL_DIGITS or len(set(national)) == 1:
        return None
    label_after = _PHONE_LABEL_AFTER.match(visible, end) is not None
    if label_after or near(_PHONE_CONTEXT, visible, start, end, _CONTEXT_BEFORE):
        return Hit("PHONE", start, end, 0.75, value, digits_of(value))
    if _looks_like_a_phone(value) and valid_in_some_region(digits_of(value)):
        return Hit("PHONE", start, end, 0.7, value, digits_of(value))
    return None


def _looks_like_a_phone(value: str) -> bool:
    return _PHONE_LOOK.fullmatch(value) is not None and _THOUSANDS.fullmatch(value) is None


@cache
def _region_patterns() -> tuple[tuple[str, re.Pattern[str] | None, frozenset[int], re.Pattern[str]], ...]:
    """Per region: its national prefix for parsing, possible lengths and general pattern, for a cheap pre-check."""
    rows = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        md = phonenumbers.PhoneMetadata.metadata_for_region(region)
        if md is None or md.general_desc is None or md.general_desc.national_number_pattern is None:
            continue
        prefix = re.compile(md.national_prefix_for_parsing) if md.national_prefix_for_parsing else None
        lengths = frozenset(md.general_desc.possible_length or ())
        rows.append((region, prefix, lengths, re.compile(md.general_desc.national_number_pattern)))
    return tuple(rows)


def valid_in_some_region(digits: str) -> bool:
    """Whether a national number (as written, trunk prefix included) is a valid phone number of any region.

    phonenumbers' full parse costs tens of microseconds a region, so each region's length and general pattern
    are checked first and only the few regions that pass are parsed and validated.
    """
    for region, prefix, lengths, general in _region_patterns():
        candidates = [digits]
        if prefix is not None and (stripped := prefix.match(digits)) is not None and stripped.end() > 0:
            candidates.append(digits[stripped.end() :])
        if not any(len(c) in lengths and general.fullmatch(c) for c in candidates):
            continue
        try:
            number = phonenumbers.parse(digits, region)
        except phonenumbers.NumberParseException:
            continue
        if phonenumbers.is_valid_number_for_region(number, region):
            return True
    return False


def _area_code_start(visible: str, start: int, end: int) -> int:
    """Where a number found in the tenant's region really starts: an area code in parentheses right before it
    ("(11) 96123-4567", a Brazilian mobile whose last nine digits pass as a Vietnamese one) belongs to it when
    the whole is a phone of some region."""
    area = _AREA_CODE_BEFORE.search(visible, max(0, start - _AREA_CODE_REACH), start)
    if area is None or not _looks_like_a_phone(visible[area.start() : end]):
        return start
    return area.start() if valid_in_some_region(digits_of(visible[area.start() : end])) else start


def _with_extension(text: str, hit: Hit) -> Hit:
    ext = _EXTENSION.match(text, hit.end)
    if ext is None:
        return hit
    return hit._replace(end=ext.end(), value=text[hit.start : ext.end()])


def _shaped_phones(scan: Scan, visible: str) -> list[Hit]:
    """Pass 2; a run that fails whole is retried without its leading groups (a postcode glued in front)."""
    text = scan.text
    hits: list[Hit] = []
    for m in scan.numbers(_PHONE_SHAPE, visible, lead=1, digits=7):
        start, end = m.span()
        while start < end:
            hit = _context_phone(text, visible, start, end)
            if hit is not None:
                hits.append(_with_extension(text, hit))
                break
            gap = _WHITESPACE.search(visible, start, end)
            if gap is None:
                break
            start = gap.end()
    return hits


@cache
def _line_hint(region: str) -> re.Pattern[str]:
    """A line the matcher must read, for `region`: see `_LINE_HINT_DIGITS`."""
    md = phonenumbers.PhoneMetadata.metadata_for_region(region)
    lengths = md.general_desc.possible_length if md is not None and md.general_desc is not None else ()
    digits = min(_LINE_HINT_DIGITS, *lengths) if lengths else 1
    # "[+\uFF0B]|\d(...)", opening with one class the regex engine skips to
    return re.compile(rf"[+\uFF0B\d](?:(?<=[+\uFF0B])|(?:(?:[^\w\n]|[xX]){{0,4}}\d){{{digits - 1},}})")


def _matcher_lines(scan: Scan, visible: str) -> list[tuple[int, int]]:
    """The spans of the lines (without their line break) the matcher must read, in text order: a line can hold a
    number only where it holds digits."""
    lines: list[tuple[int, int]] = []
    for m in scan.numbers(_line_hint(scan.region), visible):
        if lines and m.start() < lines[-1][1]:
            continue  # another hint on a line already taken
        end = visible.find("\n", m.end())
        lines.append((visible.rfind("\n", 0, m.start()) + 1, len(visible) if end == -1 else end))
    return lines


# A "+"-led run of digit groups, one separator between groups: where two numbers written back to back start (lead 1).
_INTERNATIONAL_RUN = re.compile(r"\+(?<![\w+]\+)\d{1,3}(?:[ .\-]\d{1,5}){2,9}(?![\w]|[.\-]\d)")


def _leading_international(scan: Scan, visible: str) -> list[Hit]:
    """Pass 0: a "+" run too long to be one number ("+1 555 010 0199 090 123 4567", two numbers back to back).

    The matcher would take a valid-looking piece from its middle and leave both ends in clear, so the longest
    leading group sequence that is a possible international number is taken first; the rest is read as usual.
    """
    text = scan.text
    hits: list[Hit] = []
    for m in scan.numbers(_INTERNATIONAL_RUN, visible, lead=1, digits=3):
        if _possible_international(m.group()) is not None:
            continue
        group_ends = [g.start() for g in re.finditer(r"[ .\-]", m.group())][1:]
        for end in reversed(group_ends):
            value = text[m.start() : m.start() + end]
            if len(digits_of(value)) > _MIN_NATIONAL_DIGITS and (number := _possible_international(value)) is not None:
                norm = phonenumbers.format_number(number, _E164)
                hits.append(Hit("PHONE", m.start(), m.start() + end, 0.8, value, norm))
                break
    return hits


def _possible_international(value: str) -> phonenumbers.PhoneNumber | None:
    """`value` ("+" and digits) parsed, if it is a possible international number."""
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        return None
    return number if phonenumbers.is_possible_number(number) else None


def _matched(scan: Scan, line: str) -> list[tuple[int, int, phonenumbers.PhoneNumber]]:
    """What phonenumbers' matcher finds in `line` with the scan's region, read once per document
    (`scan.matched_lines`)."""
    key = (scan.region, line)
    found = scan.matched_lines.get(key)
    if found is None:
        matcher = phonenumbers.PhoneNumberMatcher(line, scan.region, leniency=phonenumbers.Leniency.VALID)
        found = scan.matched_lines[key] = [(m.start, m.end, m.number) for m in matcher]
    return found


def find_phones(scan: Scan) -> list[Hit]:
    """The three passes (a "+" run too long for one number, the matcher, phone shapes), on a same-length copy
    with dates, amounts, labelled ids and earlier hits blanked out.

    Blanking (rather than filtering matches afterwards) also stops the matcher from gluing a date or an
    invoice number onto a neighbouring phone and then rejecting the whole run. Earlier hits include cards,
    so a Luhn-valid card is never re-read as a phone.
    """
    text = scan.text
    runs = [m.span() for m in scan.numbers(_PHONE_HINT, lead=0, digits=7)]
    if not runs:
        return []
    visible = blank(text, _blocked_spans(scan, runs))
    if not scan.next_number(_PHONE_HINT, 0, visible, lead=0, digits=7):
        return []
    hits = _leading_international(scan, visible)
    visible = blank(visible, [(h.start, h.end) for h in hits])
    for lo, hi in _matcher_lines(scan, visible):
        for found_start, found_end, number in _matched(scan, visible[lo:hi]):
            start = _area_code_start(visible, lo + found_start, lo + found_end)
            end = lo + found_end
            value = text[start:end]
            score = 0.95 if near(_PHONE_CONTEXT, visible, start, end, _CONTEXT_BEFORE) else 0.9
            norm = phonenumbers.format_number(number, _E164) if start == lo + found_start else digits_of(value)
            hits.append(Hit("PHONE", start, end, score, value, norm))
    rest = blank(visible, [(h.start, h.end) for h in hits])
    hits.extend(_shaped_phones(scan, rest))
    return hits


# --- IP addresses --------------------------------------------------------------------------------------------------

# A CIDR prefix length belongs to the address it follows ("192.168.1.0/24"); a zone id too ("fe80::1%eth0").
_IPV4 = re.compile(
    r"(?P<address>\d(?<![\w.]\d)\d{0,2}\.(?:\d{1,3}\.){2}\d{1,3})(?![\w]|\.\d)(?:/(?:3[0-2]|[12]?\d)(?!\d))?"
)
# Colon-separated hex groups; ipaddress decides (times such as 10:30:15 and MAC addresses fail it). Two to seven
# groups `[0-9A-Fa-f]{0,4}:`, then the last; written to open with the class an address opens with (a hex digit or ":",
# which the engine skips to; a lookbehind first is tried at every position) and the test of the character before it
# after that one: the first group is that ":" alone, or that hex digit and up to three more before its ":".
_IPV6 = re.compile(
    r"(?P<address>[0-9A-Fa-f:](?<![0-9A-Za-z:.].)(?:(?<=:)|(?<=[0-9A-Fa-f])[0-9A-Fa-f]{0,3}:)(?:[0-9A-Fa-f]{0,4}:){1,6}"
    r"(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?)"
    r"(?![0-9A-Za-z:]|\.\d)(?:%[0-9A-Za-z]{1,16}|/(?:12[0-8]|1[01]\d|[1-9]?\d)(?!\d))?"
)
_HEX_GROUP = re.compile(r"[0-9A-Fa-f]{1,4}")


def find_ips(scan: Scan) -> list[Hit]:
    """IPv4 and IPv6 addresses (with their prefix length or zone id); `ipaddress` validates the address part."""
    text = scan.text
    hits: list[Hit] = []
    for m in scan.numbers(_IPV4, lead=0, digits=4) if text.count(".") >= 3 else ():
        try:
            address = ipaddress.IPv4Address(m.group("address"))  # rejects octets > 255 and leading zeros
        except ValueError:
            continue
        hits.append(Hit("IP_ADDRESS", m.start(), m.end(), 0.9, m.group(), str(address)))
    if "::" in text or text.count(":") >= 6:  # six when an IPv4 tail takes the last two groups
        for m in scan.numbers(_IPV6):
            part = m.group("address")
            groups = _HEX_GROUP.findall(part)
            if len(groups) < 2 or not any(c.isdigit() for c in part):
                continue  # "::", "a::b" or "std::" are code or punctuation far more often than an address
            if len(groups) == 2 and all(g.isdigit() and len(g) <= 2 for g in groups):
                continue  # "23::00": a time with a doubled colon (seen in real news text), not an address
            try:
                v6 = ipaddress.IPv6Address(part)
            except ValueError:
                continue
            hits.append(Hit("IP_ADDRESS", m.start(), m.end(), 0.9, m.group(), str(v6)))
    return hits
