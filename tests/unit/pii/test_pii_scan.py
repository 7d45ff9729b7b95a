"""`Scan.numbers` with a lead: a pattern searched from a few characters before each stretch's first digit finds what
it finds searched over the whole stretch, for each pattern the detectors give a lead."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from extraction_assets.lib.pii import contacts, numbers
from extraction_assets.lib.pii.scan import NUMBER_REACH_BEFORE, Scan

# (pattern, the lead its detector gives it), as `numbers.py` and `contacts.py` search them
LEADS: list[tuple[re.Pattern[str], int]] = [
    (numbers._CARD, 0),
    (numbers._IBAN, 3),
    (numbers._SSN, 0),
    (numbers._SSN_WRAPPED, 0),
    (numbers._CN_RIC, 0),
    (numbers._SNILS, 0),
    (numbers._INN, 0),
    (numbers._VN_ID, 0),
    (contacts._NOT_PHONE_DIGIT_LED, 0),
    (contacts._PHONE_HINT, 0),
    (contacts._PHONE_SHAPE, 1),
    (contacts._INTERNATIONAL_RUN, 1),
    (contacts._IPV4, 0),
    *((pattern, lead) for pattern, lead in contacts._NOT_PHONE_SYMBOL_LED if lead is not None),
]

_PIECES = st.sampled_from(
    ["1", "42", "4111 1111 1111 1111", "078-05-1120", "DE89 3704 0044 0532 0130 00", "GB 82 WEST 1234 5698 7654 32",
     "+1 202 555 0143", "(202) ", "USD ", "$", "€ ", "10.0.0.1", "12:30", "1,234.50", " ", "\n", "-", ".", "a", "DE",
     "Tel ", "x" * 300, "Ъ"]
)  # fmt: skip


def _spans(scan: Scan, pattern: re.Pattern[str], lead: int | None) -> list[tuple[int, int]]:
    return [m.span() for m in scan.numbers(pattern, lead=lead)]


def _next_spans(scan: Scan, pattern: re.Pattern[str], lead: int | None) -> list[tuple[int, int]]:
    """What `next_number` finds from each position on, as `find_cards` and `find_ibans` walk it."""
    found = (scan.next_number(pattern, pos, lead=lead) for pos in range(0, len(scan.text) + 1, 7))
    return [m.span() if m else (-1, -1) for m in found]


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=30).map("".join))
def test_a_lead_finds_what_the_whole_stretch_gives(text: str) -> None:
    scan = Scan(text, "US")
    for pattern, lead in LEADS:
        assert _spans(scan, pattern, lead) == _spans(scan, pattern, None), pattern.pattern
        assert _next_spans(scan, pattern, lead) == _next_spans(scan, pattern, None), pattern.pattern


def test_a_lead_shorter_than_the_letters_before_a_digit_misses_the_value() -> None:
    """The test above can fail: an IBAN opens with its country code, three characters before its first digit."""
    scan = Scan("x" * NUMBER_REACH_BEFORE * 2 + " DE89 3704 0044 0532 0130 00", "US")
    assert _spans(scan, numbers._IBAN, 3) == _spans(scan, numbers._IBAN, None) != []
    assert _spans(scan, numbers._IBAN, 0) == []
