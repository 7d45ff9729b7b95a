"""Whether a predicted value equals a gold value, under the comparator a registry field names.

Each comparator normalizes both sides the same way, so a dataset's formatting (`RM9.00` vs `9.00`,
`19/10/2018` vs `2018-10-19`, line breaks inside an address) does not count as an error; a value a
comparator cannot parse falls back to the normalized string comparison.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import date, datetime
from decimal import Decimal

from dateutil import parser as date_parser
from price_parser import Price

from extraction_assets.lib.evaluation.registry import Comparator, FieldMapping

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)
# a bracketed group with no bracket inside: removed innermost first, so nested aliases go too
_INNER_PARENTHESES = re.compile(r"\([^()]*\)")
# what is left of a group whose ")" is missing: an opening bracket that starts a quoted alias runs to the end
_OPEN_ALIAS = re.compile(r"\(\s*[\"\u201c].*$", re.DOTALL)
# a quoted alias after the name without brackets: `Tickets.com Inc. "Tickets"`
_TRAILING_ALIAS = re.compile(r"[\"\u201c][^\"\u201c\u201d]*[\"\u201d]\s*$")
_AMPERSAND = re.compile(r"\s*&\s*")
_YEAR_FIRST = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}\b")
# two defaults that differ in every part: a part missing from the string shows as a difference
_DEFAULTS = (datetime(1901, 1, 1), datetime(1902, 2, 2))


def normalize_text(value: object) -> str:
    """Unicode-compatible, case-folded, punctuation as spaces, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


def parse_date(value: object, day_first: bool = False) -> date | None:
    """A complete calendar date, or None (no date, or one missing its day, month or year). Brackets around a printed
    date are not part of it, and a date that opens with a four-digit year is year, month, day whatever `day_first`
    says (dateutil would read "2016/05/01" day first as 5 January)."""
    text = str(value).strip().strip("()[]").strip()
    if not text:
        return None
    try:
        return datetime.fromisoformat(text).date()  # ISO is unambiguous; dateutil's day_first would swap it
    except ValueError:
        pass
    year_first = bool(_YEAR_FIRST.match(text))
    try:
        first, second = (
            date_parser.parse(text, dayfirst=day_first and not year_first, yearfirst=year_first, default=d)
            for d in _DEFAULTS
        )
    except (ValueError, OverflowError, date_parser.ParserError):
        return None
    return first.date() if first.date() == second.date() else None


def parse_amount(value: object) -> Decimal | None:
    if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
        return Decimal(str(value))
    return Price.fromstring(str(value)).amount


def is_truthy(value: object, truthy: list[str]) -> bool:
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    return normalize_text(value) in {normalize_text(t) for t in truthy}


def without_aliases(text: str) -> str:
    """A name without its aliases: bracketed groups (nested ones too), a group left open by a missing ")" that starts
    a quoted alias (`Pretzel Time, Inc. ("Pretzel Time"`), a quoted alias after the name without brackets
    (`Excite, Inc. "Excite"`), and stray brackets (`(Dragon Systems, Inc. ("Dragon Systems")` is Dragon Systems,
    Inc., not nothing)."""
    previous = None
    while previous != text:
        previous, text = text, _INNER_PARENTHESES.sub(" ", text)
    text = _OPEN_ALIAS.sub(" ", text)
    name = _TRAILING_ALIAS.sub(" ", text)
    return (name if name.strip() else text).replace("(", " ").replace(")", " ")


def _one_spelling(name: str) -> str:
    """A name as it may be typed otherwise: "&" spelled "and", accents dropped ("BABCOCK & WILCOX" is "Babcock and
    Wilcox", "Laboratórios" is "Laboratorios")."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    return _AMPERSAND.sub(" and ", plain)


def set_members(value: object, split: str | None) -> list[str]:
    """Normalized members of a set value, each without its aliases (`Acme Inc ("Acme")` is Acme Inc) and spelled
    one way (`_one_spelling`)."""
    parts = value if isinstance(value, list) else (str(value).split(split) if split else [str(value)])
    members = [normalize_text(_one_spelling(without_aliases(str(p)))) for p in parts]
    return [m for m in members if m]


def values_match(predicted: object, gold: object, mapping: FieldMapping) -> bool:
    """Equality under the field's comparator (sets and spans are scored elsewhere, member by member)."""
    compare = mapping.compare
    if compare == Comparator.EXACT:
        return str(predicted).strip() == str(gold).strip()
    if compare == Comparator.DATE:
        left, right = parse_date(predicted, mapping.day_first), parse_date(gold, mapping.day_first)
        if left is not None and right is not None:
            return left == right
    elif compare == Comparator.AMOUNT:
        left_amount, right_amount = parse_amount(predicted), parse_amount(gold)
        if left_amount is not None and right_amount is not None:
            return left_amount == right_amount
    elif compare == Comparator.BOOLEAN:
        return is_truthy(predicted, mapping.truthy) == is_truthy(gold, mapping.truthy)
    return normalize_text(predicted) == normalize_text(gold)


def spans_overlap(a: tuple[int, int], b: tuple[int, int], min_share: float = 0.0) -> bool:
    """Two `[start, end)` spans share characters; with `min_share`, at least that share of the shorter one."""
    shared = min(a[1], b[1]) - max(a[0], b[0])
    if shared <= 0:
        return False
    shorter = min(a[1] - a[0], b[1] - b[0])
    return shorter > 0 and shared / shorter >= min_share
