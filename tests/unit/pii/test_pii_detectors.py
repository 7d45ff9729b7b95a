"""The validated detectors one by one: a valid value is masked, a wrong checksum or a look-alike is not.

Test values are built here (check digits computed with the same public algorithms), never copied from data.
"""

from __future__ import annotations

import re
from typing import Any

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import luhn

from extraction_assets.lib.pii import detect, is_card_number, is_snils, scrub


def masked(text: str, region: str | None = None) -> list[tuple[str, str]]:
    return [(d.kind, d.value) for d in detect(text, region=region)]


def with_luhn(prefix: str) -> str:
    return prefix + luhn.calc_check_digit(prefix)


def break_last_digit(number: str) -> str:
    return number[:-1] + str((int(number[-1]) + 1) % 10)


# --- cards: Luhn + issuer ranges, context for what the ranges do not cover ---------------------------------------

ISSUED = {
    "visa": with_luhn("412345678901234"),
    "mastercard 2-series": with_luhn("222312345678901"),
    "jcb 15": with_luhn("18001234567890"),
    "uatp": with_luhn("12345678901234"),
    "napas": with_luhn("970436123456789"),
    "mir": with_luhn("220012345678901"),
}


@pytest.mark.parametrize("name", sorted(ISSUED))
def test_cards_in_issuer_ranges_are_masked_without_context(name: str) -> None:
    number = ISSUED[name]
    assert masked(f"paid with {number} yesterday") == [("CREDIT_CARD", number)]


@pytest.mark.parametrize("name", sorted(ISSUED))
def test_cards_failing_luhn_are_never_masked(name: str) -> None:
    number = break_last_digit(ISSUED[name])
    assert masked(f"my card {number} was declined") == []


def test_luhn_valid_number_outside_issuer_ranges_needs_a_card_word() -> None:
    number = with_luhn("351212345678901")  # 3512: no network issues there
    assert not is_card_number(number)
    assert masked(f"reference {number}") == []
    assert masked(f"I lost my card {number}") == [("CREDIT_CARD", number)]
    assert masked(f"thẻ {number}") == [("CREDIT_CARD", number)]
    assert masked(f"please charge {number} today") == [("CREDIT_CARD", number)]


def test_twelve_digit_maestro_needs_a_card_word() -> None:
    number = with_luhn("50123456789")
    assert masked(f"batch {number} shipped") == []
    assert masked(f"what is the limit for card {number}?") == [("CREDIT_CARD", number)]


def test_epoch_milliseconds_and_labelled_numbers_are_not_cards() -> None:
    stamp = with_luhn("176450000000")  # 13 digits starting with 1: a timestamp, no issuer uses it
    assert len(stamp) == 13 and luhn.is_valid(stamp)
    assert masked(f"at {stamp} the job ended") == []
    order = ISSUED["visa"]
    assert masked(f"Order No. {order} for the card desk") == []


# --- phones: region hint, E.164, context words ---------------------------------------------------------------------


def test_foreign_national_number_needs_a_phone_word() -> None:
    assert masked("Phone: 0612 345 678", region="US") == [("PHONE", "0612 345 678")]
    assert masked("They're not answering at 0612 345 678") == [("PHONE", "0612 345 678")]
    assert masked("batch 0612345678 arrived", region="US") == []  # no phone's shape either
    assert masked("My number is 0612 345 678") == [("PHONE", "0612 345 678")]
    assert masked("Office: 020 7946 0958") == [("PHONE", "020 7946 0958")]
    assert masked("our number of units 0612345678") == []  # "number" alone says nothing


def test_label_after_the_number_counts_as_context() -> None:
    assert masked("0612 345 678 mobile\n020 7946 0958 fax") == [
        ("PHONE", "0612 345 678"),
        ("PHONE", "020 7946 0958"),
    ]


def test_context_is_read_across_a_line_break() -> None:
    assert masked("Personal info:\nPhone:\n467 3395\n") == [("PHONE", "467 3395")]


def test_possible_international_number_is_masked_even_if_not_allocated() -> None:
    # a + number of a plausible length is a phone whatever the operator's allocation tables say
    assert masked("fax +1 555 010 0199") == [("PHONE", "+1 555 010 0199")]
    assert masked("code +999 1234 5678") == []  # no such country code


def test_postcode_glued_in_front_is_not_part_of_the_phone() -> None:
    assert masked("Tel: 10115 0612 345 678") == [("PHONE", "0612 345 678")]


def test_the_phone_matcher_reads_only_the_lines_that_can_hold_a_phone(monkeypatch: pytest.MonkeyPatch) -> None:
    read: list[str] = []
    matcher = phonenumbers.PhoneNumberMatcher

    def recording(text: str, *args: Any, **kwargs: Any) -> phonenumbers.PhoneNumberMatcher:
        read.append(text)
        return matcher(text, *args, **kwargs)

    monkeypatch.setattr(phonenumbers, "PhoneNumberMatcher", recording)
    text = "Item 12 x 3\nRoom 4501, floor 7\nCall (415) 555-0132 now\nQty 88\n+49 1643\n"
    # a "+" line may hold a short international number, so it is read too
    assert masked(text, region="US") == [("PHONE", "(415) 555-0132"), ("PHONE", "+49 1643")]
    assert read == ["Call (415) 555-0132 now", "+49 1643"]


def test_the_phone_matcher_compiles_each_metadata_pattern_once(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    compile_pattern = re.compile

    def recording(pattern: str, flags: int = 0) -> Any:
        compiled.append(pattern)
        return compile_pattern(pattern, flags)

    text = "Call (415) 555-0132 or +44 20 7946 0958, fax 212-555-0175\n"
    assert masked(text, region="US")  # every pattern these numbers need is compiled once
    monkeypatch.setattr(re, "compile", recording)  # what phonenumbers calls when it has no pattern cache
    assert masked(text, region="US") == [
        ("PHONE", "(415) 555-0132"),
        ("PHONE", "+44 20 7946 0958"),
        ("PHONE", "212-555-0175"),
    ]
    assert compiled == []


def test_a_short_national_number_is_found_where_the_region_has_them() -> None:
    # German numbers may have as few as four digits: in that region a line with six digits is read as well
    text = "Ruf an: 030 164\nKunde 0612 345 678"
    assert masked(text, region="DE") == [("PHONE", "030 164"), ("PHONE", "0612 345 678")]


@pytest.mark.parametrize(
    "text",
    [
        "call about order 20261130 on 2026-11-30 at 10:30",
        "phone bill 1,234,567.89 VND due 30/11/2026",
        "call re INV-2026-0042 and PO-2026-118, total $12,500.00",
        "số điện thoại hợp đồng HD-0001234, 15.000.000 VND",
    ],
)
def test_context_words_never_turn_business_numbers_dates_or_amounts_into_phones(text: str) -> None:
    assert masked(text, region="US") == []


# --- IP addresses --------------------------------------------------------------------------------------------------


def test_ipv6_is_masked() -> None:
    text = "hosts 2001:db8::8a2e:370:7334 and fe80::1 and ::ffff:192.0.2.10"
    assert masked(text) == [
        ("IP_ADDRESS", "2001:db8::8a2e:370:7334"),
        ("IP_ADDRESS", "fe80::1"),
        ("IP_ADDRESS", "::ffff:192.0.2.10"),
    ]


@pytest.mark.parametrize("text", ["mac 00:1A:2B:3C:4D:5E", "at 10:30:15", "std::vector a::b", "ratio 1:2:3", "::"])
def test_ipv6_look_alikes_are_not_masked(text: str) -> None:
    assert masked(text) == []


# --- national ids --------------------------------------------------------------------------------------------------

CN_ID = "11010519491231002X"  # the format's published example: region 110105, born 1949-12-31


def test_chinese_resident_id_is_masked_even_glued_to_chinese_text() -> None:
    assert masked(f"身份证号：{CN_ID}。") == [("CN_RESIDENT_ID", CN_ID)]
    assert masked(f"身份证{CN_ID.lower()}") == [("CN_RESIDENT_ID", CN_ID.lower())]


@pytest.mark.parametrize(
    "number",
    [
        "110105194912310021",  # wrong check character
        "110105194913310028",  # month 13
        "990105194912310024",  # no such region
    ],
)
def test_chinese_resident_id_look_alikes_are_not_masked(number: str) -> None:
    assert all(kind != "CN_RESIDENT_ID" for kind, _ in masked(f"身份证号：{number}"))


def test_snils_formatted_is_masked_without_context_and_bare_only_with_it() -> None:
    assert is_snils("11223344595")
    assert masked("номер 112-233-445 95") == [("RU_SNILS", "112-233-445 95")]
    assert masked("СНИЛС 11223344595") == [("RU_SNILS", "11223344595")]
    assert masked("партия 11223344595", region="VN") == []


@pytest.mark.parametrize("number", ["112-233-445 96", "001-001-997 00"])
def test_snils_with_a_wrong_or_missing_check_number_is_not_masked(number: str) -> None:
    assert all(kind != "RU_SNILS" for kind, _ in masked(f"СНИЛС {number}"))


def test_personal_inn_needs_its_label_and_checksum_and_company_inn_stays() -> None:
    assert masked("ИНН 500100732259") == [("RU_INN", "500100732259")]
    assert masked("ИНН 500100732258") == []  # wrong check digits
    assert masked("партия 500100732259", region="RU") == []  # no label
    assert masked("ООО «Ромашка», ИНН 7707083893, КПП 773601001") == []  # a company's numbers are business ids


def test_vietnamese_citizen_id_needs_a_label_and_a_province_code() -> None:
    assert masked("Số CCCD: 079203001234") == [("VN_NATIONAL_ID", "079203001234")]
    assert masked("căn cước công dân 001099012345") == [("VN_NATIONAL_ID", "001099012345")]
    assert masked("CMND số 023456789") == [("VN_NATIONAL_ID", "023456789")]
    assert masked("Số CCCD: 979203001234") == []  # 979 is no province
    assert masked("mã kho 079203001234", region="VN") == []  # no label


def test_placeholders_for_national_ids_are_stable() -> None:
    result = scrub(f"身份证 {CN_ID}, again {CN_ID.lower()}; СНИЛС 112-233-445 95 and 11223344595")
    assert result.text == "身份证 [CN_RESIDENT_ID_1], again [CN_RESIDENT_ID_1]; СНИЛС [RU_SNILS_1] and [RU_SNILS_1]"


# The patterns written for speed find what their plain forms find: each plain form is kept here as the reference.
_PLAIN_IPV6 = re.compile(
    r"(?<![0-9A-Za-z:.])(?P<address>(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:\d{1,3}\.){3}\d{1,3}|[0-9A-Fa-f]{1,4})?)"
    r"(?![0-9A-Za-z:]|\.\d)(?:%[0-9A-Za-z]{1,16}|/(?:12[0-8]|1[01]\d|[1-9]?\d)(?!\d))?"
)
_PLAIN_DIGIT_RUN = re.compile(r"\d(?:\D{0,224}\d|\s+\d)*")


def _finds(pattern: re.Pattern[str], text: str, pos: int) -> list[tuple[tuple[int, int], dict[str, str | None]]]:
    return [(m.span(), m.groupdict()) for m in pattern.finditer(text, pos)]


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789abcdefABCDEFxz:.%/ \n", max_size=60), st.integers(0, 3))
def test_the_ipv6_pattern_finds_what_its_plain_form_finds(text: str, pos: int) -> None:
    from extraction_assets.lib.pii.contacts import _IPV6

    assert _finds(_IPV6, text, pos) == _finds(_PLAIN_IPV6, text, pos)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["1", "23", "-", ".", "a", "\n", "\t"]),
            st.builds(lambda n, c: c * n, st.integers(1, 300), st.sampled_from([" ", "x", "\n", " \n"])),
        ),
        max_size=12,
    ).map("".join),
    st.integers(0, 3),
)
def test_the_digit_runs_are_the_ones_the_plain_pattern_finds(text: str, pos: int) -> None:
    from extraction_assets.lib.pii.scan import _DIGIT_RUN

    assert _finds(_DIGIT_RUN, text, pos) == _finds(_PLAIN_DIGIT_RUN, text, pos)


_HINT_GROUPS = (("stk", "tk", "a/c", "сч"), ("id no", "id n", "inn", "инн"), ("sk-", "eyj", "xox"), ("dot",), ("k",))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["st", "k", "tk", "id", " n", "o", "x", "ox", "-", "СЧ", "Инн", "EyJ", "dot", " "]))
    .map("".join)
    .filter(bool),
    st.permutations(range(len(_HINT_GROUPS))),
)
def test_a_scan_mentions_a_hint_exactly_where_the_lower_cased_text_holds_it(text: str, order: list[int]) -> None:
    """All hint words are looked for in one pass, the words of every detector asked so far: whatever was asked before
    and in whatever order, the answer is the one a search for each word gives."""
    from extraction_assets.lib.pii.scan import Scan

    scan = Scan(text, "US")
    for i in order:
        hints = _HINT_GROUPS[i]
        assert scan.mentions(hints) == any(hint in text.lower() for hint in hints), hints


def _plain_wrap_breaks(text: str, lo: int, hi: int) -> list[int]:
    """The card search's first form: every line break of the stretch looked at in Python."""
    breaks = []
    brk = text.find("\n", lo, hi)
    while brk != -1:
        before, after = text[max(0, brk - 3) : brk].rstrip(" \r"), text[brk + 1 : brk + 4].lstrip(" ")
        if before[-1:].isdigit() and after[:1].isdigit():
            breaks.append(brk)
        brk = text.find("\n", brk + 1, hi)
    return breaks


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789 \r\n\t-a²①٣", max_size=50), st.integers(0, 50), st.integers(0, 50))
def test_the_line_breaks_a_card_can_be_wrapped_at_are_the_plain_searchs(text: str, lo: int, hi: int) -> None:
    from extraction_assets.lib.pii.numbers import wrap_breaks

    lo, hi = min(lo, hi, len(text)), min(max(lo, hi), len(text))
    assert list(wrap_breaks(text, lo, hi)) == _plain_wrap_breaks(text, lo, hi)


def test_the_wrap_searchs_character_class_is_a_digit_or_not_ascii_on_every_code_point() -> None:
    """`_DIGIT_OR_OTHER` is written as what it leaves out (it compiles in a fraction of a millisecond): it takes
    exactly the characters of `[\\d\\x80-\\U0010ffff]`, its first form, over the whole of Unicode."""
    import sys

    from extraction_assets.lib.pii.numbers import _DIGIT_OR_OTHER

    ours, first = re.compile(_DIGIT_OR_OTHER), re.compile(r"[\d\x80-\U0010ffff]")
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert [m.start() for m in ours.finditer(every)] == [m.start() for m in first.finditer(every)]
