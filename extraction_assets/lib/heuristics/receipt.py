"""Deterministic reader for shop receipts (schema ``receipt``): seller, date, seller's address, amount paid.

Receipt text is OCR output, one printed box per line. The seller and its address sit in the header,
above the first line that belongs to the sale (telephone, tax number, invoice, date, cashier ...):
the seller is the header line carrying a legal or trade form ("SDN BHD", "LLC", "ENTERPRISE"), the
address the run of lines after it that look like one (a number, a street word or a postcode). The
total is the amount after the strongest total label, confirmed when it equals cash minus change.
Every value's evidence is the verbatim span it was read from.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from rapidfuzz.distance import Levenshtein

from extraction_assets.lib.heuristics.fields import FULL, GUESS, PARTIAL, field_candidate
from extraction_assets.lib.heuristics.printed_values import DateMention, find_dates, parse_amount, scan_view
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["extract_receipt"]

HEADER_LINES = 14
MAX_ADDRESS_LINES = 5
ADDRESS_SEARCH_LINES = 5
AMOUNT_LOOKAHEAD = 4

_AMOUNT = re.compile(r"(?<![\d.,])-?(?:\d{1,3}(?:,\d{3})+|\d*)\.\d{2}(?![\d])")
_LEGAL_FORMS = re.compile(
    r"(?<!\w)(?:sdn\.?\s*bhd|bhd|berhad|s/b|sb|plt|llp|llc|ltd|limited|inc|corp(?:oration)?|gmbh|co\.|pte)(?!\w)"
)
# fmt: off
_TRADE_WORD_LIST = (
    "enterprise", "trading", "restoran", "restaurant", "cafe", "bistro", "kedai", "mart", "market", "supermarket",
    "minimarket", "pasaraya", "store", "stores", "shop", "hardware", "stationery", "bakery", "pharmacy", "farmasi",
    "station", "hotel", "perniagaan", "industries", "services", "electrical", "book", "books", "food", "foods",
    "delight", "delights", "house",
)
# fmt: on
_TRADE_WORDS = re.compile(r"(?<!\w)(?:" + "|".join(_TRADE_WORD_LIST) + r")(?!\w)")
_REGISTRATION = re.compile(
    r"^\(?\s*(?:no\.?\s*)?(?:(?:co\.?|company|br|business|reg|roc)[\s.-]*(?:reg|no|registration)?[\s.:-]*(?:no)?[\s.:-]*)?"
    r"[a-z]{0,3}\d{4,}[\s-]*[a-z]?\)?\s*$"
)
# fmt: off
_ADDRESS_WORD_LIST = (
    "no", "lot", "jalan", "jln", "jl", "lorong", "lrg", "taman", "tmn", "kampung", "kg", "bandar", "seksyen",
    "persiaran", "lebuh", "lebuhraya", "kawasan", "road", "rd", "street", "st", "avenue", "ave", "lane", "block", "blk",
    "level", "floor", "unit", "suite", "building", "plaza", "mall", "centre", "center", "square", "park", "batu", "km",
    "off", "pusat", "perindustrian", "industrial", "commercial",
)
# fmt: on
_ADDRESS_WORDS = re.compile(r"(?<!\w)(?:" + "|".join(_ADDRESS_WORD_LIST) + r")(?!\w)")
_REGISTRATION_LABEL = re.compile(r"(?<!\w)(?:co|company|br|roc|reg|gst|business)[\s.-]*(?:reg[\s.]*)?(?:no|id)\b")
_TRAILING_REGISTRATION = re.compile(r"[\s,]*[(\[]?\s*(?:co\.?\s*(?:no|reg)\.?\s*:?\s*)?[a-z]{0,3}\d{4,}.*$")
_PRICE_LINE = re.compile(r"(?:rm\s*)?\d*\.\d{2}(?:\s*[a-z]{1,2})?")
# a line ending with a full stop after a word (not an abbreviation such as "NO." or "D.E.") ends an address: so do
# 90 of the 93 gold addresses that print one, and the other 3 go on with their postcode and town or a street
_FULL_STOP = re.compile(r"(?<![a-z.])[a-z]{3,}\.$")
_POSTCODE = re.compile(r"(?<![\d-])\d{5}(?![\d-])")
# Malaysia's states and federal territories (a closed public list) and the countries receipts name: the
# last words of an address, after the postcode and town.
# fmt: off
_REGION_LIST = (
    "johor", "kedah", "kelantan", "melaka", "malacca", "negeri sembilan", "pahang", "perak", "perlis", "pulau pinang",
    "penang", "sabah", "sarawak", "selangor", "terengganu", "kuala lumpur", "putrajaya", "labuan",
    "wilayah persekutuan", "darul", "malaysia", "singapore",
)
# fmt: on
_REGION = re.compile(r"(?<!\w)(?:" + "|".join(_REGION_LIST) + r")(?!\w)")
# Lines that end the header: contact details, tax ids, the document and the sale itself.
_HEADER_END = re.compile(
    r"(?<!\w)(?:tel|tel\.|fax|phone|telephone|h/p|hp|mobile|gst|sst|tax|taxinv\w*|invoice|receipt|bill|cashier|date|time"
    r"|table|doc|slip|order|counter|terminal|member|qty|item|description|website|www|email|e-mail)(?!\w)|@|\[[a-z_0-9]+\]"
)
_TOTAL_LABELS: tuple[tuple[re.Pattern[str], int], ...] = (
    (re.compile(r"(?:rounded|nett?|grand)\s*total|total\s*(?:rounded|payable|due|amount|amt|\(?rm\)?|\(?incl)"), 3),
    (re.compile(r"amount\s*(?:due|payable)|inclusive\s+of\s+(?:gst|sst|tax)|total\s*sales?\s*\(?incl"), 3),
    (re.compile(r"nett?\s*(?:amt|amount)"), 3),
    (re.compile(r"(?<![\w-])total(?!\w)"), 2),
)
_NOT_TOTAL = re.compile(
    r"sub[\s-]*total|total\s*(?:qty|quantity|item|items|gst|sst|tax|disc|discount|saving|savings|excl|point|points"
    r"|weight|no\.?\s*of)|excluding|exclusive|tax\s*total|gst\s*summary|qty"
)
_SLOGAN = re.compile(
    r"thank|welcome|please|come again|visit us|feedback|(?<!\w)tq(?!\w)|enjoy|returnable|refundable|exchangeable"
)
_HEADINGS = re.compile(r"summary|details|thank")
_RECEIPT_WORDS = re.compile(r"total|cash|change|rounding|amount|receipt|invoice")
_PAID = re.compile(r"(?<!\w)(?:cash|tendered|accepted|paid|payment|visa|master|card|credit|debit)(?!\w)")
# A label that prints its own count ("ITEM COUNT 12", "TOTAL ITEMS: 5") waits for no amount in a column below.
_OWN_COUNT = re.compile(r"[a-z)][^\d]*?[\s:]\s*\d{1,4}$")
_TAX_RATE = Decimal("0.06")
_CENT = Decimal("0.01")
_ROUNDING = Decimal("0.05")  # totals are rounded to 5 sen
_CHANGE = re.compile(r"(?<!\w)(?:change|balance|baki)(?!\w)")


@dataclass(frozen=True)
class _Line:
    start: int
    end: int
    text: str  # the scan view of the line (lower-cased, folded), same offsets as the source

    @property
    def words(self) -> str:
        return self.text.strip()


@dataclass(frozen=True)
class _Amount:
    line: int
    start: int
    end: int
    value: Decimal


def _lines(view: str) -> list[_Line]:
    lines: list[_Line] = []
    pos = 0
    for raw in view.split("\n"):
        stripped = raw.strip()
        if stripped:
            lead = len(raw) - len(raw.lstrip())
            lines.append(_Line(pos + lead, pos + lead + len(stripped), stripped))
        pos += len(raw) + 1
    return lines


def _amounts(lines: list[_Line]) -> list[_Amount]:
    found: list[_Amount] = []
    for number, line in enumerate(lines):
        for m in _AMOUNT.finditer(line.text):
            value = parse_amount(m.group(0))
            if value is not None:
                found.append(_Amount(number, line.start + m.start(), line.start + m.end(), value))
    return found


def _header(lines: list[_Line]) -> tuple[int, int]:
    """(first, end) lines of the seller's block: from the first name line to the first line of the sale."""
    first = next((n for n, line in enumerate(lines[:HEADER_LINES]) if _name_end(line) is not None), 0)
    for number in range(first + 1, min(len(lines), first + HEADER_LINES)):
        text = lines[number].text
        if _HEADER_END.search(text) or find_dates(text, day_first=True):
            return first, number
    return first, min(len(lines), first + HEADER_LINES)


def _looks_like_address(text: str) -> bool:
    return bool(_ADDRESS_WORDS.search(text) or _POSTCODE.search(text) or re.match(r"^\d+[a-z]?\s*[,.-]", text))


def _looks_like_street(text: str) -> bool:
    return bool(re.match(r"^(?:no\.?\s*)?\d", text)) and _looks_like_address(text)


def _is_name(text: str) -> bool:
    letters = sum(c.isalpha() for c in text)
    return (
        letters >= 3
        and letters >= 0.6 * sum(not c.isspace() for c in text)
        and not _HEADER_END.search(text)
        and not _REGISTRATION_LABEL.search(text)
        and not _SLOGAN.search(text)
    )


def _name_end(line: _Line) -> int | None:
    """Where a name on this line ends (after its legal form, before a trailing registration number); None if
    the line is not a name."""
    text = line.text
    # a form inside an opened bracket belongs to a registration number: "DION REALTIES SDN BHD (CO. NO:20154-T)"
    forms = [f for f in _LEGAL_FORMS.finditer(text) if text.count("(", 0, f.start()) <= text.count(")", 0, f.start())]
    if forms:
        cut = forms[-1].end() + text.startswith(".", forms[-1].end())
    else:
        trailing = _TRAILING_REGISTRATION.search(text)
        cut = trailing.start() if trailing else len(text)
    name = text[:cut].rstrip(" ,-")
    return line.start + len(name) if _is_name(name) else None


@dataclass(frozen=True)
class _Name:
    first: int  # first line of the name
    last: int  # last line of the name
    end: int  # offset where the name ends on its last line
    factor: float
    rule: str  # which cue found it: legal_form, trade_word, registration, first_name


def _company(lines: list[_Line], first: int, end: int) -> _Name | None:
    """The seller's name in the header ``lines[first:end]``: a legal form, a trade word, the line above the
    registration number, or the first name line, in that order of trust."""
    header = range(first, end)
    for pattern, factor, rule in ((_LEGAL_FORMS, FULL, "legal_form"), (_TRADE_WORDS, PARTIAL, "trade_word")):
        for number in header:
            line = lines[number]
            cut = _name_end(line)
            if cut is not None and pattern.search(line.text) and not _looks_like_street(line.text):
                name = _Name(_extend_name(lines, first, number), number, cut, factor, rule)
                return _continue_name(lines, end, name)
    for number in header:
        if _looks_like_address(lines[number].text):
            break
        if number > first and _REGISTRATION.match(lines[number].text):
            cut = _name_end(lines[number - 1])
            if cut is not None:
                return _Name(_extend_name(lines, first, number - 1), number - 1, cut, PARTIAL, "registration")
    for number in header:
        cut = _name_end(lines[number])
        if cut is not None and not _looks_like_address(lines[number].text):
            return _Name(number, number, cut, GUESS, "first_name")
    return None


def _extend_name(lines: list[_Line], first: int, last: int) -> int:
    """A name broken over lines: join the lines before ``last`` that it continues (ends with "&", opens "(")."""
    top = last
    while top > first:
        prev, cur = lines[top - 1].text, lines[top].text
        continues = (
            prev.endswith(("&", "-", ",", "("))
            or prev.count("(") > prev.count(")")
            or cur.count(")") > cur.count("(")
            or bool(re.match(r"^(?:sdn|bhd|berhad|s/b|co\.|\(m\)|enterprise|trading|restaurant|&)", cur))
        )
        if not (continues and _name_end(lines[top - 1]) is not None):
            break
        top -= 1
    return top


def _continue_name(lines: list[_Line], end: int, name: _Name) -> _Name:
    """A name line ending in "&" goes on below ("HARDWARE &" / "ELECTRICAL")."""
    below = name.last + 1
    if below >= end or not lines[name.last].text.endswith("&") or _looks_like_address(lines[below].text):
        return name
    cut = _name_end(lines[below])
    return name if cut is None else _Name(name.first, below, cut, name.factor, name.rule)


def _address(lines: list[_Line], after: int) -> tuple[int, int] | None:
    """(first, last) line of the seller's address: the run of address-like lines just after its name.

    Registration numbers, tax ids, a branch name or the sale's date may sit between the name and the
    address; the address ends at a contact or tax line, a "label: value" line, a date or a line without
    letters, and after its postcode and town at the first line that is no more address.
    """
    first = next(
        (
            n
            for n in range(after, min(len(lines), after + ADDRESS_SEARCH_LINES))
            if not _ends_address(lines[n].text)
            and (_looks_like_address(lines[n].text) or re.search(r"\d.*,", lines[n].text))
        ),
        None,
    )
    if first is None:
        return None
    first = _street_above(lines, after, first)
    last = first
    while last + 1 < len(lines) and last + 1 - first < MAX_ADDRESS_LINES:
        text = lines[last + 1].text
        if _ends_address(text) or (sum(c.isalpha() for c in text) < 3 and not _POSTCODE.search(text)):
            break
        if _name_end(lines[last + 1]) is None and not _looks_like_address(text):
            break
        if _has_reached_town(lines, first, last) and not _continues_address(lines[last].text, text):
            break
        if _FULL_STOP.search(lines[last].text) and not (_looks_like_address(text) or text.endswith((",", "."))):
            break  # after a full stop, a plain line is no more address ("NO7,JLN UERO,SHAH ALAM." / an item)
        if last + 2 < len(lines) and _PRICE_LINE.fullmatch(lines[last + 2].text):
            break  # a line priced on the next one is the sale's first item ("22241 WS CUT SCISSORS" / "18.00")
        last += 1
    return first, last


def _has_reached_town(lines: list[_Line], first: int, last: int) -> bool:
    """A postcode with its town, or a state, closes an address: a plain name line after it is a branch or a
    slogan."""
    return any(_is_town(lines[n].text) or _REGION.search(lines[n].text) for n in range(first, last + 1))


def _continues_address(prev: str, text: str) -> bool:
    """After the town only more address may follow: a state, a country, or a line the previous one leads into."""
    return prev.endswith(",") or _looks_like_address(text) or bool(_REGION.search(text))


def _street_above(lines: list[_Line], after: int, first: int) -> int:
    """A postcode and town line closes an address, so an address does not start with it: the name-like line
    above it (a street without a number or a street word) is where it starts."""
    if first <= after or not re.match(r"\d{5}(?!\d)", lines[first].text):
        return first
    above = lines[first - 1]
    return first - 1 if _name_end(above) is not None and not _ends_address(above.text) else first


def _is_town(text: str) -> bool:
    postcode = _POSTCODE.search(text)
    return postcode is not None and sum(c.isalpha() for c in text[postcode.end() :]) >= 2


def _ends_address(text: str) -> bool:
    """Contact, tax and registration lines, dates and "label: value" lines are never part of an address."""
    label = re.match(r"^([^\d:]{1,24}):", text)
    return (
        bool(_HEADER_END.search(text) or _REGISTRATION.match(text) or _REGISTRATION_LABEL.search(text))
        or bool(label and not _ADDRESS_WORDS.search(label.group(1)))
        or bool(find_dates(text, day_first=True))
    )


@dataclass(frozen=True)
class _Total:
    amount: _Amount
    factor: float
    rule: str  # cash_and_label, cash_only, strong_label, label, repeated_largest
    rivals: int  # other labelled amounts (distinct values) the choice was made against
    tied: bool  # a rival carried the same label strength
    settled: Decimal | None  # cash tendered minus change, when both are printed
    from_column: bool = False  # its label printed no amount on its own line: the amount was read from a column


def _total(lines: list[_Line], amounts: list[_Amount]) -> _Total | None:
    """The amount paid: cash minus change when an amount equals it, else the one after the strongest total label."""
    by_line: dict[int, list[_Amount]] = {}
    for amount in amounts:
        by_line.setdefault(amount.line, []).append(amount)
    candidates: list[tuple[int, int, _Amount]] = []
    rounded = False
    settled, paid = _settled(lines, by_line)
    sold = [a for a in amounts if a.value != paid]
    for number, line in enumerate(lines):
        rounded = rounded or "rounding" in line.text
        if _NOT_TOTAL.search(line.text):
            continue
        rank = next((r for pattern, r in _TOTAL_LABELS if pattern.search(line.text)), 0)
        labelled = _amount_for_label(lines, by_line, number) if rank else None
        if labelled is not None and labelled.value > 0 and not _is_tax(labelled.value, sold):
            candidates.append((rank + rounded, number, labelled))
    if settled is None and paid is not None:
        candidates = [(rank + 2 * (amount.value == paid), n, amount) for rank, n, amount in candidates]

    def chosen(amount: _Amount, factor: float, rule: str) -> _Total:
        rivals = [c for c in candidates if c[2].value != amount.value]
        own = max((c[0] for c in candidates if c[2].value == amount.value), default=0)
        distinct = len({c[2].value for c in rivals})
        column = any(c[2] is amount and c[1] != amount.line for c in candidates)
        return _Total(amount, factor, rule, distinct, any(c[0] >= own for c in rivals), settled, column)

    if settled is not None:
        agreeing = [c for c in candidates if c[2].value == settled]
        if agreeing:
            return chosen(agreeing[0][2], FULL, "cash_and_label")
        last_label = max((c[1] for c in candidates), default=0)
        occurrences = [a for a in amounts if a.value == settled]
        if occurrences:
            return chosen(next((a for a in occurrences if a.line >= last_label), occurrences[-1]), PARTIAL, "cash_only")
    if not candidates:
        guess = _repeated_largest(amounts)
        return None if guess is None else chosen(guess, GUESS, "repeated_largest")
    rank, _, amount = max(candidates, key=lambda c: (c[0], c[2].value, -c[1]))
    return chosen(amount, FULL, "strong_label") if rank >= 3 else chosen(amount, PARTIAL, "label")


def _is_tax(value: Decimal, sold: list[_Amount]) -> bool:
    """An amount that is the 6% tax (GST, SST) of a larger amount sold is the tax, not the amount paid (a label
    column read across the tax summary gives "TOTAL:" the tax). The cash tendered is no amount sold: a 6.00 total
    paid with a 100.00 note stays the total."""
    return any(a.value > value and abs((a.value * _TAX_RATE).quantize(_CENT) - value) <= _CENT for a in sold)


def _repeated_largest(amounts: list[_Amount]) -> _Amount | None:
    """No readable total label: the total is printed at least twice (item sum, total, tender), so guess the
    largest amount printed more than once."""
    counts = Counter(a.value for a in amounts if a.value > 0)
    repeated = [a for a in amounts if counts[a.value] > 1]
    if not repeated:
        return None
    return max(repeated, key=lambda a: (a.value, -a.start))


def _settled(lines: list[_Line], by_line: dict[int, list[_Amount]]) -> tuple[Decimal | None, Decimal | None]:
    """(cash tendered minus change given when both are printed and it is positive, the amount tendered)."""
    paid = change = None
    for number, line in enumerate(lines):
        label = _CHANGE if _CHANGE.search(line.text) else _PAID if _PAID.search(line.text) else None
        if label is None or _NOT_TOTAL.search(line.text):
            continue
        amount = _amount_for_label(lines, by_line, number)
        if amount is None:
            continue
        if label is _CHANGE and change is None:
            change = amount.value
        elif label is _PAID and paid is None:
            paid = amount.value
    if paid is None or change is None or paid <= change:
        return None, paid
    return paid - change, paid


def _amount_for_label(lines: list[_Line], by_line: dict[int, list[_Amount]], number: int) -> _Amount | None:
    """The amount a label line stands for.

    On its own line, the last amount there. Otherwise OCR boxes often print a column of labels, then a
    column of their amounts: the label's rank in its run of labels picks the amount in the next run of
    amounts (counted from the end when some label printed no amount, as a zero rounding often does).
    """
    on_line = by_line.get(number)
    if on_line:
        return on_line[-1]
    labels = [number]
    nxt = number - 1
    while nxt >= 0 and not by_line.get(nxt) and (_is_label(lines[nxt].text) or _is_heading(lines[nxt].text)):
        if _waits_for_amount(lines[nxt].text):
            labels.insert(0, nxt)
        nxt -= 1
    nxt = number + 1
    while nxt < len(lines) and not by_line.get(nxt) and (_is_label(lines[nxt].text) or _is_heading(lines[nxt].text)):
        if _waits_for_amount(lines[nxt].text):
            labels.append(nxt)
        nxt += 1
    values: list[_Amount] = []
    while nxt < len(lines) and (by_line.get(nxt) or _is_filler(lines[nxt].text)):
        values.extend(by_line.get(nxt, [])[:1])
        nxt += 1
    if not values:
        return None
    rank = labels.index(number)
    if len(values) >= len(labels):
        return values[rank]
    from_end = len(labels) - 1 - rank
    return values[len(values) - 1 - from_end] if from_end < len(values) else None


def _waits_for_amount(text: str) -> bool:
    """A label in a column of labels takes an amount from the column below, unless it is a heading or prints its
    own count."""
    return not _is_heading(text) and not _OWN_COUNT.fullmatch(text)


def _is_heading(text: str) -> bool:
    return bool(_HEADINGS.search(text))


def _is_label(text: str) -> bool:
    return any(c.isalpha() for c in text) and not _is_filler(text) and not _is_heading(text)


def _is_filler(text: str) -> bool:
    """Boxes that sit between a label and its amount: a currency, a colon, a tax code."""
    return bool(re.fullmatch(r"[:\s]*(?:rm|\$|myr|sr|zr|zrl|s)?[:\s]*", text))


def _looks_like_receipt(lines: list[_Line], amounts: list[_Amount]) -> bool:
    """A receipt prints several amounts and a total; a note that mentions one price is not a receipt. A slip
    for a single prepaid item prints just two: its total and the cash paid, the same amount."""
    labelled = any(_RECEIPT_WORDS.search(line.text) for line in lines)
    printed = {a.line: a.value for a in amounts}
    return labelled and (len(printed) >= 3 or (len(printed) == 2 and len(set(printed.values())) == 1))


def _span(source: str, lines: list[_Line], first: int, last: int) -> tuple[int, str]:
    start, end = lines[first].start, lines[last].end
    return start, source[start:end]


# Evidence features: what each value's choice rested on and whether the value looks sane, for the schema version's
# calibration (`lib/calibration`) to turn into a probability of being right. Flags are 0/1, counts small integers.
_CLOCK = re.compile(r"[\s,]{1,3}\(?\d{1,2}:\d{2}")
_DAYS_FAR = 366  # a date more than a year from every other date printed on the receipt


def _rule(name: str, rules: tuple[str, ...]) -> dict[str, float]:
    """One flag per rule but the first (the most trusted, the baseline the others are weighed against)."""
    return {f"rule_{r}": float(name == r) for r in rules[1:]}


def _odd_punctuation(value: str) -> bool:
    """A name with an unbalanced bracket, a label's colon or no letter at its start is a piece of something else."""
    return value.count("(") != value.count(")") or ":" in value or not value[:1].isalnum()


def _name_below(lines: list[_Line], name: _Name) -> bool:
    """A name read without a legal form with another name line right below it (not an address, a registration number
    or a date): the name goes on ("RESTAURANT JIAWEI" / "JIAWEI HOUSE"), or the legal name or the operator follows
    ("AA PHARMACY" / "SUBANG HEALTHCARE SDN"), and the gold may read either."""
    below = name.last + 1
    if name.rule == "legal_form" or below >= len(lines):
        return False
    text = lines[below].text
    return (
        _name_end(lines[below]) is not None
        and not _looks_like_address(text)
        and not _REGISTRATION.match(text)
        and not find_dates(text, day_first=True)
    )


def _company_features(lines: list[_Line], header_first: int, name: _Name, value: str) -> dict[str, float]:
    words = value.split()
    return {
        **_rule(name.rule, ("legal_form", "trade_word", "registration", "first_name")),
        # a name line skipped above it in the header: a third of such sellers are wrong, one such line or three (the
        # gold joins a trade name above, "LEMON TREE RESTAURANT" / "JTJ FOODS SDN BHD", or takes it instead)
        "name_above": float(name.first > header_first),
        "name_below": float(_name_below(lines, name)),
        "joined_lines": float(name.last - name.first),
        "single_word": float(len(words) == 1),
        "odd_punctuation": float(_odd_punctuation(value)),
        "has_digit": float(any(c.isdigit() for c in value)),
    }


_WORD = re.compile(r"[a-z]{4,}")
# the words an address is made of that the pack knows: street words, and the trade words and states a printed
# address also holds ("TAMAN IDUSTRIES", "KUALA LUMPUR, MALAYSI")
_KNOWN_WORDS = tuple(
    sorted({w for w in (*_ADDRESS_WORD_LIST, *_TRADE_WORD_LIST, *" ".join(_REGION_LIST).split()) if len(w) >= 4})
)


def _misread(word: str) -> bool:
    """A word one letter away from a known address word it is not ("banoar", "perinoustrian", "idustries",
    "malaysi"): an OCR misreading, so the printed address and the text disagree somewhere."""
    return word not in _KNOWN_WORDS and any(
        abs(len(word) - len(known)) <= 1 and Levenshtein.distance(word, known, score_cutoff=1) == 1
        for known in _KNOWN_WORDS
    )


def _opens_with_words(text: str) -> bool:
    """An address whose first two words hold no digit opens with a name, a building or a branch above the street
    ("SUSHI MENTAI PLAZA DANAU", "CAR PARK OFFICE"), which the gold joins or leaves out; one opening with a unit, lot
    or floor ("LOT F36", "UNIT G-5B", "NO: 28", "LEVEL 6") opens with its number as much as "NO. 3" does (on the
    labelled receipts the first are a third wrong, the second one in 24)."""
    return not any(c.isdigit() for c in "".join(text.split()[:2]))


def _address_features(lines: list[_Line], after: int, first: int, last: int) -> dict[str, float]:
    texts = [lines[n].text for n in range(first, last + 1)]
    reached = next((i for i, t in enumerate(texts) if _is_town(t) or _REGION.search(t)), None)
    return {
        "lines": float(len(texts)),
        "skipped_lines": float(min(first - after, 3)),  # lines between the seller's name and its address
        "no_postcode": float(not any(_POSTCODE.search(t) for t in texts)),
        "no_region": float(not any(_REGION.search(t) for t in texts)),
        "lines_after_town": float(0 if reached is None else len(texts) - 1 - reached),
        "opens_without_number": float(_opens_with_words(" ".join(texts))),
        "long_number": float(any(re.search(r"\d{6,}", t) for t in texts)),  # a phone or registration number
        "misread_words": float(min(sum(_misread(w) for t in texts for w in _WORD.findall(t)), 2)),
        "short_last_line": float(sum(c.isalpha() for c in texts[-1]) < 4),
    }


def _date_features(dates: list[DateMention], mention: DateMention, labelled: bool, printed: str) -> dict[str, float]:
    others = {d.value for d in dates} - {mention.value}
    nearest = min((abs((d - mention.value).days) for d in others), default=0)
    return {
        "unlabelled": float(not labelled),
        "other_dates": float(min(len(others), 3)),
        "far_from_other_dates": float(bool(others) and nearest > _DAYS_FAR),
        "two_digit_year": float(not re.search(r"\d{4}", printed)),
    }


def _total_features(total: _Total, amounts: list[_Amount], lines: list[_Line]) -> dict[str, float]:
    value = total.amount.value
    tendered = {a.value for a in amounts if _PAID.search(lines[a.line].text) or _CHANGE.search(lines[a.line].text)}
    # the total before its rounding to 5 sen is printed too ("TOTAL INCL. GST 27.27" / "ROUNDING -0.02" / 27.25): an
    # amount less than 5 sen above the total is the total itself, not a larger amount
    larger = [a.value for a in amounts if a.value >= value + _ROUNDING and a.value not in tendered]
    rounded = any("rounding" in line.text for line in lines)
    printed = Counter(a.value for a in amounts)
    return {
        **_rule(total.rule, ("cash_and_label", "cash_only", "strong_label", "label", "repeated_largest")),
        "contested": float(total.tied),  # a rival amount carried as strong a label
        "exceeded": float(bool(larger)),  # a larger amount printed, not a tendered one: a total is the largest
        "printed_once": float(sum(a.value == value for a in amounts) == 1),  # a total is printed again (cash, sum)
        "cash_confirms": float(total.settled == value),
        "cash_contradicts": float(total.settled is not None and total.settled != value),
        # rounded to 5 sen, yet not a multiple of it; unless the cash paid less the change settles it: that shop does
        # not round (a ROUNDING line printing 0.00)
        "odd_rounding": float(rounded and (value * 100) % 5 != 0 and total.settled != value),
        "from_column": float(total.from_column),
        "larger_repeated": float(any(printed[v] > 1 for v in larger)),  # a larger amount printed again: a total?
        "share_of_largest": float(value / max(larger)) if larger else 1.0,
    }


def extract_receipt(doc: ExtractionInput, schema: SchemaVersion) -> list[CandidateItem]:
    """Company, date, address and total of a receipt; nothing at all for a document that is not one."""
    view = scan_view(doc.text)
    lines = _lines(view)
    amounts = _amounts(lines)
    if not _looks_like_receipt(lines, amounts):
        return []
    day_first = bool(schema.options.get("day_first", True))
    candidates: list[CandidateItem] = []
    first, end = _header(lines)
    company = _company(lines, first, end)
    if company is not None:
        start = lines[company.first].start
        quote = doc.text[start : company.end]
        name = " ".join(quote.split())
        features = _company_features(lines, first, company, name)
        candidates.append(
            field_candidate(schema, "company", {"value": name}, quote, start, company.factor, name, features)
        )
        address = _address(lines, company.last + 1)
        if address is not None:
            start, quote = _span(doc.text, lines, *address)
            flat = " ".join(quote.split())
            features = _address_features(lines, company.last + 1, *address)
            candidates.append(field_candidate(schema, "address", {"value": flat}, quote, start, FULL, flat, features))
    # a date glued to letters before it ("HD03-04-06") is part of a product code
    dates = [d for d in find_dates(view, day_first=day_first) if not view[d.start - 1 : d.start].isalpha()]
    if dates:
        labelled = [d for d in dates if "date" in view[max(0, d.start - 40) : d.start]]
        # unlabelled, the sale's date is the one printed with its time; codes and batch numbers print none
        timed = [d for d in dates if _CLOCK.match(view, d.end)]
        mention, factor = (labelled[0], FULL) if labelled else ((timed or dates)[0], PARTIAL)
        printed = doc.text[mention.start : mention.end]
        value: dict[str, Any] = {"value": mention.value.isoformat(), "as_printed": printed}
        features = _date_features(dates, mention, bool(labelled), printed)
        candidates.append(field_candidate(schema, "date", value, printed, mention.start, factor, printed, features))
    total = _total(lines, amounts)
    if total is not None:
        printed = doc.text[total.amount.start : total.amount.end]
        value = {"value": float(total.amount.value), "as_printed": printed}
        features = _total_features(total, amounts, lines)
        candidates.append(
            field_candidate(schema, "total", value, printed, total.amount.start, total.factor, printed, features)
        )
    return candidates
