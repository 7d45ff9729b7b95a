"""Typed values with exact spans: amounts with currencies, organisations, placeholders."""

from __future__ import annotations

import pytest

from extraction_assets.lib.heuristics.entities import (
    find_amounts,
    find_organisations,
    find_placeholders,
)


@pytest.mark.parametrize(
    ("text", "written", "amount", "currency"),
    [
        ("new total $12,500.00 today", "$12,500.00", 12500.0, "USD"),
        ("charge of USD 1,850.00 applies", "USD 1,850.00", 1850.0, "USD"),
        ("Tổng: 92.400.000 VND (chưa VAT)", "92.400.000 VND", 92_400_000.0, "VND"),
        ("giá 35.000đ mỗi suất", "35.000đ", 35_000.0, "VND"),
        ("hoàn 2 triệu cho khách", "2 triệu", 2_000_000.0, "VND"),
        ("сумма 1 000 000 руб. по договору", "1 000 000 руб.", 1_000_000.0, "RUB"),
        ("a $1.5 million deal", "$1.5 million", 1_500_000.0, "USD"),
        ("refund €1.234,56 now", "€1.234,56", 1234.56, "EUR"),
    ],
)
def test_amounts_with_currency(text: str, written: str, amount: float, currency: str) -> None:
    (money,) = find_amounts(text)
    assert (money.text, money.amount, money.currency) == (written, amount, currency)
    assert text[money.start : money.end] == written


def test_numbers_without_currency_are_not_money() -> None:
    assert find_amounts("300 units shipped in 2026, order 1,200 brackets, version 1.2") == []


def test_amounts_inside_a_window_keep_absolute_offsets() -> None:
    text = "First $10.00 then $20.00"
    (second,) = find_amounts(text, 12)
    assert (second.start, second.amount) == (text.index("$20.00"), 20.0)


def test_organisations_by_legal_form() -> None:
    text = (
        "Thanks to Northwind Packaging Inc. and The Brightline Group. I write for Brightline Hospitality LLC. "
        "Công ty TNHH Bao Bì Việt giao hàng. ООО «Ромашка» и 上海华东食品有限公司 ok."
    )
    names = [f.text for f in find_organisations(text)]
    assert names == [
        "Northwind Packaging Inc.",
        "Brightline Group",
        "Brightline Hospitality LLC",
        "Công ty TNHH Bao Bì Việt",
        "ООО «Ромашка»",
        "上海华东食品有限公司",
    ]
    for found in find_organisations(text):
        assert text[found.start : found.end] == found.text


def test_placeholders_of_one_kind() -> None:
    text = "mail [EMAIL_1] or call [PHONE_2], cc [EMAIL_12]"
    assert [f.text for f in find_placeholders(text, "EMAIL")] == ["[EMAIL_1]", "[EMAIL_12]"]
    assert [f.text for f in find_placeholders(text, "PHONE")] == ["[PHONE_2]"]
