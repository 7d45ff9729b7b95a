"""PII as people and mail systems really write it: separators, labels, extensions, line wraps, odd addresses.

Test values are built here (check digits computed with the public algorithms), never copied from data.
"""

from __future__ import annotations

import functools
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum import iban, luhn

from extraction_assets.lib.pii import ALL_KINDS, detect, load_policy, scrub, view
from tests.hidden_pii_forms import HIDDEN_FORMS, HiddenForm


def masked(text: str, region: str | None = None) -> list[tuple[str, str]]:
    return [(d.kind, d.value) for d in detect(text, region=region)]


def an_iban(country: str, bban: str) -> str:
    return country + iban.calc_check_digits(country + "00" + bban) + bban


# Norway: 11-digit BBAN; Belgium: bank code 539 (python-stdnum's bank list does not know it); Germany: 18 digits.
NO = an_iban("NO", "86011117947")
BE = an_iban("BE", "539007547034")
DE = an_iban("DE", "370400440532013000")


def grouped(value: str, sizes: list[int], sep: str = " ") -> str:
    parts, pos = [], 0
    for size in sizes:
        parts.append(value[pos : pos + size])
        pos += size
    return sep.join(parts)


# --- IBAN ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "written",
    [
        f"{NO[:2]} {NO[2:4]} {NO[4:8]} {NO[8:12]} {NO[12:]}",  # space between country code and check digits
        f"{NO[:2]}.{NO[2:4]}.{NO[4:8]}.{NO[8:12]}.{NO[12:]}",
        grouped(DE, [4, 4, 4, 4, 4, 2], "-"),
        grouped(DE, [4, 4, 4, 4, 4, 2], "."),
        grouped(DE, [2, 2, 3, 3, 3, 3, 3, 3]),  # groups of three
        grouped(DE, [4, 8, 10]),
    ],
)
def test_iban_as_people_write_it(written: str) -> None:
    assert masked(f"IBAN: {written}, thanks") == [("IBAN", written)]


def test_a_valid_iban_of_a_bank_no_list_knows_is_masked() -> None:
    assert masked(f"pay to {BE}") == [("IBAN", BE)]
    assert masked(f"pay to {grouped(BE, [4, 4, 4, 4])}") == [("IBAN", grouped(BE, [4, 4, 4, 4]))]


def test_iban_with_a_wrong_check_or_length_is_not_masked() -> None:
    wrong = BE[:2] + f"{(int(BE[2:4]) + 1) % 100:02d}" + BE[4:]
    assert [k for k, _ in masked(f"pay to {wrong}")] != ["IBAN"]
    assert [k for k, _ in masked(f"pay to {DE}1")] != ["IBAN"]


def test_a_card_shaped_run_inside_an_iban_does_not_win() -> None:
    # A BBAN whose first 16 digits are a Luhn-valid Visa number: the whole IBAN is masked, not the card in it.
    card = luhn.calc_check_digit("411111111111111")
    bban = "411111111111111" + card + "00"
    value = grouped(an_iban("DE", bban), [4, 4, 4, 4, 4, 2])
    assert masked(f"IBAN {value}") == [("IBAN", value)]


# --- cards ---------------------------------------------------------------------------------------------------------


def test_a_card_broken_across_a_line_wrap_is_masked() -> None:
    text = "please charge my card 4111 1111\n1111 1111 tomorrow"
    assert masked(text) == [("CREDIT_CARD", "4111 1111\n1111 1111")]
    assert scrub(text).text == "please charge my card [CREDIT_CARD_1] tomorrow"


def test_a_contiguous_card_split_by_a_wrap_needs_a_card_word() -> None:
    assert masked("card number 41111111\n11111111") == [("CREDIT_CARD", "41111111\n11111111")]
    assert masked("totals 41111111\n11111111") == []  # two numbers on two lines


# --- SSN -----------------------------------------------------------------------------------------------------------


def test_labelled_ssn_with_dots_is_masked() -> None:
    assert masked("SSN: 536.22.1234") == [("US_SSN", "536.22.1234")]


def test_unlabelled_dotted_or_bare_nine_digits_are_not_ssns() -> None:
    assert masked("version 536.22.1234") == []
    assert masked("batch 536221234 shipped") == []


# --- phones --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Tel: 020 7946 0958 x12", "020 7946 0958 x12"),
        ("Desk: 020 7946 0958 ext. 204", "020 7946 0958 ext. 204"),
        ("Fax 020 7946 0958 #123", "020 7946 0958 #123"),
    ],
)
def test_extension_is_part_of_a_foreign_phone(text: str, expected: str) -> None:
    assert masked(text, region="US") == [("PHONE", expected)]


@pytest.mark.parametrize("label", ["Desk", "Desk:", "desk line"])
def test_desk_label_admits_a_foreign_number(label: str) -> None:
    assert masked(f"{label} 0612345678", region="US") == [("PHONE", "0612345678")]


@pytest.mark.parametrize(
    ("text", "region", "expected"),
    [
        ("Anh gửi (415) 555-1013 nhé", "VN", "(415) 555-1013"),
        ("Bên Mỹ: 415-555-1013.", "VN", "415-555-1013"),
        ("Lieferant 020 7946 0958 anrufen", "DE", "020 7946 0958"),
        ("hàng về 090 123 4567", "US", "090 123 4567"),
    ],
)
def test_a_phone_shaped_number_valid_in_any_region_is_masked(text: str, region: str, expected: str) -> None:
    assert masked(text, region=region) == [("PHONE", expected)]


@pytest.mark.parametrize(
    "text",
    [
        "Ngày 2026-11-30 giao 1.250 thùng",  # ISO date, amount
        "Hạn 30/11/2026, tổng 15.000.000 VND",
        "Invoice INV-2026-0042, order SO-88412, PO NW-55120",
        "Doanh thu 12 345 678 trong quý",  # thousands groups
        "Ngày 30-04-2018, số HĐ 53409-001-0006",  # a dashed date; a receipt number of five-digit groups
    ],
)
def test_look_alikes_stay_readable_whatever_the_region(text: str) -> None:
    assert [k for k, _ in masked(text, region="VN")] == []


def test_an_ssn_shape_is_not_a_phone_shape() -> None:
    assert masked("code 912-34-5678", region="US") == []  # never issued as an SSN, and not a phone's grouping


# --- e-mail --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "d..steffes@enron.com",
        ".hall@enron.com",
        "müller@bücher-test.de",
        "user@xn--80ak6aa92e.com",
        "a@xn--d1acufc.xn--p1ai",
        "first.last@localhost",
        "name%40example.org",
    ],
)
def test_addresses_real_mail_systems_produce(address: str) -> None:
    assert masked(f"From: <{address}>") == [("EMAIL", address)]


@pytest.mark.parametrize(
    "spelled", ["name at example dot org", "name [at] example [dot] org", "name(at)example(dot)org"]
)
def test_spelled_out_address_is_masked(spelled: str) -> None:
    assert masked(f"write to {spelled} please") == [("EMAIL", spelled)]


def test_an_address_broken_by_a_line_wrap_is_masked_whole() -> None:
    text = "mail jane.doe@exam\nple.com today"
    assert masked(text) == [("EMAIL", "jane.doe@exam\nple.com")]
    assert scrub(text).text == "mail [EMAIL_1] today"


def test_an_address_on_the_next_line_is_not_joined_to_the_line_above() -> None:
    text = "FAX : 07-5624059\nSOONHUAT2000@HOTMAIL.COM"
    assert ("EMAIL", "SOONHUAT2000@HOTMAIL.COM") in masked(text)
    assert masked("write to him at=20\r\naod@newsdata.com.") == [("EMAIL", "aod@newsdata.com")]


def test_lotus_notes_names_and_message_ids_are_no_bare_host_addresses() -> None:
    assert masked("Jeff Dasovich/NA/Enron@ENRON, <23221479.1075858882991.JavaMail.evans@thyme>") == []


def test_an_address_at_the_end_of_a_line_does_not_take_the_next_word() -> None:
    assert masked("mail jane.doe@example.com\nthanks") == [("EMAIL", "jane.doe@example.com")]
    assert masked("mail jane.doe@example.com.\nAnh") == [("EMAIL", "jane.doe@example.com")]


# --- IPv6, INN -----------------------------------------------------------------------------------------------------


def test_uncompressed_ipv6_with_an_ipv4_tail_is_one_address() -> None:
    assert masked("from 0:0:0:0:0:FFFF:129.144.52.38 today") == [("IP_ADDRESS", "0:0:0:0:0:FFFF:129.144.52.38")]


def test_labelled_inn_written_in_groups_is_masked() -> None:
    assert masked("ИНН 5001 0073 2259") == [("RU_INN", "5001 0073 2259")]


# --- bank accounts -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("STK 0071001234567 Vietcombank", "0071001234567"),
        ("Số tài khoản: 1903 5678 9012", "1903 5678 9012"),
        ("Tài khoản nhận tiền mới: Vietcombank 0071001234567, chủ TK Công ty", "0071001234567"),
        ("р/с 40702810900000012345 в ПАО Сбербанк", "40702810900000012345"),
        ("Расчётный счёт № 40702810900000012345", "40702810900000012345"),
        ("Account no. 12345678", "12345678"),
        ("Konto 0532013000", "0532013000"),
    ],
)
def test_labelled_bank_account_is_masked(text: str, expected: str) -> None:
    assert masked(text, region="VN") == [("BANK_ACCOUNT", expected)]


def test_a_label_read_on_its_own_line_among_other_lines() -> None:
    """The label is searched only on lines holding a hint: one far from the text's other hints is still found, and a
    wide Cyrillic es ("р/ᲃ", which the case-blind label takes for "р/с" without holding the hint) is read too."""
    text = "Account overview\n" + "nothing here 12 34\n" * 20 + "STK 0071001234567 Vietcombank"
    assert masked(text, region="VN") == [("BANK_ACCOUNT", "0071001234567")]
    number = "40702810900000012345"
    assert masked(f"account overview\nр/ᲃ {number}", region="RU") == [("BANK_ACCOUNT", number)]


def test_an_unlabelled_number_is_no_bank_account() -> None:
    assert masked("Lô 0071001234567 đã về kho", region="VN") == []


def test_a_labelled_luhn_card_stays_a_card() -> None:
    card = "4111 1111 1111 1111"
    assert masked(f"account no. {card} (my Visa card)") == [("CREDIT_CARD", card)]


def test_bank_accounts_are_masked_by_default_and_per_tenant_policy() -> None:
    policy = load_policy()
    assert "BANK_ACCOUNT" in ALL_KINDS
    assert "BANK_ACCOUNT" in policy.for_tenant("saigon-foods").kinds
    text = "STK 0071001234567"
    assert scrub(text, region="VN").text == "STK [BANK_ACCOUNT_1]"
    assert scrub(text, region="VN", kinds=frozenset({"EMAIL"})).text == text


def test_prefix_length_and_zone_id_belong_to_the_address() -> None:
    assert masked("route 192.168.1.0/24 via fe80::1%eth0") == [
        ("IP_ADDRESS", "192.168.1.0/24"),
        ("IP_ADDRESS", "fe80::1%eth0"),
    ]
    assert masked("bad 10.0.0.0/123") == [("IP_ADDRESS", "10.0.0.0")]  # no such prefix length


def test_my_foreign_number_is_a_phone_word() -> None:
    assert masked("My Israeli number is 09-7625400", region="US") == [("PHONE", "09-7625400")]


def test_an_area_code_in_parentheses_belongs_to_the_number_after_it() -> None:
    # the last nine digits of this Brazilian mobile pass as a Vietnamese mobile on their own
    assert masked("Phone: (11) 96123-4567", region="VN") == [("PHONE", "(11) 96123-4567")]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Write to anna%2540example.org today", "EMAIL", "anna%2540example.org"),  # a double-encoded "@"
        ("Write to anna&#64;example.org today", "EMAIL", "anna&#64;example.org"),
        ("Write to anna&commat;example.org today", "EMAIL", "anna&commat;example.org"),
        ("Write to an\u200bna@example.org today", "EMAIL", "an\u200bna@example.org"),  # a zero-width space inside
        ("mail x @ example . org now", "EMAIL", "x @ example . org"),
        ("Card 4111 1111 11\u200b11 1111 please", "CREDIT_CARD", "4111 1111 11\u200b11 1111"),
        ("SSN 536\u201190\u20114312", "US_SSN", "536\u201190\u20114312"),  # non-breaking hyphens
        ("SSN: 536-90-\n4312", "US_SSN", "536-90-\n4312"),  # wrapped
        ("IBAN DE89 3704 0044\n0532 0130 00", "IBAN", "DE89 3704 0044\n0532 0130 00"),  # wrapped
        ("> my card is 4111 1111\n> 1111 1111 thanks", "CREDIT_CARD", "4111 1111\n> 1111 1111"),  # in a quote
        ("ИНН 7707083893", "RU_INN", "7707083893"),  # labelled, no company beside it
    ],
)
def test_forms_that_hid_a_value_from_its_pattern_are_masked_where_they_stand(text: str, kind: str, value: str) -> None:
    result = scrub(text)
    assert [(d.kind, d.value) for d in result.detections] == [(kind, value)]
    assert value not in result.text and f"[{kind}_1]" in result.text


def test_a_time_written_with_a_doubled_colon_is_no_address() -> None:
    assert scrub("В 23::00 по Москве, в 12::30 в Минске").detections == []  # seen in real news text
    assert [d.kind for d in scrub("host fe80::1:2 and 2001:db8::ff00:42:8329").detections] == ["IP_ADDRESS"] * 2


@pytest.mark.parametrize("form", HIDDEN_FORMS, ids=[form.name for form in HIDDEN_FORMS])
def test_compatibility_forms_encodings_and_quoted_wraps_are_masked_as_written(form: HiddenForm) -> None:
    """The forms a fourth attack found reaching a model (fullwidth and small-form characters, "%252540", the
    one-dot leader, a card with dots, a number wrapped across quoted lines, an INN after "ID number"): each is
    masked whole, as a span of the text itself, and the scrubbed text keeps everything else as written."""
    result = scrub(form.text)
    assert [(d.kind, d.value) for d in result.detections] == [(form.kind, form.value)]
    (found,) = result.detections
    assert form.text[found.start : found.end] == form.value
    assert result.text == form.text.replace(form.value, f"[{form.kind}_1]")


def test_a_run_of_fullwidth_characters_is_cut_where_the_value_is() -> None:
    """Each fullwidth character stands for one: a card inside a longer fullwidth run is masked alone."""
    text = "ＮＯＴＥ\u3000４０１２８８８８８８８８１８８１\u3000ｆｉｌｅｄ"  # one run of fullwidth characters
    assert masked(text) == [("CREDIT_CARD", "４０１２８８８８８８８８１８８１")]
    mixed = "fi ligature ﬁle ＠ home, mail ｊｏ＠ｅｘａｍｐｌｅ．ｃｏｍ"
    assert scrub(mixed).text == "fi ligature ﬁle ＠ home, mail [EMAIL_1]"
    ssn = "５３６\u201190\u20114312"  # non-breaking hyphens inside a run of fullwidth digits read as "-" too
    assert masked(f"SSN {ssn} ok") == [("US_SSN", ssn)]


_COMPAT_TEXT = st.text(
    alphabet=st.sampled_from("ab1@.-  \u00a0\u2011\uff20\uff10\uff11\ufe6b\u2024\u2460\ufb01\u00b2\u2003\u200b>\n"),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_COMPAT_TEXT)
def test_a_view_finds_the_forms_the_whole_unicode_class_of_compatibility_characters_finds(text: str) -> None:
    """The compatibility forms are searched with a class of the text's own such characters: the same matches as with
    the class of every character NFKC changes (what the view once built by walking Unicode)."""
    found = [(m.start(), m.end(), m.lastgroup) for m in view._hiding_forms(text)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(view, "_changed_by_nfkc", lambda _: _every_character_nfkc_changes())
        expected = [(m.start(), m.end(), m.lastgroup) for m in view._hiding_forms(text)]
    assert found == expected


@functools.cache
def _every_character_nfkc_changes() -> frozenset[str]:
    return frozenset(chr(c) for c in range(0x80, 0x110000) if not unicodedata.is_normalized("NFKC", chr(c)))
