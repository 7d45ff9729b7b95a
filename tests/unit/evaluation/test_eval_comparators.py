"""Comparators: each normalizes both sides the same way; unparseable values fall back to strings."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from extraction_assets.lib.evaluation import (
    Comparator,
    FieldMapping,
    normalize_text,
    parse_amount,
    parse_date,
    set_members,
    spans_overlap,
    values_match,
)


def _m(compare: Comparator, **kw) -> FieldMapping:
    return FieldMapping(gold="x", compare=compare, **kw)


def test_normalized_text_ignores_case_punctuation_and_line_breaks() -> None:
    assert normalize_text("27,JALAN DEDAP 13,\nTAMAN  Jaya.") == "27 jalan dedap 13 taman jaya"
    assert values_match("27, Jalan Dedap 13, Taman Jaya", "27,JALAN DEDAP 13,\nTAMAN JAYA.", _m(Comparator.NORMALIZED))
    assert not values_match("Jalan Dedap", "27 Jalan Dedap", _m(Comparator.NORMALIZED))


def test_exact_is_strict_but_trims() -> None:
    assert values_match(" ABC ", "ABC", _m(Comparator.EXACT))
    assert not values_match("abc", "ABC", _m(Comparator.EXACT))


def test_dates_in_different_formats() -> None:
    day_first = _m(Comparator.DATE, day_first=True)
    assert values_match("2018-10-05", "05/10/2018", day_first)
    assert not values_match("2018-05-10", "05/10/2018", day_first)
    month_first = _m(Comparator.DATE)
    assert values_match("2016-09-23", "9/23/16", month_first)
    assert values_match("September 23, 2016", "9/23/16", month_first)
    assert parse_date("[]/[]/2004") is None  # a date missing its day and month is not a date
    assert parse_date("2016/05/01", day_first=True) == date(2016, 5, 1)  # a year first is year, month, day
    assert parse_date("(06/12/2016)", day_first=True) == date(2016, 12, 6)  # brackets are not part of the date
    assert parse_date("perpetual") is None
    assert values_match("Perpetual", "perpetual", month_first)  # falls back to the normalized string
    assert parse_date("2020-02-30") is None


def test_amounts_ignore_currency_and_grouping() -> None:
    amount = _m(Comparator.AMOUNT)
    assert values_match("RM 1,234.50", "1234.5", amount)
    assert values_match("9.00", "9", amount)
    assert not values_match("9.10", "9.00", amount)
    assert parse_amount(12) == Decimal("12")
    assert parse_amount("no number") is None


def test_boolean_compares_yes_no() -> None:
    boolean = _m(Comparator.BOOLEAN)
    assert values_match(True, "Yes", boolean)
    assert values_match("no", "No", boolean)
    assert not values_match(True, "No", boolean)


def test_set_members_drop_aliases_and_split() -> None:
    assert set_members('Acme Corp ("Acme"); Beta LLC (the "Buyer")', ";") == ["acme corp", "beta llc"]
    assert set_members(["Acme Corp", ""], None) == ["acme corp"]


def test_span_overlap() -> None:
    assert spans_overlap((0, 10), (5, 20))
    assert not spans_overlap((0, 10), (10, 20))  # half-open: touching is not overlapping
    assert spans_overlap((0, 10), (8, 30), min_share=0.2)
    assert not spans_overlap((0, 10), (8, 30), min_share=0.5)
    assert date(2016, 9, 23) == parse_date("9/23/16")


def test_set_members_drop_aliases_however_bracketed() -> None:
    # the gold's forms: a stray "(" before the name, a group left open, nested groups, a quoted alias unbracketed
    assert set_members('(Dragon Systems, Inc. ("Dragon Systems")', None) == ["dragon systems inc"]
    assert set_members('Pretzel Time, Inc. ("Pretzel Time"', None) == ["pretzel time inc"]
    assert set_members('New China Media LLC ((a/k/a NCM LLC) ("NCM")', None) == ["new china media llc"]
    assert set_members('Excite, Inc."Excite"; CyberShop “Client”', ";") == ["excite inc", "cybershop"]
    # a quoted name alone is the name, not nothing
    assert set_members(' "FRANCHISOR")', None) == ["franchisor"]


def test_set_members_spell_a_name_one_way() -> None:
    # the gold types "and" for a printed "&" and drops accents: the same party, not a wrong one
    assert set_members("BABCOCK & WILCOX ENTERPRISES, INC.", None) == set_members(
        "Babcock and Wilcox Enterprises, Inc.", None
    )
    assert set_members("Eurofarma Laboratórios S.A.", None) == ["eurofarma laboratorios s a"]
    assert set_members("AT&T Corp.", None) == ["at and t corp"]
