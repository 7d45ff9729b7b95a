"""Clause segmentation keeps exact offsets, respects turns and never splits scrubber placeholders."""

from __future__ import annotations

import unicodedata

import pytest

from extraction_assets.lib.heuristics.segments import (
    Segment,
    make_title,
    normalize_for_match,
    segment_text,
    segment_turns,
)
from extraction_assets.lib.literals import LiteralScan
from extraction_assets.lib.models import Turn
from extraction_assets.lib.pii import PLACEHOLDER


def _texts(segments: list[Segment]) -> list[str]:
    return [s.text for s in segments]


def _assert_offsets(text: str, segments: list[Segment]) -> None:
    for seg in segments:
        assert text[seg.start : seg.end] == seg.text
        assert seg.text == seg.text.strip()


def test_english_sentences_and_clauses() -> None:
    text = "I will send it. Then we'll see! Are you sure? Yes; fine."
    segments = segment_text(text)
    assert _texts(segments) == ["I will send it.", "Then we'll see!", "Are you sure?", "Yes", "fine."]
    _assert_offsets(text, segments)
    assert segments[1].start == text.index("Then")


def test_vietnamese_keeps_amounts_and_decimals_whole() -> None:
    text = "Khách hủy đơn 15.000.000 VND. Tỷ lệ lỗi 2.5% thôi! Anh duyệt giúp em nhé?"
    segments = segment_text(text)
    assert _texts(segments) == ["Khách hủy đơn 15.000.000 VND.", "Tỷ lệ lỗi 2.5% thôi!", "Anh duyệt giúp em nhé?"]
    _assert_offsets(text, segments)


def test_chinese_terminators_split_without_spaces() -> None:
    text = "我会周五前发送。风险很高！要取消吗？好的"
    segments = segment_text(text)
    assert _texts(segments) == ["我会周五前发送。", "风险很高！", "要取消吗？", "好的"]
    _assert_offsets(text, segments)


def test_newlines_and_bullets_are_trimmed() -> None:
    text = "  - Tôi sẽ gửi báo giá\r\n* Khách hủy đơn\n\n1. Cần anh duyệt\n• Done\n"
    segments = segment_text(text)
    assert _texts(segments) == ["Tôi sẽ gửi báo giá", "Khách hủy đơn", "Cần anh duyệt", "Done"]
    _assert_offsets(text, segments)


def test_abbreviations_and_initials_do_not_end_sentences() -> None:
    text = "Mr. Nam will call at 5 p.m. tomorrow. Kho ở TP. HCM bị ngập."
    assert _texts(segment_text(text)) == ["Mr. Nam will call at 5 p.m. tomorrow.", "Kho ở TP. HCM bị ngập."]


def test_placeholders_are_never_split() -> None:
    text = "Gửi cho [EMAIL_1].Gọi [PHONE_2]? Hỏi [PERSON_NAME_3]; xong [EMAIL_1]!"
    segments = segment_text(text)
    _assert_offsets(text, segments)
    for match in PLACEHOLDER.finditer(text):
        owners = [s for s in segments if s.start <= match.start() and match.end() <= s.end]
        assert len(owners) == 1, match.group(0)
    assert _texts(segments)[0] == "Gửi cho [EMAIL_1].Gọi [PHONE_2]?"


def test_url_question_mark_is_not_a_terminator() -> None:
    text = "See https://example.test/form?id=3 and approve it."
    assert _texts(segment_text(text)) == [text]


def test_turn_boundaries_are_respected() -> None:
    text = "Header line. I will go now and then we cancel the order. Footer"
    first = text.index("I will")
    cut = text.index("then")
    end = text.index(" Footer")
    turns = [
        Turn(turn_id="b", start=cut, end=end, speaker="Binh"),
        Turn(turn_id="a", start=first, end=cut, speaker="An"),
    ]
    segments = segment_turns(text, turns)
    assert _texts(segments) == ["I will go now and", "then we cancel the order."]
    assert [s.turn_id for s in segments] == ["a", "b"]
    _assert_offsets(text, segments)
    assert all("Header" not in s.text and "Footer" not in s.text for s in segments)


def test_turns_out_of_range_are_clamped_or_skipped() -> None:
    text = "Tôi sẽ gửi."
    turns = [Turn(turn_id="x", start=5, end=2), Turn(turn_id="y", start=0, end=500)]
    segments = segment_turns(text, turns)
    assert _texts(segments) == ["Tôi sẽ gửi."]
    assert segments[0].turn_id == "y"


def test_sub_range_offsets_are_absolute() -> None:
    text = "Ignore this. Tôi sẽ gửi; khách hủy. Ignore that."
    lo, hi = text.index("Tôi"), text.index(" Ignore that")
    segments = segment_text(text, lo, hi)
    assert _texts(segments) == ["Tôi sẽ gửi", "khách hủy."]
    assert segments[0].start == lo
    _assert_offsets(text, segments)


def test_long_clause_is_split_at_commas_only_when_too_long() -> None:
    short = "Khách hủy đơn, kho trễ, thiếu người"
    assert _texts(segment_text(short)) == [short]
    long_text = ", ".join(f"mục số {i} bị trễ hạn vì chờ hàng" for i in range(12))
    segments = segment_text(long_text, max_chars=80)
    assert len(segments) == 12
    assert all(len(s.text) <= 80 for s in segments)
    _assert_offsets(long_text, segments)


@pytest.mark.parametrize("text", ["", "   \n\t ", "...", "- \n* \n"])
def test_nothing_to_segment(text: str) -> None:
    assert segment_text(text) == []


def test_normalize_for_match_folds_case_forms_and_tone_placement() -> None:
    nfd = unicodedata.normalize("NFD", "Khách HỦY đơn")
    assert normalize_for_match(nfd) == "khách hủy đơn"
    assert normalize_for_match("Khách huỷ") == normalize_for_match("khách hủy")
    assert normalize_for_match("Hoà vốn") == normalize_for_match("hòa vốn")
    assert normalize_for_match("hoàn thành") == "hoàn thành"  # tone stays on "a" before a final consonant
    assert normalize_for_match("I’ll") == "i'll"


def test_make_title_limits_length_at_word_boundary() -> None:
    assert make_title("  Tôi sẽ   gửi báo giá;  ") == "Tôi sẽ gửi báo giá"
    long_text = " ".join(["delivery"] * 40)
    title = make_title(long_text)
    assert len(title) <= 120
    assert title.endswith("…")
    assert title[:-1].split(" ") == ["delivery"] * len(title[:-1].split(" "))


def test_make_title_never_cuts_a_placeholder_in_half() -> None:
    text = "x" * 110 + "[EMAIL_12]" + "y" * 30
    title = make_title(text)
    assert len(title) <= 120
    assert "[EMAIL" not in title


def test_a_vietnamese_word_ending_in_a_latin_letter_is_not_an_initial() -> None:
    text = "Khách hủy đơn. Lô hàng bị trễ. Gặp ông Nguyễn V. Anh."
    assert [s.text for s in segment_text(text)] == ["Khách hủy đơn.", "Lô hàng bị trễ.", "Gặp ông Nguyễn V. Anh."]


def test_literal_scan_finds_every_literal_present_and_no_other() -> None:
    scan = LiteralScan(["will", "late", "deadline", "延迟"])
    assert scan.present("the shipment will be late, 延迟") == {"will", "late", "延迟"}
    assert scan.present("nothing here") == set()


def test_a_segment_ends_only_at_clause_characters_between_long_runs_of_plain_text() -> None:
    text = "x" * 500 + "; then more words here. And a last one? Yes"
    segments = segment_text(text, max_chars=1000)
    _assert_offsets(text, segments)
    assert _texts(segments)[1:] == ["then more words here.", "And a last one?", "Yes"]
    assert segment_text("___ ... ---") == []


WRAPPED_MAIL = (
    "Hi team,\n"
    "\n"
    "Quick update on the Saigon rollout before the board call this week. Payment is due by\n"
    "2026-12-11 and the supplier has confirmed the shipment for the first batch of\n"
    "stores.\n"
    "- We will send the signed contract to legal once the final numbers are\n"
    "  in from finance\n"
    "- Legal has the draft\n"
    "> On Monday Lan wrote: we cannot sign before the budget review is done and\n"
    "> approved by the committee\n"
    "Please review the attached plan for the new stores and send me your comments\n"
    "Subject: the next steps for the rollout of the new stores in the south region and\n"
    "  the north\n"
    "Thanks\n"
)


def test_hard_wrapped_lines_are_joined_into_sentences_with_exact_offsets() -> None:
    segments = segment_text(WRAPPED_MAIL)
    _assert_offsets(WRAPPED_MAIL, segments)
    assert [" ".join(s.text.split()) for s in segments] == [
        "Hi team,",
        "Quick update on the Saigon rollout before the board call this week.",
        "Payment is due by 2026-12-11 and the supplier has confirmed the shipment for the first batch of stores.",
        "We will send the signed contract to legal once the final numbers are in from finance",  # a wrapped bullet
        "Legal has the draft",  # the next bullet starts a clause of its own
        "On Monday Lan wrote: we cannot sign before the budget review is done and",  # quoted lines stay lines
        "approved by the committee",
        "Please review the attached plan for the new stores and send me your comments",
        "Subject: the next steps for the rollout of the new stores in the south region and the north",  # folded
        "Thanks",
    ]
    assert "Payment is due by\n2026-12-11" in segments[2].text  # the line break is kept: the raw slice


def test_a_short_line_or_a_line_ending_a_sentence_does_not_run_on() -> None:
    text = "Payment is due by\n2026-12-11\nWe will ship the first batch of stores on Monday, all of them.\nLan"
    assert _texts(segment_text(text)) == [
        "Payment is due by",  # short: a line of its own, not a wrapped one
        "2026-12-11",
        "We will ship the first batch of stores on Monday, all of them.",
        "Lan",
    ]


def test_wrapped_lines_join_inside_a_turn_only() -> None:
    text = "We will run out of the cash buffer for the northern warehouses by\nthe end of the month\nnext"
    turn = Turn(turn_id="t1", start=0, end=text.index("\nnext"))
    (segment,) = segment_turns(text, [turn])
    assert segment.text == text[: turn.end]
