"""Due-date parsing: Vietnamese and English phrases relative to the document date, never the clock."""

from __future__ import annotations

from datetime import date

import pytest

from extraction_assets.lib.heuristics.due_dates import _RULE_WORDS, _RULES, DIGIT, parse_due_date

WED = date(2026, 11, 25)


def test_reference_is_a_wednesday() -> None:
    assert WED.weekday() == 2  # the expectations below are worked out from this


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Em gửi thứ hai tuần sau", date(2026, 11, 30)),
        ("xong trước thứ sáu tuần tới", date(2026, 12, 4)),
        ("chủ nhật tuần sau giao hàng", date(2026, 12, 6)),
        ("thứ 3 tuần sau", date(2026, 12, 1)),
        ("tuần sau em làm", date(2026, 11, 30)),
        ("tuần tới", date(2026, 11, 30)),
        ("trong tuần sẽ xong", date(2026, 11, 27)),
        ("tuần này", date(2026, 11, 27)),
        ("ngày mai gửi", date(2026, 11, 26)),
        ("hôm nay chốt", date(2026, 11, 25)),
        ("cuối tháng thanh toán", date(2026, 11, 30)),
        ("cuối tháng sau", date(2026, 12, 31)),
        ("trước thứ sáu", date(2026, 11, 27)),
        ("trước ngày 15/12", date(2026, 12, 15)),
        ("trước ngày 10/1", date(2027, 1, 10)),  # already past this year -> next one
        ("hạn 15/12/2026", date(2026, 12, 15)),
        ("ngày 20 tháng 12", date(2026, 12, 20)),
    ],
)
def test_vietnamese_phrases(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'll send it by Friday", date(2026, 11, 27)),
        ("by Wednesday", date(2026, 12, 2)),  # bare weekday is strictly after the reference
        ("on Monday", date(2026, 11, 30)),
        ("next Tuesday", date(2026, 12, 1)),
        ("next Friday", date(2026, 12, 4)),
        ("by fri.", date(2026, 11, 27)),
        ("tomorrow", date(2026, 11, 26)),
        ("today", date(2026, 11, 25)),
        ("end of week", date(2026, 11, 27)),
        ("EOW", date(2026, 11, 27)),
        ("end of the month", date(2026, 11, 30)),
        ("EOM", date(2026, 11, 30)),
        ("next week", date(2026, 11, 30)),
        ("end of next week", date(2026, 12, 4)),
        ("Dec 15", date(2026, 12, 15)),
        ("December 3rd", date(2026, 12, 3)),
        ("15 December 2026", date(2026, 12, 15)),
        ("2026-12-15", date(2026, 12, 15)),
        ("by 15/12", date(2026, 12, 15)),
    ],
)
def test_english_phrases(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected


def test_weekday_of_next_week_wins_over_plain_next_week() -> None:
    assert parse_due_date("thứ hai tuần sau", WED) == date(2026, 11, 30)
    assert parse_due_date("thứ tư tuần sau", WED) == date(2026, 12, 2)  # not Monday 30th


def test_deadline_cue_beats_an_earlier_mention() -> None:
    assert parse_due_date("Hôm nay họp, em gửi trước thứ sáu tuần sau", WED) == date(2026, 12, 4)
    assert parse_due_date("Today we met; I will deliver by Monday", WED) == date(2026, 11, 30)


def test_by_friday_said_on_a_friday_means_next_week() -> None:
    assert parse_due_date("by Friday", date(2026, 11, 27)) == date(2026, 12, 4)


def test_week_and_month_boundaries() -> None:
    sunday = date(2026, 11, 29)
    assert parse_due_date("tuần sau", sunday) == date(2026, 11, 30)
    assert parse_due_date("cuối tháng sau", date(2026, 12, 30)) == date(2027, 1, 31)
    assert parse_due_date("end of month", date(2028, 2, 10)) == date(2028, 2, 29)


@pytest.mark.parametrize("text", ["thứ hai tuần sau", "by Friday", "tomorrow", "cuối tháng", "Dec 15", "15/12"])
def test_no_reference_gives_no_relative_date(text: str) -> None:
    assert parse_due_date(text, None) is None


def test_fully_specified_date_needs_no_reference() -> None:
    assert parse_due_date("hạn 15/12/2026", None) == date(2026, 12, 15)
    assert parse_due_date("due 2026-12-15", None) == date(2026, 12, 15)


@pytest.mark.parametrize(
    "text",
    [
        "Khoản phạt 15.000.000 VND",
        "Chuyển 15.000.000 VND cho nhà cung cấp",
        "1/2 lô hàng bị lỗi",
        "Cost was $1,250.50",
        "lần thứ hai khách hủy",
        "version 2.10.3 shipped",
        "",
        "không có gì",
    ],
)
def test_non_dates_are_not_parsed(text: str) -> None:
    assert parse_due_date(text, WED) is None


def test_amount_next_to_a_real_deadline_is_ignored() -> None:
    assert parse_due_date("Thanh toán 15.000.000 VND trước thứ sáu", WED) == date(2026, 11, 27)


def test_invalid_calendar_date_is_rejected() -> None:
    assert parse_due_date("hạn 31/11/2026", WED) is None


PHRASES_FOR_EVERY_RULE = (
    "trước thứ sáu tuần sau",
    "hạn chủ nhật",
    "trong tuần sau",
    "đầu tuần tới",
    "cuối tuần này",
    "sáng mai",
    "ngày kia",
    "chiều nay",
    "cuối tháng này",
    "cuối tháng sau",
    "tháng tới",
    "cuối tháng 12",
    "послезавтра",
    "the day after tomorrow",
    "tomorrow",
    "by eod",
    "end of the week",
    "end of next week",
    "early next week",
    "end of this month",
    "end of next month",
    "next month",
    "next friday",
    "within two weeks",
    "4 days from now",
    "через 3 дня",
    "by fri.",
    "15/12/2026",
    "due 15/12",
    "ngày 15 tháng 12 năm 2026",
    "15 января 2027",
    "2026-12-15",
    "dec. 15th, 2026",
    "15th of december 2026",
)


def test_every_rule_match_holds_one_of_its_words_so_the_rules_skipped_could_not_match() -> None:
    matched = set()
    for phrase in PHRASES_FOR_EVERY_RULE:
        for index, rule in enumerate(_RULES):
            for m in rule.pattern.finditer(phrase):
                matched.add(index)
                words = _RULE_WORDS.present(m.group(0)) | (
                    set(DIGIT) if any(c.isdigit() for c in m.group(0)) else set()
                )
                assert not words.isdisjoint(rule.needles), (phrase, rule.pattern.pattern)
    assert matched == set(range(len(_RULES)))


def test_digits_of_any_script_still_reach_the_absolute_rules() -> None:
    assert parse_due_date("due ١٥/١٢/٢٠٢٦", None) == parse_due_date("due 15/12/2026", None)


def test_a_due_date_on_the_document_date_stays_that_day() -> None:
    assert parse_due_date("due 25/11", WED) == WED
    assert parse_due_date("hạn 25 tháng 11", WED) == WED
    assert parse_due_date("due 24/11", WED) == date(2027, 11, 24)  # the day before is next year's


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("hạn 05 tháng một 2015", date(2015, 1, 5)),
        ("trước ngày 20 tháng mười hai", date(2026, 12, 20)),
        ("срок 15 января 2027", date(2027, 1, 15)),
        ("до 3 декабря", date(2026, 12, 3)),
    ],
)
def test_vietnamese_and_russian_month_names(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("by Friday, 11 December 2026", date(2026, 12, 11)),
        ("by Monday, 11 December 2026", date(2026, 12, 11)),  # the weekday disagrees: the date still wins
        ("due Friday Dec 11", date(2026, 12, 11)),
        ("trước thứ sáu, ngày 11/12/2026", date(2026, 12, 11)),
        ("hạn thứ 6 ngày 11 tháng 12", date(2026, 12, 11)),
        ("Hôm nay họp, hạn chót thứ sáu 11/12", date(2026, 12, 11)),
        ("by Friday 5pm", date(2026, 11, 27)),  # a time is not a date: the weekday stands
    ],
)
def test_an_explicit_date_wins_over_the_weekday_before_it(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I'll send it in 3 days", date(2026, 11, 28)),
        ("within two weeks", date(2026, 12, 9)),
        ("within a week", date(2026, 12, 2)),
        ("4 days from now", date(2026, 11, 29)),
        ("after 4 days", date(2026, 11, 29)),
        ("in three weeks' time", date(2026, 12, 16)),
        ("in a fortnight", date(2026, 12, 9)),
        ("in 2 months", date(2027, 1, 25)),
        ("trong 3 ngày", date(2026, 11, 28)),
        ("3 ngày nữa em gửi", date(2026, 11, 28)),
        ("sau 2 tuần", date(2026, 12, 9)),
        ("trong vòng hai tuần", date(2026, 12, 9)),
        ("через 3 дня", date(2026, 11, 28)),
        ("через неделю", date(2026, 12, 2)),
        ("в течение недели", date(2026, 12, 2)),
        ("через пару месяцев", date(2027, 1, 25)),
    ],
)
def test_numeric_and_word_offsets(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected


def test_month_offsets_stay_in_a_short_month() -> None:
    assert parse_due_date("in 1 month", date(2027, 1, 31)) == date(2027, 2, 28)


@pytest.mark.parametrize("text", ["in 3 days", "trong 3 ngày", "через 3 дня"])
def test_offsets_need_a_reference(text: str) -> None:
    assert parse_due_date(text, None) is None


def test_an_offset_within_a_span_is_a_deadline() -> None:
    assert parse_due_date("Hôm nay họp, trong 3 ngày em gửi", WED) == date(2026, 11, 28)
    assert parse_due_date("Today we met; please reply within two weeks", WED) == date(2026, 12, 9)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3 days", None),  # a bare duration is no deadline
        ("in 1.5 days", None),  # not "5 days"
        ("ngày 20 tháng 12 năm 2026 ký", date(2026, 12, 20)),  # not "12 năm" (twelve years)
        ("sau 15 tháng 12", date(2026, 12, 15)),  # "after 15 December", not fifteen months
    ],
)
def test_what_is_not_an_offset(text: str, expected: date | None) -> None:
    assert parse_due_date(text, WED) == expected


@pytest.mark.parametrize(
    "text", ["in 1 year 2 months", "1 year, 2 months from now", "через 1 год и 2 месяца", "sau 1 năm 2 tháng"]
)
def test_an_offset_adds_up_all_its_amounts(text: str) -> None:
    assert parse_due_date(text, WED) == date(2028, 1, 25)  # not two months alone


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("9 Tháng 1 2015 lúc 15:08", date(2015, 1, 9)),  # the year needs no "năm"
        ("скончался 14 декабря в 1989 году", date(1989, 12, 14)),
    ],
)
def test_year_after_a_vietnamese_or_russian_day_and_month(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("сегодня", WED), ("завтра", date(2026, 11, 26)), ("до послезавтра", date(2026, 11, 27))],
)
def test_russian_day_words(text: str, expected: date) -> None:
    assert parse_due_date(text, WED) == expected
