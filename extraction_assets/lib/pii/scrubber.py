"""The PII scrubber: find personal data and secrets, replace them with stable placeholders.

Extractors (and any model behind them) only see scrubbed text; the offset map
returned with it lets evidence found there be pointed back at the raw document.

Each kind has one detector: a precompiled pattern plus a validation step
(checksums via `stdnum`, phone numbers via `phonenumbers`, IPs via `ipaddress`),
so look-alikes such as invoice numbers, ISO dates and amounts stay readable.
The detectors live in `numbers`, `contacts` and `credentials` beside this module; adding a
kind means writing one finder and adding one `Detector` to `DETECTORS`.

Overlap policy: detectors report candidates independently; when two overlap, the
one whose kind comes first in `DETECTORS` wins, then the longer one, then the
earlier one. The loser is dropped entirely, so every character is masked at most
once. Strongly validated ids come before cards (a Chinese id can pass Luhn, and
an IBAN's digits hold card-shaped runs that must not leave its country code and
check digits in clear), a labelled bank account comes after cards and national ids
(a Luhn-valid card stays a card), and everything numeric comes before phones,
which never see what was already taken.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel

from extraction_assets.lib.offsets import OffsetMap
from extraction_assets.lib.pii.contacts import find_emails, find_ips, find_phones
from extraction_assets.lib.pii.credentials import find_credentials
from extraction_assets.lib.pii.numbers import (
    find_bank_accounts,
    find_cards,
    find_cn_resident_ids,
    find_ibans,
    find_ru_inns,
    find_ru_snils,
    find_ssns,
    find_vn_national_ids,
)
from extraction_assets.lib.pii.placeholders import PLACEHOLDER, placeholder
from extraction_assets.lib.pii.scan import Hit, MatchedLines, Scan
from extraction_assets.lib.pii.view import View, detection_view

SCRUBBER_VERSION = "pii-v7"  # v7: compatibility forms (NFKC), quoted number wraps; v6: a "(" starts a number
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
    masked spans in raw-text order and carry raw values; `placeholders` maps each placeholder to the raw
    value it stands for (first occurrence), which is what the optional vault seals.
    """

    text: str
    offset_map: OffsetMap
    counts: dict[str, int]
    detections: list[Detection]
    placeholders: dict[str, str] = {}
    scrubber_version: str = SCRUBBER_VERSION


@dataclass(frozen=True, slots=True)
class Detector:
    """A kind and the function that finds its (already validated) occurrences.

    `needs_digits`: every value of the kind contains a digit, so a text without one is skipped unread.
    """

    kind: str
    find: Callable[[Scan], list[Hit]]
    needs_digits: bool = True


# The registry, in priority order (earlier wins an overlap). Adding a kind touches only this tuple.
DETECTORS: tuple[Detector, ...] = (
    Detector("CREDENTIAL", find_credentials, needs_digits=False),
    Detector("CN_RESIDENT_ID", find_cn_resident_ids),
    Detector("IBAN", find_ibans),
    Detector("CREDIT_CARD", find_cards),
    Detector("US_SSN", find_ssns),
    Detector("RU_SNILS", find_ru_snils),
    Detector("RU_INN", find_ru_inns),
    Detector("VN_NATIONAL_ID", find_vn_national_ids),
    Detector("BANK_ACCOUNT", find_bank_accounts),
    Detector("EMAIL", find_emails, needs_digits=False),
    Detector("PHONE", find_phones),
    Detector("IP_ADDRESS", find_ips),
)
ALL_KINDS: frozenset[str] = frozenset(d.kind for d in DETECTORS)
DEFAULT_KINDS: frozenset[str] = ALL_KINDS
UNMASKED_CHECK_KINDS: frozenset[str] = frozenset({"EMAIL", "CREDIT_CARD", "PHONE"})
_PRIORITY = {d.kind: rank for rank, d in enumerate(DETECTORS)}
_DIGIT = re.compile(r"\d")


def _detect(
    text: str, region: str | None, kinds: frozenset[str], matched_lines: MatchedLines | None = None
) -> list[Hit]:
    """Run the selected detectors in priority order and resolve overlaps (see the module docstring).

    `matched_lines`: the phone matcher's finds to read and add to (one document's scrub and its re-check share them)."""
    unknown = kinds - ALL_KINDS
    if unknown:
        raise ValueError(f"unknown PII kinds: {sorted(unknown)}; known: {sorted(ALL_KINDS)}")
    view = detection_view(text)
    scan = Scan(text=view.text, region=(region or DEFAULT_REGION).upper())
    if matched_lines is not None:
        scan.matched_lines = matched_lines
    has_digits = _DIGIT.search(view.text) is not None
    for detector in DETECTORS:
        if detector.kind in kinds and (has_digits or not detector.needs_digits):
            scan.hits.extend(detector.find(scan))
    found = scan.hits if view.text is text else [_in_text(hit, text, view) for hit in scan.hits]
    ranked = sorted(found, key=lambda h: (_PRIORITY[h.kind], h.start - h.end, h.start))
    starts: list[int] = []
    ends: list[int] = []
    kept: list[Hit] = []
    for hit in ranked:
        i = bisect_right(starts, hit.start)
        if (i > 0 and ends[i - 1] > hit.start) or (i < len(starts) and starts[i] < hit.end):
            continue
        starts.insert(i, hit.start)
        ends.insert(i, hit.end)
        kept.insert(i, hit)
    return kept


def _in_text(hit: Hit, text: str, view: View) -> Hit:
    """A hit found in the view, as the span of the text it covers (the value as written, the view's norm)."""
    start, end = view.to_raw(hit.start, hit.end)
    return hit._replace(start=start, end=end, value=text[start:end])


def _to_detection(hit: Hit) -> Detection:
    return Detection(kind=hit.kind, start=hit.start, end=hit.end, score=hit.score, value=hit.value)


def detect(text: str, region: str | None = None, kinds: frozenset[str] | None = None) -> list[Detection]:
    """What `scrub` would mask, without building the scrubbed text (the benchmark scores this)."""
    return [_to_detection(h) for h in _detect(text, region, DEFAULT_KINDS if kinds is None else kinds)]


def scrub(
    text: str,
    region: str | None = None,
    kinds: frozenset[str] | None = None,
    matched_lines: MatchedLines | None = None,
) -> ScrubResult:
    """Mask PII in `text` with per-document stable placeholders (`[EMAIL_1]`), numbered by first appearance.

    `region` is the ISO 3166 phone region hint for national formats (default "US"); `+` numbers are found
    whatever the region. `kinds` restricts the policy (None = every kind in `DETECTORS`). `matched_lines` (a dict
    to fill) keeps what the phone matcher found in each line, for the re-check of the same document.
    """
    hits = _detect(text, region, DEFAULT_KINDS if kinds is None else kinds, matched_lines)
    numbers: dict[tuple[str, str], int] = {}
    per_kind: dict[str, int] = {}
    counts: dict[str, int] = {}
    placeholders: dict[str, str] = {}
    spans: list[tuple[int, int, str, str]] = []
    for hit in hits:
        key = (hit.kind, hit.norm)
        if key not in numbers:
            per_kind[hit.kind] = per_kind.get(hit.kind, 0) + 1
            numbers[key] = per_kind[hit.kind]
        counts[hit.kind] = counts.get(hit.kind, 0) + 1
        shown = placeholder(hit.kind, numbers[key])
        placeholders.setdefault(shown, hit.value)
        spans.append((hit.start, hit.end, hit.kind, shown))
    scrubbed, offset_map = OffsetMap.apply(text, spans)
    return ScrubResult(
        text=scrubbed,
        offset_map=offset_map,
        counts=counts,
        detections=[_to_detection(h) for h in hits],
        placeholders=placeholders,
        scrubber_version=SCRUBBER_VERSION,
    )


def find_unmasked(
    text: str,
    region: str | None = None,
    kinds: frozenset[str] | None = None,
    raw: str | None = None,
    offset_map: OffsetMap | None = None,
    matched_lines: MatchedLines | None = None,
) -> list[Detection]:
    """E-mails, cards and phones still visible in scrubbed text (placeholders themselves never count).

    `kinds` narrows the check to what a tenant's policy masks (None = e-mail, card and phone). Given the raw
    text and the offset map, the check agrees with the scrubber: a value that stands unchanged in the raw
    text and that the scrubber, reading the raw text with the same region and kinds, keeps by rule (a
    labelled company number, a slip number) is not a finding. A value the raw text does not hold there
    (the scrubbed text was changed) always is. `matched_lines`: as for `scrub`.
    """
    checked = UNMASKED_CHECK_KINDS if kinds is None else UNMASKED_CHECK_KINDS & kinds
    found = _visible(text, region, checked, [(0, len(text))], matched_lines)
    if not found or raw is None or offset_map is None:
        return found
    return _not_kept_by_scrubber(found, text, region, checked, raw, offset_map, [(0, len(raw))], matched_lines)


def unmasked_after_scrub(
    text: str,
    offset_map: OffsetMap,
    raw: str,
    region: str | None = None,
    kinds: frozenset[str] | None = None,
    matched_lines: MatchedLines | None = None,
) -> list[Detection]:
    """`find_unmasked` of a text the scrub just made from `raw`, read only where the scrub changed it.

    Away from every placeholder the scrubbed text is the raw text the same detectors (with more kinds) have just
    read: a value they found there was masked, so the text there is not unchanged. Every detector decides from the
    value and at most a few dozen characters around it (a context word, a label, the phone matcher's line), so a
    value that could be visible now lies within `RECHECK_REACH` characters of a placeholder: only those stretches
    (whole lines where a line is not too long) are searched, and a text nothing was masked in is not searched. A
    text that is not the raw text with the map's placeholders in it (a scrubber bug) is searched whole.
    `matched_lines`: the ones the scrub of `raw` filled (most lines read here were read there).
    """
    changes = offset_map.replacements
    if not changes and text == raw:
        return []
    if not _is_applied(text, raw, offset_map):
        return find_unmasked(text, region, kinds, raw=raw, offset_map=offset_map, matched_lines=matched_lines)
    checked = UNMASKED_CHECK_KINDS if kinds is None else UNMASKED_CHECK_KINDS & kinds
    around = _around(text, [(r.scrub_start, r.scrub_end) for r in changes])
    found = _visible(text, region, checked, around, matched_lines)
    if not found:
        return found
    in_raw = _around(raw, [(r.raw_start, r.raw_end) for r in changes])
    return _not_kept_by_scrubber(found, text, region, checked, raw, offset_map, in_raw, matched_lines)


def _is_applied(text: str, raw: str, offset_map: OffsetMap) -> bool:
    """Whether `text` is `raw` with each replacement's placeholder in place of its span, and nothing else changed."""
    raw_at = scrub_at = 0
    for r in offset_map.replacements:
        if (
            raw[raw_at : r.raw_start] != text[scrub_at : r.scrub_start]
            or text[r.scrub_start : r.scrub_end] != r.placeholder
        ):
            return False
        raw_at, scrub_at = r.raw_end, r.scrub_end
    return raw[raw_at:] == text[scrub_at:]


RECHECK_REACH = 512  # beyond the longest value (an e-mail, 320 characters) and its context (64) on either side


def _around(text: str, spans: list[tuple[int, int]], reach: int = RECHECK_REACH) -> list[tuple[int, int]]:
    """The stretches of `text` within `reach` of the spans (sorted), widened to whole lines up to `reach` further,
    merged."""
    stretches: list[tuple[int, int]] = []
    for start, end in spans:
        lo, hi = max(0, start - reach), min(len(text), end + reach)
        before = text.rfind("\n", max(0, lo - reach), lo)
        lo = before + 1 if before >= 0 else (0 if lo <= reach else lo)
        after = text.find("\n", hi, hi + reach)
        hi = after if after >= 0 else (len(text) if hi + reach >= len(text) else hi)
        if stretches and lo <= stretches[-1][1]:
            stretches[-1] = (stretches[-1][0], max(hi, stretches[-1][1]))
        else:
            stretches.append((lo, hi))
    return stretches


def _detect_in(
    text: str,
    region: str | None,
    kinds: frozenset[str],
    stretches: list[tuple[int, int]],
    matched_lines: MatchedLines | None = None,
) -> list[Hit]:
    """`_detect` of each stretch of `text`, its hits at their places in `text`."""
    if stretches == [(0, len(text))]:
        return _detect(text, region, kinds, matched_lines)
    return [
        hit._replace(start=hit.start + lo, end=hit.end + lo)
        for lo, hi in stretches
        for hit in _detect(text[lo:hi], region, kinds, matched_lines)
    ]


def _visible(
    text: str,
    region: str | None,
    kinds: frozenset[str],
    stretches: list[tuple[int, int]],
    matched_lines: MatchedLines | None = None,
) -> list[Detection]:
    """What the detectors find in the stretches of `text` outside its placeholders."""
    placeholders = [m.span() for m in PLACEHOLDER.finditer(text)]
    starts = [s for s, _ in placeholders]
    found: list[Detection] = []
    for hit in _detect_in(text, region, kinds, stretches, matched_lines):
        i = bisect_right(starts, hit.end - 1) - 1
        if i >= 0 and placeholders[i][1] > hit.start:
            continue
        found.append(_to_detection(hit))
    return found


def _not_kept_by_scrubber(
    found: list[Detection],
    text: str,
    region: str | None,
    checked: frozenset[str],
    raw: str,
    offset_map: OffsetMap,
    stretches: list[tuple[int, int]],
    matched_lines: MatchedLines | None = None,
) -> list[Detection]:
    """The findings that are not values the scrubber, reading the raw text (`stretches` of it), keeps by rule."""
    masked_in_raw = [(h.start, h.end) for h in _detect_in(raw, region, checked, stretches, matched_lines)]

    def kept_by_scrubber(d: Detection) -> bool:
        start, end = offset_map.to_raw(d.start, d.end)
        unchanged = raw[start:end] == text[d.start : d.end]
        return unchanged and not any(s < end and start < e for s, e in masked_in_raw)

    return [d for d in found if not kept_by_scrubber(d)]
