"""`Scan.numbers` with a lead and a number of digits: a pattern searched from a few characters before each stretch's
first digit, in the stretches that hold enough digits, finds what it finds searched over every whole stretch, for each
pattern the detectors search so."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from extraction_assets.lib.pii import contacts, numbers
from extraction_assets.lib.pii.scan import NUMBER_REACH_BEFORE, Scan

# (pattern, lead, digits), as `numbers.py` and `contacts.py` search them
SEARCHED: list[tuple[re.Pattern[str], int, int]] = [
    (numbers._CARD, 0, 12),
    (numbers._IBAN, 3, 2),
    (numbers._SSN, 0, 9),
    (numbers._SSN_WRAPPED, 0, 9),
    (numbers._CN_RIC, 0, 17),
    (numbers._SNILS, 0, 11),
    (numbers._INN, 0, 10),
    (numbers._VN_ID, 0, 9),
    (contacts._NOT_PHONE_DIGIT_LED, 0, 1),
    (contacts._PHONE_HINT, 0, 7),
    (contacts._PHONE_SHAPE, 1, 7),
    (contacts._INTERNATIONAL_RUN, 1, 3),
    (contacts._IPV4, 0, 4),
    *((pattern, lead, 1) for pattern, lead in contacts._NOT_PHONE_SYMBOL_LED if lead is not None),
]

_PIECES = st.sampled_from(
    ["1", "42", "4111 1111 1111 1111", "078-05-1120", "DE89 3704 0044 0532 0130 00", "GB 82 WEST 1234 5698 7654 32",
     "+1 202 555 0143", "(202) ", "USD ", "$", "€ ", "10.0.0.1", "12:30", "1,234.50", " ", "\n", "-", ".", "a", "DE",
     "Tel ", "x" * 300, "Ъ", "123456789012", "DE12ABCDEFGHIJ"]
)  # fmt: skip


def _spans(scan: Scan, pattern: re.Pattern[str], lead: int | None, digits: int = 1) -> list[tuple[int, int]]:
    return [m.span() for m in scan.numbers(pattern, lead=lead, digits=digits)]


def _next_spans(scan: Scan, pattern: re.Pattern[str], lead: int | None, digits: int = 1) -> list[tuple[int, int]]:
    """What `next_number` finds from each position on, as `find_cards` and `find_ibans` walk it."""
    found = (scan.next_number(pattern, pos, lead=lead, digits=digits) for pos in range(0, len(scan.text) + 1, 7))
    return [m.span() if m else (-1, -1) for m in found]


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_a_lead_and_digits_find_what_the_whole_stretches_give(text: str) -> None:
    scan = Scan(text, "US")
    for pattern, lead, digits in SEARCHED:
        assert _spans(scan, pattern, lead, digits) == _spans(scan, pattern, None), pattern.pattern
        assert _next_spans(scan, pattern, lead, digits) == _next_spans(scan, pattern, None), pattern.pattern


def test_a_lead_shorter_than_the_letters_before_a_digit_misses_the_value() -> None:
    """The test above can fail: an IBAN opens with its country code, three characters before its first digit."""
    scan = Scan("x" * NUMBER_REACH_BEFORE * 2 + " DE89 3704 0044 0532 0130 00", "US")
    assert _spans(scan, numbers._IBAN, 3) == _spans(scan, numbers._IBAN, None) != []
    assert _spans(scan, numbers._IBAN, 0) == []


def test_more_digits_than_a_value_holds_miss_it() -> None:
    """And so can the digits: a dashed SSN holds nine."""
    scan = Scan("x" * NUMBER_REACH_BEFORE * 2 + " SSN 078-05-1120.", "US")
    assert _spans(scan, numbers._SSN, 0, 9) == _spans(scan, numbers._SSN, None) != []
    assert _spans(scan, numbers._SSN, 0, 10) == []
