"""The PII scrubber: find personal data and secrets, replace them with stable placeholders.

Extractors (and any model behind them) only see scrubbed text; the offset map
returned with it lets evidence found there be pointed back at the raw document.

Each kind has one detector: a precompiled pattern plus a validation step
(checksums via `stdnum`, phone numbers via `phonenumbers`, IPs via `ipaddress`),
so look-alikes such as invoice numbers, ISO dates and amounts stay readable.
Adding a kind means writing one finder and adding one `Detector` to `DETECTORS`.

Overlap policy: detectors report candidates independently; when two overlap, the
one whose kind comes first in `DETECTORS` wins (CREDENTIAL > CREDIT_CARD > IBAN >
US_SSN > EMAIL > PHONE > IP_ADDRESS), then the longer one, then the earlier one.
The loser is dropped entirely, so every character is masked at most once.
"""

from __future__ import annotations

import ipaddress
import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import phonenumbers
from pydantic import BaseModel
from stdnum import iban as std_iban
from stdnum import luhn
from stdnum.iso7064 import mod_97_10
from stdnum.us import ssn as std_ssn

from extraction_assets.lib.offsets import OffsetMap

SCRUBBER_VERSION = "pii-v1"
DEFAULT_REGION = "US"


class Detection(BaseModel):
    """One masked (or found) value; `value` is raw PII, so never persist it outside the raw zone."""

    kind: str
    start: int
    end: int
    score: float
    value: str


class ScrubResult(BaseModel):
    """Scrubbed text plus what is needed to audit it and map offsets back to the raw text.

    `counts` has one entry per kind actually masked (occurrences, not distinct values); `detections` are the
    masked spans in raw-text order and carry raw values.
    """

    text: str
    offset_map: OffsetMap
    counts: dict[str, int]
    detections: list[Detection]
    scrubber_version: str = SCRUBBER_VERSION


class _Hit(NamedTuple):
    """Internal candidate; `norm` decides which occurrences share a placeholder."""

    kind: str
    start: int
    end: int
    score: float
    value: str
    norm: str


@dataclass
class _Scan:
    """Per-text state shared by the detectors of one run."""

    text: str
    region: str
    hits: list[_Hit] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Detector:
    """A kind and the function that finds its (already validated) occurrences."""

    kind: str
    find: Callable[[_Scan], list[_Hit]]


def _squash(value: str) -> str:
    return "".join(value.split()).casefold()


_NON_DIGIT = re.compile(r"\D")


def _digits(value: str) -> str:
    return _NON_DIGIT.sub("", value)


# --- context checks shared by the numeric detectors --------------------------------------------------------------

# A business-id label ending right before a number ("INV-", "Order No. ", "PO #", "ID: ", "订单号："):
# such numbers are invoices, orders and ids, not phones, cards or SSNs.
_LABEL_BEFORE = re.compile(
    r"(?:(?i:(?<![^\W\d_])(?:invoice|inv|order|ord|po|p\.o|purchase[^\S\n]+order|id|ref|reference|ticket|sku"
    r"|tracking|contract|receipt|account|acct|transaction|txn|shipment|vat|tax|mst|mã|hóa[^\S\n]+đơn|hoá[^\S\n]+đơn"
    r"|đơn[^\S\n]+hàng|заказ|сч[её]т))|订单|发票|编号|单号)"
    r"\.?[^\S\n]*(?i:(?:no|nr|num|number|số|号|№|#)\.?[^\S\n]*)?[:#№：\-]?[^\S\n]*[#№]?[^\S\n]*\Z"
)
_LABEL_WINDOW = 40


def _labelled_business_id(text: str, start: int) -> bool:
    return _LABEL_BEFORE.search(text, max(0, start - _LABEL_WINDOW), start) is not None


# Spans the phone matcher must not see: dates, times and amounts (digit-led, one pattern so `re` can skip ahead to
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


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
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


# --- detectors ---------------------------------------------------------------------------------------------------

_CREDENTIAL_KEYS = (
    r"password|passwd|pwd|passphrase|secret|apikey|api[_-]?key|(?:secret|access|private)[_-]?key|token"
    r"|mật[^\S\n]+khẩu|пароль"
)


class _CredentialPattern(NamedTuple):
    """A secret's shape; `groups` names the part to mask (none = all), `hints` are cheap lower-case pre-checks."""

    pattern: re.Pattern[str]
    groups: tuple[str, ...] = ()
    hints: tuple[str, ...] = ()


_CREDENTIAL_PATTERNS: tuple[_CredentialPattern, ...] = (
    # PEM private key blocks (a truncated paste is masked to the end of the text).
    _CredentialPattern(
        re.compile(
            r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----.*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)", re.S
        ),
        hints=("private key-----",),
    ),
    # Provider keys and JWTs: the shape alone identifies them.
    _CredentialPattern(
        re.compile(
            r"(?<![\w-])(?:sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"  # OpenAI style
            r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
            r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
            r"|gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
            r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab
            r"|xox[abposr]-[A-Za-z0-9-]{10,}"  # Slack
            r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
            r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"  # JWT
            r")(?![\w-])"
        ),
    ),
    # Bearer tokens: mask the token, keep the scheme.
    _CredentialPattern(
        re.compile(r"(?i:\bbearer)[^\S\n]+(?P<v>[A-Za-z0-9\-._~+/]{8,}=*)"), groups=("v",), hints=("bearer",)
    ),
    # key=value / key: value pairs: mask the value only.
    _CredentialPattern(
        re.compile(
            rf"(?i:(?<![^\W_])(?:{_CREDENTIAL_KEYS}))(?![\w-])[\"']?[^\S\n]*[:=][^\S\n]*"
            r"(?:(?i:bearer)[^\S\n]+)?"
            r"(?:\"(?P<v1>[^\"\n]{1,512})\"|'(?P<v2>[^'\n]{1,512})'|(?P<v3>[^\s\"',;&{}()<>\[\]]{1,512}))"
        ),
        groups=("v1", "v2", "v3"),
        hints=("pass", "pwd", "secret", "key", "token", "khẩu", "пароль"),
    ),
)


def _find_credentials(scan: _Scan) -> list[_Hit]:
    hits: list[_Hit] = []
    lowered = scan.text.lower()
    for pattern, groups, hints in _CREDENTIAL_PATTERNS:
        if hints and not any(hint in lowered for hint in hints):
            continue
        for m in pattern.finditer(scan.text):
            group = next((g for g in groups if m.group(g) is not None), 0)
            start, end = m.span(group)
            value = m.group(group)
            hits.append(_Hit("CREDENTIAL", start, end, 0.8 if groups else 0.99, value, _squash(value)))
    return hits


_CARD = re.compile(
    r"(?<![\w.,])(?:\d{13,19}"  # contiguous
    r"|\d{4}(?P<s>[ -])\d{4}(?P=s)\d{4}(?P=s)\d{1,4}(?:(?P=s)\d{3})?"  # 4-4-4-4(-3), 4-4-4-1
    r"|\d{4}(?P<t>[ -])\d{6}(?P=t)\d{4,5}"  # Amex / Diners 4-6-5, 4-6-4
    r")(?![\w]|[.,]\d)"
)


def _is_card(digits: str) -> bool:
    """Luhn-valid PAN; leading 0/1 and one repeated digit are never issued (keeps epoch-ms timestamps out)."""
    return 13 <= len(digits) <= 19 and digits[0] not in "01" and len(set(digits)) > 1 and luhn.is_valid(digits)


_CARD_SEPARATOR = re.compile(r"[ -]")


def _find_cards(scan: _Scan) -> list[_Hit]:
    hits: list[_Hit] = []
    text = scan.text
    pos = 0
    while (m := _CARD.search(text, pos)) is not None:
        start, end = m.span()
        value = m.group()
        digits = _digits(value)
        if not _is_card(digits) and m.group("s") and len(digits) == 19:
            value = value[:-4]  # a 4-4-4-4 card followed by three more digits that belong to something else
            end -= 4
            digits = digits[:-3]
        if _is_card(digits) and not _labelled_business_id(text, start):
            hits.append(_Hit("CREDIT_CARD", start, end, 1.0, value, digits))
            pos = end
        else:
            # A failed grouped candidate may have swallowed the first group of a real card ("4567 4111 1111 1111
            # 1111"): retry from its second group instead of skipping the whole run.
            gap = _CARD_SEPARATOR.search(value)
            pos = start + gap.end() if gap else end
    return hits


_IBAN = re.compile(r"(?i)(?<![A-Z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Z0-9])")


def _find_ibans(scan: _Scan) -> list[_Hit]:
    hits: list[_Hit] = []
    for m in _IBAN.finditer(scan.text):
        value = m.group()
        # A trailing word glued on by the greedy pattern ("... 6769 Thanks") is dropped until the checksum holds.
        while True:
            compact = std_iban.compact(value)
            # The mod-97 check is cheap; the full per-country validation only runs on numbers that pass it.
            if mod_97_10.is_valid(compact[4:] + compact[:4]) and std_iban.is_valid(compact):
                hits.append(_Hit("IBAN", m.start(), m.start() + len(value), 1.0, value, compact))
                break
            if " " not in value:
                break
            value = value[: value.rindex(" ")]
    return hits


_SSN = re.compile(r"(?<![\w-])(\d{3})([- ]?)(\d{2})\2(\d{4})(?![\w-])")
_SSN_CONTEXT = re.compile(r"(?i)\bssn\b|\bss#|social[^\S\n]+security|\bsoc\.?[^\S\n]*sec\b")
_SSN_WINDOW = 40


def _find_ssns(scan: _Scan) -> list[_Hit]:
    hits: list[_Hit] = []
    text = scan.text
    for m in _SSN.finditer(text):
        start, end = m.span()
        has_context = _SSN_CONTEXT.search(text, max(0, start - _SSN_WINDOW), start) is not None
        if m.group(2) != "-" and not has_context:
            continue  # a bare nine-digit run is only an SSN when the text says so
        digits = m.group(1) + m.group(3) + m.group(4)
        if std_ssn.is_valid(digits) and not _labelled_business_id(text, start):
            hits.append(_Hit("US_SSN", start, end, 0.95 if has_context else 0.85, m.group(), digits))
    return hits


# Local parts may use accented Latin letters (Vietnamese names); the boundary checks use the same class, so an
# address glued to CJK text ("邮箱li@qq.com") is still found without swallowing the CJK characters.
_LOCAL = r"A-Za-z0-9\u00C0-\u024F\u1E00-\u1EFF_%+\-"
_EMAIL = re.compile(
    rf"(?<![{_LOCAL}.])[{_LOCAL}](?:[{_LOCAL}.]{{0,62}}[{_LOCAL}])?"
    r"@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9_-])"
)


def _find_emails(scan: _Scan) -> list[_Hit]:
    if "@" not in scan.text:
        return []
    return [
        _Hit("EMAIL", m.start(), m.end(), 0.95, m.group(), m.group().casefold())
        for m in _EMAIL.finditer(scan.text)
        if ".." not in m.group()
    ]


# Cheap gate: the phone matcher is the slowest step, so skip it when no run of 5+ digits exists.
_PHONE_HINT = re.compile(r"\d(?:[^\w\n]{0,3}\d){4,}")
_E164 = phonenumbers.PhoneNumberFormat.E164
_WHITESPACE = re.compile(r"\s")


def _find_phones(scan: _Scan) -> list[_Hit]:
    """phonenumbers once over a same-length copy with dates, amounts, labelled ids and earlier hits blanked out.

    Blanking (rather than filtering matches afterwards) also stops the matcher from gluing a date or an
    invoice number onto a neighbouring phone and then rejecting the whole run. Earlier hits include cards,
    so a Luhn-valid card is never re-read as a phone.
    """
    text = scan.text
    runs = [m.span() for m in _PHONE_HINT.finditer(text)]
    if not runs:
        return []
    blocked = [m.span() for m in _NOT_PHONE_DIGIT_LED.finditer(text)]
    blocked.extend(m.span() for m in _NOT_PHONE_SYMBOL_LED.finditer(text))
    blocked.extend((h.start, h.end) for h in scan.hits)
    for start, end in runs:
        if _labelled_business_id(text, start):
            gap = _WHITESPACE.search(text, start, end)
            blocked.append((start, gap.start() if gap else end))  # the id itself, not a phone written after it
    visible = _blank(text, blocked)
    if not _PHONE_HINT.search(visible):
        return []
    hits: list[_Hit] = []
    for m in phonenumbers.PhoneNumberMatcher(visible, scan.region, leniency=phonenumbers.Leniency.VALID):
        hits.append(
            _Hit("PHONE", m.start, m.end, 0.9, text[m.start : m.end], phonenumbers.format_number(m.number, _E164))
        )
    return hits


_IPV4 = re.compile(r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?![\w]|\.\d)")


def _find_ips(scan: _Scan) -> list[_Hit]:
    hits: list[_Hit] = []
    for m in _IPV4.finditer(scan.text):
        try:
            address = ipaddress.IPv4Address(m.group())  # rejects octets > 255 and leading zeros
        except ValueError:
            continue
        hits.append(_Hit("IP_ADDRESS", m.start(), m.end(), 0.9, m.group(), str(address)))
    return hits


# The registry, in priority order (earlier wins an overlap). Adding a kind touches only this tuple.
DETECTORS: tuple[Detector, ...] = (
    Detector("CREDENTIAL", _find_credentials),
    Detector("CREDIT_CARD", _find_cards),
    Detector("IBAN", _find_ibans),
    Detector("US_SSN", _find_ssns),
    Detector("EMAIL", _find_emails),
    Detector("PHONE", _find_phones),
    Detector("IP_ADDRESS", _find_ips),
)
ALL_KINDS: frozenset[str] = frozenset(d.kind for d in DETECTORS)
DEFAULT_KINDS: frozenset[str] = ALL_KINDS
UNMASKED_CHECK_KINDS: frozenset[str] = frozenset({"EMAIL", "CREDIT_CARD", "PHONE"})
_PRIORITY = {d.kind: rank for rank, d in enumerate(DETECTORS)}
_PLACEHOLDER = re.compile(r"\[[A-Z][A-Z_]*_\d+\]")


def _detect(text: str, region: str | None, kinds: frozenset[str]) -> list[_Hit]:
    """Run the selected detectors in priority order and resolve overlaps (see the module docstring)."""
    unknown = kinds - ALL_KINDS
    if unknown:
        raise ValueError(f"unknown PII kinds: {sorted(unknown)}")
    scan = _Scan(text=text, region=(region or DEFAULT_REGION).upper())
    for detector in DETECTORS:
        if detector.kind in kinds:
            scan.hits.extend(detector.find(scan))
    ranked = sorted(scan.hits, key=lambda h: (_PRIORITY[h.kind], h.start - h.end, h.start))
    starts: list[int] = []
    ends: list[int] = []
    kept: list[_Hit] = []
    for hit in ranked:
        i = bisect_right(starts, hit.start)
        if (i > 0 and ends[i - 1] > hit.start) or (i < len(starts) and starts[i] < hit.end):
            continue
        starts.insert(i, hit.start)
        ends.insert(i, hit.end)
        kept.insert(i, hit)
    return kept


def _to_detection(hit: _Hit) -> Detection:
    return Detection(kind=hit.kind, start=hit.start, end=hit.end, score=hit.score, value=hit.value)


def scrub(text: str, region: str | None = None, kinds: frozenset[str] | None = None) -> ScrubResult:
    """Mask PII in `text` with per-document stable placeholders (`[EMAIL_1]`), numbered by first appearance.

    `region` is the ISO 3166 phone region hint for national formats (default "US"); `+` numbers are found
    whatever the region. `kinds` restricts the policy (None = every kind in `DETECTORS`).
    """
    hits = _detect(text, region, DEFAULT_KINDS if kinds is None else kinds)
    numbers: dict[tuple[str, str], int] = {}
    per_kind: dict[str, int] = {}
    counts: dict[str, int] = {}
    spans: list[tuple[int, int, str, str]] = []
    for hit in hits:
        key = (hit.kind, hit.norm)
        if key not in numbers:
            per_kind[hit.kind] = per_kind.get(hit.kind, 0) + 1
            numbers[key] = per_kind[hit.kind]
        counts[hit.kind] = counts.get(hit.kind, 0) + 1
        spans.append((hit.start, hit.end, hit.kind, f"[{hit.kind}_{numbers[key]}]"))
    scrubbed, offset_map = OffsetMap.apply(text, spans)
    return ScrubResult(
        text=scrubbed,
        offset_map=offset_map,
        counts=counts,
        detections=[_to_detection(h) for h in hits],
        scrubber_version=SCRUBBER_VERSION,
    )


def find_unmasked(text: str, region: str | None = None) -> list[Detection]:
    """E-mails, cards and phones still visible in scrubbed text (placeholders themselves never count)."""
    placeholders = [m.span() for m in _PLACEHOLDER.finditer(text)]
    starts = [s for s, _ in placeholders]
    found: list[Detection] = []
    for hit in _detect(text, region, UNMASKED_CHECK_KINDS):
        i = bisect_right(starts, hit.end - 1) - 1
        if i >= 0 and placeholders[i][1] > hit.start:
            continue
        found.append(_to_detection(hit))
    return found
