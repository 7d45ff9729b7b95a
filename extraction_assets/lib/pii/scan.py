"""What every PII detector shares: the candidate record, the per-text scan state and context tests.

Context words raise or lower a candidate: a phone context ("call", "điện thoại", "телефон") lets a
national number from an unknown region through; a business label right before a number ("Order No.",
"INV-", "订单号") keeps it readable as the business id it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple


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

    @cached_property
    def lowered(self) -> str:
        """The text in lower case, for the cheap substring pre-checks that let a detector skip its pattern."""
        return self.text.lower()

    def mentions(self, hints: tuple[str, ...]) -> bool:
        """Whether any (lower-case) hint occurs in the text."""
        lowered = self.lowered
        return any(hint in lowered for hint in hints)


def squash(value: str) -> str:
    return "".join(value.split()).casefold()


_NON_DIGIT = re.compile(r"\D")


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
