"""The contract pack on small hand-made English and Russian contracts with known answers."""

from __future__ import annotations

import math
import re
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.heuristics.contract import _phrase, detect_language, extract_contract
from extraction_assets.lib.heuristics.printed_values import find_dates, parse_amount, scan_view
from extraction_assets.lib.models import CandidateItem, Document, ExtractionInput
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

NBSP = "\u00a0"

ENGLISH = """MASTER SUPPLY AGREEMENT

This Master Supply Agreement (the "Agreement") is made and entered into as of June 1, 2025 (the "Effective Date")
by and between Bluebird Components LLC, a Delaware limited liability company ("Supplier"), and
Harbor Fixtures Inc., a Washington corporation ("Buyer").

WHEREAS, Supplier manufactures brass fittings.

1. PRICE. The total contract price is $250,000.00 for the initial term.
2. TERM. This Agreement shall expire on May 31, 2027 unless terminated earlier.
3. TERMINATION. Buyer may terminate this Agreement for convenience upon sixty (60) days' written notice.
4. LATE DELIVERY. Supplier shall pay liquidated damages of one percent of the order value per week of delay.
5. DISPUTES. Any dispute shall be settled by binding arbitration in Seattle.
6. GOVERNING LAW. This Agreement shall be governed by the laws of the State of Washington, without regard to
its conflict of laws rules.
"""

# OCR noise: Latin look-alikes inside Russian words, non-breaking spaces, a spaced quote.
RUSSIAN = f"""ДОГOВОР ПОСТАВКИ № 7

г. Минск{NBSP}{NBSP}«15» января 2026 г.

Общество с ограниченной ответственностью «Гранит-Опт», именуемое в дальнейшем «Поставщик», с одной стороны, и
ОАО «Речицкий комбинат», именуемое в дальнейшем «Покупатель», с другой стороны, заключили настоящий договор.

1. ПРЕДМЕТ ДОГОВОРА
1.1. Поставщик поставляет щебень.
2. ЦЕНА
2.1. Цeна договора составляет 1{NBSP}500{NBSP}000,00 (один миллион пятьсот тысяч) белорусских рублей.
3. СРОК
3.1. Договор вступает в силу с 15.01.2026 и действует по 31.12.2026.
4. ОТВЕТСТВЕННОСТЬ
4.1. За просрочку оплаты Покупатель уплачивает неустойку в размере 0,1 % за каждый день.
5. РАСТОРЖЕНИЕ
5.1. Покупатель вправе расторгнуть договор в одностороннем порядке, уведомив Поставщика за 30 дней.
6. СПОРЫ
6.1. Настоящий договор регулируется законодательством Республики Беларусь.
"""


@pytest.fixture(scope="module")
def schema() -> SchemaVersion:
    return load_schema(DEFAULT_PROMPTS, "contract@v1")


def _fields(text: str, schema: SchemaVersion) -> dict[str, CandidateItem]:
    doc = ExtractionInput(doc_id="c", tenant_id="t", kind="text", text=text)
    found = {c.item_type: c for c in extract_contract(doc, schema)}
    for c in found.values():  # every value is quoted verbatim where the pack says it saw it
        assert c.span_hint is not None
        assert text[c.span_hint : c.span_hint + len(c.evidence_span)] == c.evidence_span
        assert schema.heuristic_band.contains(c.confidence)
    return found


def _values(found: dict[str, CandidateItem]) -> dict[str, object]:
    return {name: c.value["value"] for name, c in found.items()}


def test_english_contract_fields(schema: SchemaVersion) -> None:
    found = _fields(ENGLISH, schema)
    assert _values(found) == {
        "document_name": "MASTER SUPPLY AGREEMENT",
        "contract_type": "supply",
        "party_a": "Bluebird Components LLC",
        "party_b": "Harbor Fixtures Inc.",
        "agreement_date": "2025-06-01",
        "start_date": "2025-06-01",
        "end_date": "2027-05-31",
        "total_amount": 250000.0,
        "currency": "USD",
        "governing_law": "Washington",
        "penalty_clause": True,
        "termination_clause": True,
        "arbitration_clause": True,
    }
    assert found["party_a"].value["alias"] == "Supplier"
    assert found["party_b"].value["alias"] == "Buyer"
    assert found["termination_clause"].value["for_convenience"] is True
    assert found["penalty_clause"].evidence_span.startswith("Supplier shall pay liquidated damages")
    assert all(c.value["language"] == "en" for c in found.values())


def test_russian_contract_with_nbsp_and_ocr_noise(schema: SchemaVersion) -> None:
    found = _fields(RUSSIAN, schema)
    values = _values(found)
    assert values["contract_type"] == "supply"
    assert values["document_name"] == "ДОГOВОР ПОСТАВКИ № 7"  # as printed, look-alike letter and all
    assert values["party_a"] == "Общество с ограниченной ответственностью «Гранит-Опт»"
    assert values["party_b"] == "ОАО «Речицкий комбинат»"
    assert found["party_b"].value["alias"] == "Покупатель"
    assert values["agreement_date"] == "2026-01-15"
    assert found["agreement_date"].value["as_printed"] == "«15» января 2026 г."
    assert (values["start_date"], values["end_date"]) == ("2026-01-15", "2026-12-31")
    assert (values["total_amount"], values["currency"]) == (1_500_000.0, "BYN")
    assert values["governing_law"] == "Республики Беларусь"
    assert values["penalty_clause"] is True and values["termination_clause"] is True
    assert "arbitration_clause" not in found
    assert found["termination_clause"].evidence_span.startswith("Покупатель вправе расторгнуть")  # not the heading
    assert all(c.value["language"] == "ru" for c in found.values())


@pytest.mark.parametrize(
    ("sentence", "amount", "currency"),
    [
        ("Стоимость работ составляет 12 000 руб. 00 коп.", 12000.0, "RUB"),
        (f"Цена договора составляет 2{NBSP}400 бел. руб. в месяц.", 2400.0, "BYN"),
        ("Общая сумма договора составляет 5 000 (пять тысяч) долларов США.", 5000.0, "USD"),
        ("Стоимость составляет 3 500,50 EUR.", 3500.5, "EUR"),
    ],
)
def test_russian_amounts_and_currencies(schema: SchemaVersion, sentence: str, amount: float, currency: str) -> None:
    text = f"ДОГОВОР ПОДРЯДА\nООО «Альфа» и ООО «Бета», именуемые Стороны, заключили договор.\n1. ЦЕНА\n{sentence}\n"
    values = _values(_fields(text, schema))
    assert (values["total_amount"], values["currency"]) == (amount, currency)


def test_a_number_without_a_currency_is_not_an_amount(schema: SchemaVersion) -> None:
    text = "SERVICES AGREEMENT\nbetween Acme Corp. and Beta LLC.\nThe total price is set out in section 4.2 below.\n"
    assert "total_amount" not in _fields(text, schema)


def test_a_party_organized_under_other_laws_is_not_the_governing_law(schema: SchemaVersion) -> None:
    text = (
        "LICENSE AGREEMENT\nThis Agreement is between Delta Soft Inc., a company organized under the laws of the "
        "State of Delaware, and Echo Media LLC.\nThis Agreement is governed by the laws of the State of New York.\n"
    )
    assert _values(_fields(text, schema))["governing_law"] == "New York"


@pytest.mark.parametrize(
    "clause",
    [
        "This Agreement shall be governed by the laws of the Province of Ontario.",
        "This Agreement shall be governed by the laws of the Province of Ontario, Canada.",
    ],
)
def test_a_province_is_named_with_its_country_however_printed(schema: SchemaVersion, clause: str) -> None:
    text = f"SUPPLY CONTRACT\nby and between Foxtrot Ltd. and Golf Co.\n{clause}\n"
    law = _fields(text, schema)["governing_law"].value
    assert law["value"] == "Ontario, Canada"
    assert law["as_printed"] in clause


def test_the_sentence_that_governs_the_contract_names_its_law(schema: SchemaVersion) -> None:
    # an earlier sentence on how something in this Agreement is construed names a law too, and is no choice of law
    text = (
        "AGENCY AGREEMENT\nThis Agreement is between Delta Soft Inc. and Echo Media LLC.\n"
        "Nothing in this Agreement shall be construed to require the Agent to act against the laws of the United "
        "States.\nThis Agreement will be governed by the law of the State of Delaware.\n"
    )
    assert _values(_fields(text, schema))["governing_law"] == "Delaware"


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("This Agreement shall be governed by PRC Laws.", "People's Republic of China"),
        ("This Agreement is governed by English law.", "England"),
        ("THIS CONTRACT SHALL BE CONTROLLED BY THE LAWS OF THE STATE OF TEXAS, WITHOUT REGARD TO CONFLICTS.", "TEXAS"),
    ],
)
def test_governing_law_forms(schema: SchemaVersion, clause: str, expected: str) -> None:
    text = f"SUPPLY CONTRACT\nby and between Foxtrot Ltd. and Golf Co.\n{clause}\n"
    assert _values(_fields(text, schema))["governing_law"] == expected


def test_a_note_that_mentions_a_contract_gets_nothing(schema: SchemaVersion) -> None:
    note = "Weekly notes: the supplier contract renewal is late, ask legal about it on Friday.\n"
    assert _fields(note, schema) == {}


def test_language_follows_the_script() -> None:
    assert detect_language(scan_view(RUSSIAN)) == "ru"
    assert detect_language(scan_view(ENGLISH)) == "en"


def test_a_guess_goes_to_review_and_the_document_is_routed(schema: SchemaVersion) -> None:
    text = "Cooperation Agreement\nThis Agreement is between Hotel Kilo GmbH and India Juliett AG.\n"
    doc = Document(doc_id="d", tenant_id="t", source_uri="t/c.txt", kind="text", text=text)
    outcome = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    items = {i.item_type: i for i in outcome.items}
    assert items["document_name"].confidence < 0.8  # a Title Case title is a weaker cue than an upper-case one
    assert items["party_a"].value["value"] == "Hotel Kilo GmbH"
    assert outcome.routing is not None and outcome.routing.outcome == "manual_review"
    assert "total_amount" in outcome.routing.missing_fields


def test_scan_view_keeps_offsets_and_folds_noise() -> None:
    raw = f"Д0ГOВОР{NBSP}«15»\u2014 Цeна"
    view = scan_view(raw)
    assert len(view) == len(raw)
    assert view == 'договор "15"- цена'


# The scan view's folds as one `str.translate` table: the reference its replacements one by one must meet (on text
# without Cyrillic, whose words are folded apart).
_PLAIN_FOLD = str.maketrans(
    dict.fromkeys(map(ord, "\u00a0\u2007\u202f\u2009\u200a\u2002\u2003\u2004\u2005\u2006\u3000\t\u00ad"), " ")
    | dict.fromkeys(map(ord, "«»“”„‟″"), '"')
    | dict.fromkeys(map(ord, "‘’‚‛′`"), "'")
    | dict.fromkeys(map(ord, "‐‑‒–—―−"), "-")
)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="aZ1 \n\t`'\"-\u00a0\u2009\u3000\u00ad«»“”‘’′–—−é", max_size=40))
def test_the_scan_view_folds_as_one_translation_table(text: str) -> None:
    assert scan_view(text + "x") == (text + "x").lower().translate(_PLAIN_FOLD)


@pytest.mark.parametrize(
    ("printed", "day_first", "expected"),
    [
        ("«15» января 2026 г.", True, date(2026, 1, 15)),
        ("1\u00a0мая\u00a02025 года", True, date(2025, 5, 1)),
        ("23rd day of  September, 2016", False, date(2016, 9, 23)),
        ("24t h day of August 2018", False, date(2018, 8, 24)),
        ("May 25th, 2018", False, date(2018, 5, 25)),
        ("03/04/2026", True, date(2026, 4, 3)),
        ("03/04/2026", False, date(2026, 3, 4)),
        ("31/12/2026", False, date(2026, 12, 31)),  # a day over 12 settles the order
        ("19-MAR-18", True, date(2018, 3, 19)),
        ("2026-01-15", False, date(2026, 1, 15)),
    ],
)
def test_printed_dates(printed: str, day_first: bool, expected: date) -> None:
    mentions = find_dates(scan_view(f"on {printed} here"), day_first=day_first)
    assert [m.value for m in mentions] == [expected]
    assert f"on {printed} here"[mentions[0].start : mentions[0].end] == printed


def test_numbers_are_not_dates() -> None:
    assert find_dates(scan_view("1 500 000,00 and 12.5 and clause 2.1.3"), day_first=True) == []


@pytest.mark.parametrize(
    ("printed", "expected"),
    [("1 500 000,00", "1500000.00"), ("1,007.50", "1007.50"), ("RM 29.70", "29.70"), ("no digits", None)],
)
def test_parse_amount(printed: str, expected: str | None) -> None:
    value = parse_amount(printed)
    assert (str(value) if value is not None else None) == expected


def _parties(text: str, schema: SchemaVersion) -> list[object]:
    values = _values(_fields(text, schema))
    return [values.get("party_a"), values.get("party_b")]


def test_a_title_block_does_not_leak_into_party_names(schema: SchemaVersion) -> None:
    text = (
        "EXHIBIT 10.4\n\nDISTRIBUTION AGREEMENT\n\nBY AND BETWEEN\n\nNORTHWIND TRADING INC.\n\nAND\n\n"
        "LARCH VALLEY FOODS CORPORATION\n\nThe parties agree as follows.\n"
    )
    assert _parties(text, schema) == ["NORTHWIND TRADING INC.", "LARCH VALLEY FOODS CORPORATION"]


def test_the_parties_are_read_where_they_are_defined(schema: SchemaVersion) -> None:
    text = (
        "SERVICES AGREEMENT BETWEEN OSPREY AND KESTREL TELECOM COMPANY\n\nThis Agreement is made by and between "
        'Kestrel Telecom Company, a Delaware Corporation, hereinafter referred to as "Provider", and Osprey Media '
        'Corp., a Texas corporation, hereinafter referred to as "Customer".\n'
    )
    found = _fields(text, schema)
    assert _values(found)["party_a"] == "Kestrel Telecom Company"
    assert _values(found)["party_b"] == "Osprey Media Corp."
    assert found["party_a"].value["alias"] == "Provider"


@pytest.mark.parametrize(
    "name",
    [
        "Jade River Trading Co., Ltd.",
        "Falkenberg Optik GmbH & Co. KG",
        "Harbin Light (Asia) Limited",
        "JSC Volga Steel",
        "Skarv Pharma A/S",
    ],
)
def test_multi_part_and_leading_legal_forms(schema: SchemaVersion, name: str) -> None:
    text = f'SUPPLY AGREEMENT\nThis Agreement is made between {name} ("Seller") and Tern Retail LLC ("Buyer").\n'
    assert _parties(text, schema) == [name, "Tern Retail LLC"]


def test_a_recital_or_a_bare_form_is_no_party(schema: SchemaVersion) -> None:
    text = (
        'CONSULTING AGREEMENT\nThis Agreement is between Ana Ruiz ("Consultant") and Plover Labs Inc. (the '
        '"Company"). WHEREAS, the Company wishes to engage the Consultant.\n'
    )
    assert _parties(text, schema) == ["Plover Labs Inc.", "Ana Ruiz"]


@pytest.mark.parametrize(
    "between",
    [
        "a Nevada Limited Liability Company located at 12 Elm Road",  # the description after a legal form
        "having its principal place of business at 3200 Walnut Street, Boulder, CO 80301",  # Colorado's "CO"
    ],
)
def test_a_description_or_an_address_between_the_names_is_no_party(schema: SchemaVersion, between: str) -> None:
    seller = f'Plover Labs Inc., {between} ("Seller")'
    text = f'SUPPLY AGREEMENT\nThis Agreement is made between {seller} and Tern Retail LLC ("Buyer").'
    assert _parties(text, schema) == ["Plover Labs Inc.", "Tern Retail LLC"]


def test_a_hyphenated_word_is_no_legal_form(schema: SchemaVersion) -> None:
    """ "THIS CO-BRANDING AGREEMENT" names no company "THIS CO"."""
    text = (
        "CO-BRANDING AGREEMENT\nTHIS CO-BRANDING AGREEMENT is entered into by Plover Labs Inc. and Tern Retail LLC, "
        "the parties hereto.\n"
    )
    assert _parties(text, schema) == ["Plover Labs Inc.", "Tern Retail LLC"]


def test_a_name_does_not_start_inside_a_word(schema: SchemaVersion) -> None:
    text = 'LICENSE AGREEMENT\nThis Agreement is between eZest Apps LLC ("Licensor") and Wren Games Inc. ("Licensee").'
    assert _parties(text, schema) == ["eZest Apps LLC", "Wren Games Inc."]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("The Supply Term shall be three years from March 1, 2024 to February 28, 2027.", "2027-02-28"),
        ("EXPIRATION DATE:                                        June 30, 2028\n", "2028-06-30"),
        ("This Agreement is for a term of two years starting May 1, 2025 and expiring April 30, 2027.", "2027-04-30"),
        ('Deliveries cease on October 1, 2029 (the "Expiration Date").', "2029-10-01"),
    ],
)
def test_end_date_forms(schema: SchemaVersion, sentence: str, expected: str) -> None:
    text = f"SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\n{sentence}\n"
    assert _values(_fields(text, schema))["end_date"] == expected


def test_a_notary_commission_is_not_the_end_date(schema: SchemaVersion) -> None:
    text = "SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\nMy Commission Expires May 1, 2030."
    assert "end_date" not in _fields(text, schema)


@pytest.mark.parametrize(
    "sentence",
    [
        '"Contract Year" means a year of the Term, the first one ending on September 30, 2020.',
        "The first Calendar Year of the Term shall begin on the Effective Date and end on December 31, 2019.",
    ],
)
def test_the_end_of_a_recurring_year_is_not_the_end_date(schema: SchemaVersion, sentence: str) -> None:
    text = f"SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\n{sentence}\n"
    assert "end_date" not in _fields(text, schema)
    term = "This Agreement shall expire on May 31, 2027.\n"
    assert _values(_fields(text + term, schema))["end_date"] == "2027-05-31"


@pytest.mark.parametrize(
    ("top", "expected"),
    [
        ("WIDGET LICENSE AGREEMENT This License Agreement is made by Acme Corp.", "WIDGET LICENSE AGREEMENT"),
        ("Exhibit 10.1\n\nSupply and Service Agreement [***]   WHEREAS the parties", "Supply and Service Agreement"),
        ("MARCH 1, 2020, RATE AGREEMENT\n\nGAS STORAGE AGREEMENT\n\nThe parties", "GAS STORAGE AGREEMENT"),
        # a contract word alone is a heading: the title names the kind of contract
        ("Promotion Agreement\n\nAGREEMENT\n\nThe parties", "Promotion Agreement"),
        ("LICENSE\n\n38.0 NATURE OF AGREEMENT\n\nSoftware License Agreement", "Software License Agreement"),
        ("AGREEMENT\n\nThe parties", "AGREEMENT"),  # ... unless nothing else does
    ],
)
def test_title_without_preamble_redaction_or_dated_heading(schema: SchemaVersion, top: str, expected: str) -> None:
    text = f"{top}\nThis Agreement is made between Acme Corp. and Beta LLC.\n"
    assert _values(_fields(text, schema))["document_name"] == expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Licensee is not liable for fines or penalties imposed by a governmental authority.", False),
        ("Each signatory certifies under penalty of perjury that the data is true.", False),
        ("For each day of delay the Seller shall pay a penalty of 2% of the order value.", True),
    ],
)
def test_a_penalty_the_contract_sets_not_one_it_mentions(schema: SchemaVersion, sentence: str, expected: bool) -> None:
    text = f"SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\n{sentence}\n"
    assert ("penalty_clause" in _fields(text, schema)) is expected


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("Either party may terminate this Agreement at any time if the other party is in material breach.", False),
        ("This Agreement may be terminated by either party upon ninety (90) days' written notice.", True),
    ],
)
def test_termination_for_convenience_or_for_cause(schema: SchemaVersion, sentence: str, expected: bool) -> None:
    text = f"SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\n{sentence}\n"
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is expected


@pytest.mark.parametrize(
    ("sentence", "conditional", "notice_period"),
    [
        ("This Agreement may be terminated by either party upon ninety (90) days' written notice.", 0.0, 1.0),
        ("We may terminate this Agreement at any time if we conclude that you lack the skills required.", 1.0, 0.0),
        ("Either party may terminate this Agreement at any time if the other party is in material breach.", 0.0, 0.0),
    ],
)
def test_a_convenience_that_waits_on_an_event_is_evidence_of_doubt(
    schema: SchemaVersion, sentence: str, conditional: float, notice_period: float
) -> None:
    """Evidence for the calibration only (the value is unchanged): a convenience read from a sentence with a
    condition, or from a bare notice period; a right for cause is no convenience, so neither flag applies."""
    text = f"SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\n{sentence}\n"
    features = _fields(text, schema)["termination_clause"].features
    assert (features["conditional"], features["notice_period"]) == (conditional, notice_period)


def test_every_value_carries_the_contracts_length_as_evidence(schema: SchemaVersion) -> None:
    """Evidence for the calibration only: the contract's length (log10 of its characters), the same for every field
    of one contract and larger for a longer one; values are unchanged by it."""
    text = "SUPPLY AGREEMENT\nby and between Foxtrot Ltd. and Golf Co.\nEither party may terminate it at any time.\n"
    longer = text + "The Supplier shall deliver the goods on time. " * 200
    short, long = _fields(text, schema), _fields(longer, schema)
    assert {f.features["length_log10"] for f in short.values()} == {round(math.log10(1 + len(text)), 4)}
    assert long["termination_clause"].features["length_log10"] > short["termination_clause"].features["length_log10"]
    assert _values(long) == _values(short)


def test_russian_termination_for_a_breach_is_not_for_convenience(schema: SchemaVersion) -> None:
    text = (
        "ДОГОВОР ПОСТАВКИ\nООО «Альфа» и ООО «Бета» заключили настоящий договор.\n"
        "Покупатель вправе в любое время расторгнуть договор в случае нарушения Поставщиком сроков поставки.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is False


def test_dates_said_at_signing(schema: SchemaVersion) -> None:
    text = (
        "AGENCY AGREEMENT\nThe parties are Foxtrot Ltd. and Golf Co.\nWHEREAS, Foxtrot sells insurance.\n"
        "1. The Agent shall solicit applications.\nSigned and effective this 3rd day of March, 2021.\n"
    )
    values = _values(_fields(text, schema))
    assert (values["agreement_date"], values["start_date"]) == ("2021-03-03", "2021-03-03")


def _date_evidence(text: str, schema: SchemaVersion, field: str) -> dict[str, float]:
    names = ("names_other_contract", "defines_own_term", "defines_other_term")
    return {n: _fields(text, schema)[field].features[n] for n in names}


def test_a_dates_evidence_says_whose_date_it_is(schema: SchemaVersion) -> None:
    """A date named as the contract's own ('(the "Effective Date")'), a date of another contract the sentence names
    by its title, and a date defining something else: evidence for the calibration. (A date given right after
    another contract's title is no agreement date at all: `test_the_date_of_a_contract_referred_to_is_not_this_ones`.)
    """
    assert _date_evidence(ENGLISH, schema, "agreement_date") == {
        "names_other_contract": 0.0,
        "defines_own_term": 1.0,
        "defines_other_term": 0.0,
    }
    other = (
        "PLACEMENT AGENCY AGREEMENT\nThe Company issued shares to the Investors pursuant to a Subscription Agreement "
        "effective as of May 22, 2015, by and between Alpha Holdings Inc. and Beta Capital LLC.\n"
        "WHEREAS, the Company wishes to raise funds.\n1. The Agent shall place the notes.\n"
    )
    assert _values(_fields(other, schema))["start_date"] == "2015-05-22"
    assert _date_evidence(other, schema, "start_date")["names_other_contract"] == 1.0
    itself = other.replace("to a Subscription Agreement", "to this Placement Agency Agreement")
    assert _date_evidence(itself, schema, "start_date")["names_other_contract"] == 0.0
    depositors = (
        "PLAN OF CONVERSION\nThis Agreement is made by and between Gamma Bank Inc. and Delta Holdings LLC for "
        'depositors as of March 31, 2008 ("Eligible Account Holders").\nWHEREAS, the Bank wishes to convert.\n'
        "1. The Bank shall convert.\n"
    )
    assert _date_evidence(depositors, schema, "agreement_date") == {
        "names_other_contract": 0.0,
        "defines_own_term": 0.0,
        "defines_other_term": 1.0,
    }


def test_the_signature_block_that_holds_the_dates(schema: SchemaVersion) -> None:
    preamble = "The Customer orders hosting services from the Provider. " * 6  # the header ends at "WHEREAS"
    body = "The Provider shall host the web site and keep it available. " * 60
    text = (
        f"HOSTING AGREEMENT\nThe parties are Foxtrot Ltd. and Golf Co.\n{preamble}\nWHEREAS, Foxtrot hosts sites.\n"
        f"1. This Agreement begins on the day after the date of last signature.\n{body}\n"
        "Authorized Signature          Authorized Signature\nDate: 2/5/21                  Date: 2/9/21\n"
    )
    assert _values(_fields(text, schema))["agreement_date"] == "2021-02-09"


@pytest.mark.parametrize("phrase", ["terminat*", "governing law", "by and between", "3rd party", "(a) notice"])
@pytest.mark.parametrize(
    "text",
    [
        "terminate now",
        "xterminate",
        "The governing law is",
        "lawgoverning law",
        "stood by and between us",
        "a3rd party",
    ],
)
def test_a_phrase_matches_where_a_plain_left_word_boundary_would(phrase: str, text: str) -> None:
    words = [re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w) for w in phrase.split()]
    core = phrase.replace("*", "")
    plain = re.compile(
        (r"(?<!\w)" if core[0].isalnum() else "") + r"\s+".join(words) + (r"(?!\w)" if core[-1].isalnum() else "")
    )
    assert [m.span() for m in _phrase(phrase).finditer(text)] == [m.span() for m in plain.finditer(text)]


def test_an_execution_version_stamp_is_no_part_of_a_name(schema: SchemaVersion) -> None:
    text = (
        "Exhibit 10.3 Execution Version HERON HOLDINGS, INC., AND TERN RETAIL LLC SUPPLY AGREEMENT\n\n"
        "This Supply Agreement is made by Heron Holdings, Inc. and Tern Retail LLC (each a party).\n"
    )
    assert _parties(text, schema)[0] == "HERON HOLDINGS, INC."


def test_the_name_a_party_does_business_as_is_part_of_it(schema: SchemaVersion) -> None:
    text = (
        'SUPPLY AGREEMENT\nThis Agreement is made by and between EWSD 2, LLC, d/b/a/ PLOVER FARMS ("Plover"), a '
        'Delaware limited liability company and Tern Retail LLC ("Tern").\n'
    )
    assert _parties(text, schema) == ["EWSD 2, LLC, d/b/a/ PLOVER FARMS", "Tern Retail LLC"]


def test_a_party_named_without_a_legal_form_keeps_its_of(schema: SchemaVersion) -> None:
    text = (
        'LICENSE AGREEMENT\nThis License Agreement is entered into by and between Wren, Inc. ("Wren"), and The '
        'University of Tern, located at 2 Gilmore Hall ("University").\n'
    )
    assert _parties(text, schema) == ["Wren, Inc.", "The University of Tern"]


def test_dates_signed_side_by_side_give_the_last_signature(schema: SchemaVersion) -> None:
    text = (
        "DISTRIBUTOR AGREEMENT\nThis Agreement is made between Wren, Inc. and Tern Retail LLC.\n"
        "By: /s/ A. Wren By: /s/ B. Tern\nDate: 1/19/07 Date: January 22, 2007\n"
    )
    assert _values(_fields(text, schema))["agreement_date"] == "2007-01-22"


def test_entered_on_a_day_is_when_the_contract_was_made(schema: SchemaVersion) -> None:
    text = (
        'SUPPORT AGREEMENT\nThis Support Agreement (this "Agreement") is entered on this 9th day of October, 2001 '
        'and is deemed effective as of October 1, 2001 (the "Effective Date"), by and between Wren, Inc. and Tern '
        "Retail LLC.\n"
    )
    assert _values(_fields(text, schema))["agreement_date"] == "2001-10-09"


def test_a_layout_gap_does_not_part_amended_and_restated_from_the_title(schema: SchemaVersion) -> None:
    text = (
        "Exhibit 10.13\n\nWREN, INC.\n\nand\n\nTERN RETAIL LLC        AMENDED AND RESTATED   SUPPLY AGREEMENT\n\n"
        "THIS AMENDED AND RESTATED SUPPLY AGREEMENT is made between Wren, Inc. and Tern Retail LLC.\n"
    )
    assert _values(_fields(text, schema))["document_name"] == "AMENDED AND RESTATED SUPPLY AGREEMENT"


def test_what_follows_a_termination_for_any_reason_is_no_right_to_terminate(schema: SchemaVersion) -> None:
    text = (
        "SPONSORSHIP AGREEMENT\nThis Agreement is made between Wren, Inc. and Tern Retail LLC.\n"
        "The audit rights set forth herein shall continue for one (1) year following the termination of this "
        "Agreement for any reason.\nEither party may terminate this Agreement if the other party is in material "
        "breach.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is False


def test_a_right_to_terminate_beside_what_follows_termination_is_still_read(schema: SchemaVersion) -> None:
    text = (
        "ENDORSEMENT AGREEMENT\nThis Agreement is made between Wren, Inc. and Tern Retail LLC.\n"
        "This Agreement may be terminated at any time by written notice by either party; and, in any event, this "
        "Agreement will terminate upon termination of the Employee's employment.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is True


def test_a_default_said_not_to_exist_names_no_cause(schema: SchemaVersion) -> None:
    text = (
        "AGENCY AGREEMENT\nThis Agreement is made between Wren, Inc. and Tern Retail LLC.\n"
        "So long as no default exists and is continuing hereunder, either party may terminate this Agreement at any "
        "time upon thirty (30) days written notice to the other party.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is True


def test_a_notice_period_written_in_the_singular_needs_no_cause(schema: SchemaVersion) -> None:
    text = (
        "AFFILIATE AGREEMENT\nThis Agreement is made between Wren, Inc. and Tern Retail LLC.\n"
        "This Agreement shall continue in effect until either Party informs the other Party with thirty (30) day "
        "prior written notice of termination of this Agreement.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is True


@pytest.mark.parametrize("name", ["e.l.f. Plover, Inc.", "bw-3 TERN SYSTEMS, INC."])
def test_a_brand_printed_in_lower_case_opens_the_name(schema: SchemaVersion, name: str) -> None:
    text = f'COOPERATION AGREEMENT\nThis Agreement is entered into by and between {name} ("Company") and Wren LLC.\n'
    assert _parties(text, schema)[0] == name


def test_a_name_quoted_as_an_alias_is_no_party(schema: SchemaVersion) -> None:
    text = (
        "ENDORSEMENT AGREEMENT\nThis Agreement is made by and among the following parties: (a) Wren Ruiz, Inc. "
        '("WR Inc."), furnishing the services of Wren Ruiz ("WR"); (b) The Plover/Tern Co. ("PT").\n'
    )
    assert _parties(text, schema) == ["Wren Ruiz, Inc.", "The Plover/Tern Co."]


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("the laws of New York State, without regard to its conflict of laws rules", "New York"),
        ("the laws of the State of Tern, without regard to its conflict of laws rules", "Tern"),
    ],
)
def test_a_state_named_after_its_name_is_that_state(schema: SchemaVersion, clause: str, expected: str) -> None:
    text = f"SUPPLY AGREEMENT\nbetween Wren, Inc. and Tern LLC.\n9. This Agreement shall be governed by {clause}.\n"
    assert _fields(text, schema)["governing_law"].value["value"] == expected


def test_the_state_in_which_something_lies_names_no_place(schema: SchemaVersion) -> None:
    text = (
        "FRANCHISE AGREEMENT\nbetween Wren, Inc. and Tern LLC.\n9. THIS AGREEMENT SHALL BE CONSTRUED UNDER THE LAWS "
        "OF THE STATE IN WHICH THE FRANCHISED RESTAURANT IS LOCATED.\n"
    )
    assert "governing_law" not in _fields(text, schema)


def test_what_follows_on_the_termination_is_no_right_to_terminate(schema: SchemaVersion) -> None:
    text = (
        "SUPPLY AGREEMENT\nbetween Wren, Inc. and Tern LLC.\n6.4 On the termination of this Agreement for any "
        "reason, all rights granted to Supplier under this Agreement will immediately cease.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is False


def test_a_clause_number_in_a_sequence_is_no_date(schema: SchemaVersion) -> None:
    text = (
        "COLLABORATION AGREEMENT\nbetween Wren, Inc. and Tern LLC.\n3.2.16 Party B shall pay the rent. 3.2.17 Party B "
        "guarantees the service. 3.2.18 Party B shall keep records.\n\nIN WITNESS WHEREOF the parties sign.\n"
        "By: Wren, Inc.\n"
    )
    assert "agreement_date" not in _fields(text, schema)


def test_the_date_of_a_contract_referred_to_is_not_this_ones(schema: SchemaVersion) -> None:
    text = (
        'FIRST AMENDMENT TO SUPPLY AGREEMENT\nThis First Amendment ("Amendment") to the Supply and Manufacturing '
        'Agreement dated April 1, 2017 between Wren Corporation ("Wren") and Tern Corporation ("Tern") (the '
        '"Agreement") is made this 22 day of June 2018.\n'
    )
    assert _fields(text, schema)["agreement_date"].value["value"] == "2018-06-22"
    alone = (
        "PLACEMENT AGENCY AGREEMENT\nThe Company issued shares pursuant to a Subscription Agreement dated as of "
        "May 22, 2015, by and between Alpha Holdings Inc. and Beta Capital LLC.\n"
    )
    assert _values(_fields(alone, schema))["document_name"] == "PLACEMENT AGENCY AGREEMENT"
    assert "agreement_date" not in _fields(alone, schema)


def test_a_number_cited_after_section_is_no_date(schema: SchemaVersion) -> None:
    text = (
        "FRANCHISE AGREEMENT\nbetween Wren, Inc. and Tern LLC.\nA. Restrictive Covenants: covenants contrary to "
        "Section 9-08-06, N.D.C.C., are void.\n\nIN WITNESS WHEREOF the parties sign.\nBy: Wren, Inc.\n"
    )
    assert "agreement_date" not in _fields(text, schema)


@pytest.mark.parametrize("notice", ["ninety (90) days' prior notice", "3 months advance written notice"])
def test_a_notice_lead_time_without_written_needs_no_cause(schema: SchemaVersion, notice: str) -> None:
    text = (
        "AFFILIATE AGREEMENT\nbetween Wren, Inc. and Tern LLC.\nNetwork retains the right at all times during the Term "
        f"to terminate this Agreement on at least {notice} without any liability therefor to Affiliate.\n"
    )
    assert _fields(text, schema)["termination_clause"].value["for_convenience"] is True


def test_a_titles_evidence_says_whether_the_preamble_calls_it_so(schema: SchemaVersion) -> None:
    """Evidence for the calibration, not a change of value: the preamble confirms or contradicts the title read."""
    text = (
        "EXHIBIT 10.3\n\nTRANSPORTATION SERVICES AGREEMENT\n\nTHIS MARINE TRANSPORTATION AGREEMENT (this "
        '"Agreement") is executed by and between Wren Operating L.P. ("Owner") and Tern Fuel LLC ("Charterer").\n'
    )
    title = _fields(text, schema)["document_name"]
    assert title.value["value"] == "TRANSPORTATION SERVICES AGREEMENT"
    assert (title.features["preamble_names_it"], title.features["preamble_names_other"]) == (0.0, 1.0)
    same = _fields(text.replace("MARINE TRANSPORTATION", "TRANSPORTATION SERVICES"), schema)["document_name"]
    assert (same.features["preamble_names_it"], same.features["preamble_names_other"]) == (1.0, 0.0)
    silent = _fields(text.replace("THIS MARINE TRANSPORTATION AGREEMENT", "THIS AGREEMENT"), schema)["document_name"]
    assert (silent.features["preamble_names_it"], silent.features["preamble_names_other"]) == (0.0, 0.0)


def test_a_title_cut_at_the_top_is_read_whole_from_the_preamble(schema: SchemaVersion) -> None:
    text = (
        "Exhibit (k)(1)\n\nSERVICE AGREEMENT\n\nFOR\n\nTRANSFER AGENT SERVICES\n\nTO\n\nWREN FUND\n\n"
        'THIS SERVICE AGREEMENT FOR TRANSFER AGENT SERVICES (this "Agreement") between Wren Fund, a Delaware '
        'statutory trust ("Client") and Tern Investor Services LLC ("Agent"), is dated as of January 26, 2011.\n'
    )
    title = _fields(text, schema)["document_name"]
    assert title.value["value"] == "SERVICE AGREEMENT FOR TRANSFER AGENT SERVICES"
    assert title.evidence_span == "SERVICE AGREEMENT FOR TRANSFER AGENT SERVICES"
    assert title.features["preamble_names_other"] == 1.0  # the top of the page still said less


def test_a_title_that_opens_a_line_of_names_is_read_without_them(schema: SchemaVersion) -> None:
    funds = (
        "WREN RISK MANAGED VOLATILITY FUND WREN RISK TACTICAL ROTATION FUND WREN RISK TACTICAL OPPORTUNITIES FUND "
        "WREN RISK DEFENSIVE BULL FUND"
    )
    text = (
        f'SERVICES AGREEMENT {funds}\n\nAGREEMENT dated as of June 24, 2020, between Tern Funds (the "Trust"), a '
        'Massachusetts business trust, and Plover Fund Management, Inc. (the "Adviser"), a Florida Corporation.\n'
    )
    assert _fields(text, schema)["document_name"].value["value"] == "SERVICES AGREEMENT"


def test_a_filings_page_stamp_names_no_party(schema: SchemaVersion) -> None:
    text = (
        'Exhibit 10.1\n\nCONTENT LICENSE AGREEMENT\n\nThis Agreement is made between Tern Cable LLC ("Tern") and\n\n'
        'Source: WREN MEDIA, INC., 8-K, 12/1/2006\n\nPlover Content Inc. ("Plover").\n'
    )
    assert _parties(text, schema) == ["Tern Cable LLC", "Plover Content Inc."]


def test_the_united_states_of_america_is_the_united_states(schema: SchemaVersion) -> None:
    text = (
        "CONTENT LICENSE AGREEMENT\nbetween Wren, Inc. and Tern LLC.\n10.1 This Agreement shall be governed and "
        "construed in accordance with the laws of the United States of America.\n"
    )
    law = _fields(text, schema)["governing_law"].value
    assert (law["value"], law["as_printed"]) == ("United States", "United States of America")


def test_a_party_whose_definition_names_it_otherwise_is_evidence_of_doubt(schema: SchemaVersion) -> None:
    """A party's definition giving it its successors or another name ("together with its successors and assigns",
    "d/b/a ...") up to its alias: whether those words are part of the name is a reader's choice (evidence for the
    calibration; the value stays the name)."""
    text = (
        "AGENCY AGREEMENT\nThis Agency Agreement is between Hotel Capital Corporation, a Delaware corporation "
        '(together with its successors and assigns, "Lessor"), and India Stores, Inc., a Kansas corporation (the '
        '"Company").\nWHEREAS, the Company sells goods.\n'
    )
    found = _fields(text, schema)
    assert (found["party_a"].value["value"], found["party_b"].value["value"]) == (
        "Hotel Capital Corporation",
        "India Stores, Inc.",
    )
    assert (found["party_a"].features["qualified_definition"], found["party_b"].features["qualified_definition"]) == (
        1.0,
        0.0,
    )
    trade = text.replace("(together with its successors and assigns, ", "d/b/a Hotel Funding (")
    assert _fields(trade, schema)["party_a"].features["qualified_definition"] == 1.0


def test_a_title_going_past_its_kind_or_ending_on_a_mark_is_evidence_of_doubt(schema: SchemaVersion) -> None:
    """An English title names its kind last ("CONTENT LICENSE AGREEMENT"): one that goes on past it ("AMENDMENT NO.
    2") or ends on a punctuation mark was read past the title or cut inside it (evidence for the calibration; the
    value stays). A Russian title names its kind first ("ДОГОВОР ПОСТАВКИ") and is no such title."""

    def ending(text: str) -> tuple[str, float, float]:
        title = _fields(text, schema)["document_name"]
        return title.value["value"], title.features["past_its_kind"], title.features["ends_on_a_mark"]

    body = '\n\nThis Agreement is made between Wren Media, Inc. ("Wren") and Tern Cable LLC ("Tern").\n'
    assert ending("CONTENT LICENSE AGREEMENT" + body) == ("CONTENT LICENSE AGREEMENT", 0.0, 0.0)
    assert ending("AMENDMENT NO. 2" + body) == ("AMENDMENT NO. 2", 1.0, 0.0)
    assert ending("CONTENT LICENSE AGREEMENT -" + body) == ("CONTENT LICENSE AGREEMENT -", 0.0, 1.0)
    assert ending(RUSSIAN)[1:] == (0.0, 0.0)


def test_a_party_printed_in_capitals_is_evidence_of_confidence(schema: SchemaVersion) -> None:
    """A preamble names its parties formally, often in capitals ("WREN MEDIA, INC."); a name in mixed case is as
    often a reader's pick from running text (evidence for the calibration; the value stays as printed)."""
    text = (
        "CONTENT LICENSE AGREEMENT\n\nThis Agreement is made between WREN MEDIA, INC., a Delaware corporation "
        '("Wren"), and Tern Cable LLC, a Texas limited liability company ("Tern").\n'
    )
    found = _fields(text, schema)
    assert (found["party_a"].value["value"], found["party_b"].value["value"]) == ("WREN MEDIA, INC.", "Tern Cable LLC")
    assert (found["party_a"].features["in_capitals"], found["party_b"].features["in_capitals"]) == (1.0, 0.0)


def test_the_word_lists_a_warm_process_prepares_are_the_ones_a_contract_compiles(schema: SchemaVersion) -> None:
    """`prepare_word_lists` (a watch's warm-up) compiles each lexicon's word lists: reading both contracts afterwards
    compiles only the few lists the reader puts together as it goes (a concatenation, a slice, a list of its own);
    cold, it compiles dozens."""
    from extraction_assets.lib.heuristics import phrases
    from extraction_assets.lib.heuristics.contract import prepare_word_lists

    def compiled_by_reading() -> int:
        before = phrases._any_phrase.cache_info().misses
        _fields(ENGLISH, schema), _fields(RUSSIAN, schema)
        return phrases._any_phrase.cache_info().misses - before

    phrases._any_phrase.cache_clear()
    cold = compiled_by_reading()
    phrases._any_phrase.cache_clear()
    prepare_word_lists()
    assert compiled_by_reading() <= 10 < 30 <= cold
