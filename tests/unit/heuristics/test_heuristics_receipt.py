"""The receipt pack on hand-made OCR-style receipts (one printed box per line) with known answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.heuristics.receipt import extract_receipt
from extraction_assets.lib.models import CandidateItem, Document, ExtractionInput
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

SHOP = """WELCOME
HARBOUR HARDWARE SDN BHD (123456-A)
NO. 7, JALAN MERANTI 3,
TAMAN CONTOH,
43000 KAJANG, SELANGOR
TEL: 03-8000 1234
GST ID: 001234567890
TAX INVOICE
DATE: 05/03/2018 10:15
ITEM
QTY
AMOUNT
PVC PIPE 1/2"
2
8.40
CABLE TIE
1
3.90
SUBTOTAL
12.30
ROUNDING ADJ
0.00
TOTAL
12.30
CASH
20.00
CHANGE
7.70
THANK YOU
"""


@pytest.fixture(scope="module")
def schema() -> SchemaVersion:
    return load_schema(DEFAULT_PROMPTS, "receipt@v1")


def _doc(text: str) -> ExtractionInput:
    return ExtractionInput(doc_id="r1", tenant_id="t", kind="text", text=text)


def _threshold(schema: SchemaVersion, name: str) -> float:
    spec = schema.field(name)
    assert spec is not None, name
    return spec.confidence_threshold


def _fields(text: str, schema: SchemaVersion) -> dict[str, CandidateItem]:
    return {c.item_type: c for c in extract_receipt(_doc(text), schema)}


def _assert_verbatim(text: str, candidates: dict[str, CandidateItem]) -> None:
    for c in candidates.values():
        assert c.span_hint is not None
        assert text[c.span_hint : c.span_hint + len(c.evidence_span)] == c.evidence_span


def test_reads_every_field_of_a_receipt(schema: SchemaVersion) -> None:
    found = _fields(SHOP, schema)
    assert found["company"].value["value"] == "HARBOUR HARDWARE SDN BHD"  # registration number cut off
    assert found["address"].value["value"] == "NO. 7, JALAN MERANTI 3, TAMAN CONTOH, 43000 KAJANG, SELANGOR"
    assert found["address"].evidence_span == "NO. 7, JALAN MERANTI 3,\nTAMAN CONTOH,\n43000 KAJANG, SELANGOR"
    assert found["date"].value == {"value": "2018-03-05", "as_printed": "05/03/2018"}
    assert found["total"].value == {"value": 12.3, "as_printed": "12.30"}
    _assert_verbatim(SHOP, found)
    assert all(schema.heuristic_band.contains(c.confidence) for c in found.values())


def test_day_first_is_a_schema_option(schema: SchemaVersion) -> None:
    month_first = schema.model_copy(update={"options": {**schema.options, "day_first": False}})
    assert _fields(SHOP, month_first)["date"].value["value"] == "2018-05-03"


def test_a_column_of_labels_takes_its_amounts_in_order(schema: SchemaVersion) -> None:
    text = "CORNER MART ENTERPRISE\nNO 3, JALAN SATU\nDATE: 01/02/2019\nTEA\n2.50\n"
    text += "TOTAL\nCASH\nCHANGE\n2.50\n10.00\n7.50\n"
    assert _fields(text, schema)["total"].value["value"] == 2.5


def test_rounded_total_wins_over_the_unrounded_one(schema: SchemaVersion) -> None:
    text = (
        "SUNRISE CAFE\nLOT 9, JALAN DUA\n12/06/2019\nNASI LEMAK\n6.52\nTOTAL AMT RM\n10.03\nROUNDING ADJ\n-0.03\n"
        "RM\n10.00\nCASH RM\n50.00\nCHANGE RM\n40.00\n"
    )
    found = _fields(text, schema)
    assert found["total"].value["value"] == 10.0
    # no label of its own, but cash minus change confirms it: trusted, not a guess
    assert found["total"].confidence >= _threshold(schema, "total")


def test_a_name_broken_over_lines_is_joined(schema: SchemaVersion) -> None:
    text = "GOLDEN LEAF HARDWARE &\nTRADING SDN BHD\n(998877-X)\nNO 1, JALAN TIGA\nTOTAL\n4.00\nCASH\n4.00\n1.00\n"
    found = _fields(text, schema)
    assert found["company"].value["value"] == "GOLDEN LEAF HARDWARE & TRADING SDN BHD"
    assert found["company"].evidence_span == "GOLDEN LEAF HARDWARE &\nTRADING SDN BHD"


def test_a_name_without_a_legal_form_is_a_guess_under_the_review_threshold(schema: SchemaVersion) -> None:
    text = "MORNING GLORY\nNO 4, JALAN EMPAT\nTOTAL\n5.00\nCASH\n10.00\nCHANGE\n5.00\n"
    company = _fields(text, schema)["company"]
    assert company.value["value"] == "MORNING GLORY"
    assert company.confidence < _threshold(schema, "company")


def test_without_a_total_label_the_repeated_largest_amount_is_guessed(schema: SchemaVersion) -> None:
    text = "KEDAI RUNCIT ABC\nNO 2, JALAN DUA\nRICE 5KG\n18.90\nSUGAR\n3.10\nAMOUNT RM\n22.00\nPAID\n22.00\n"
    total = _fields(text, schema)["total"]
    assert total.value["value"] == 22.0
    assert total.confidence < _threshold(schema, "total")


def test_a_note_that_mentions_a_price_is_not_a_receipt(schema: SchemaVersion) -> None:
    note = "Team note 2026-01-12\nThe supplier quoted 12.50 per unit; total budget to be confirmed by Friday.\n"
    assert extract_receipt(_doc(note), schema) == []


def test_ocr_spaces_and_nbsp_do_not_hide_the_total(schema: SchemaVersion) -> None:
    text = "BLUE OCEAN SEAFOOD RESTAURANT\nNO 8, JALAN LAPAN\nDATE:\u00a009/09/2019\nFISH\n30.00\nTOTAL\u00a0:\n30.00\n"
    text += "CASH\n50.00\nCHANGE\n20.00\n"
    found = _fields(text, schema)
    assert found["total"].value["value"] == 30.0
    assert found["date"].value["value"] == "2019-09-09"
    _assert_verbatim(text, found)


def test_through_the_pipeline_every_item_is_grounded(schema: SchemaVersion) -> None:
    doc = Document(doc_id="d", tenant_id="t", source_uri="t/r.txt", kind="text", text=SHOP)
    outcome = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    assert outcome.status == "processed"
    assert {i.item_type for i in outcome.items} == {"company", "address", "date", "total"}
    for item in outcome.items:
        ev = item.evidence[0]
        assert SHOP[ev.char_start : ev.char_end] == ev.quote
    assert outcome.routing is None  # receipts have no routing policy


def test_the_sample_receipt_reads_completely() -> None:
    schema = load_schema(DEFAULT_PROMPTS, "receipt@v1")
    path = Path(__file__).parents[3] / "extraction_assets/sample_inbox/minsk-legal/expenses"
    text = next(path.glob("*.txt")).read_text(encoding="utf-8")
    assert set(_fields(text, schema)) == {"company", "address", "date", "total"}


_SALE = "TOTAL\n9.00\nCASH\n10.00\nCHANGE\n1.00\n"


def test_a_postcode_line_with_a_short_town_ends_the_address(schema: SchemaVersion) -> None:
    text = "RIVERSIDE NOODLE HOUSE\n(778899-K)\n21, JLN MAWAR 4\nPUSAT NIAGA INDAH\n52100 KL\nINVOICE\n" + _SALE
    assert _fields(text, schema)["address"].value["value"] == "21, JLN MAWAR 4 PUSAT NIAGA INDAH 52100 KL"


def test_a_branch_name_after_the_town_and_state_is_not_address(schema: SchemaVersion) -> None:
    text = "PAPER TRAIL BOOKS SDN BHD\nNO 3, JALAN CEMPAKA 2\n47500 SUBANG JAYA, SELANGOR\nHILLTOP GALLERIA\n"
    text += "TEL: 03-5555 0000\n" + _SALE
    assert _fields(text, schema)["address"].value["value"] == "NO 3, JALAN CEMPAKA 2 47500 SUBANG JAYA, SELANGOR"


def test_after_the_town_a_state_or_a_line_led_into_by_a_comma_still_belongs(schema: SchemaVersion) -> None:
    text = "LUCKY STAR TRADING\nNO 9, JALAN KENARI\n28000 TEMERLOH,\nBUKIT ANGGERIK HEIGHTS\nPAHANG DARUL MAKMUR\n"
    text += "SUNNY BRANCH\nGST ID: 000111222333\n" + _SALE
    expected = "NO 9, JALAN KENARI 28000 TEMERLOH, BUKIT ANGGERIK HEIGHTS PAHANG DARUL MAKMUR"
    assert _fields(text, schema)["address"].value["value"] == expected


def test_the_line_above_a_postcode_line_is_its_street(schema: SchemaVersion) -> None:
    text = "HIGHWAY REST STOP\nROUTE DES COLLINES\n15500 VILLENEUVE\nTEL. : 05.11.22.33.44\n" + _SALE
    found = _fields(text, schema)
    assert found["address"].value["value"] == "ROUTE DES COLLINES 15500 VILLENEUVE"
    _assert_verbatim(text, found)


def test_a_name_ending_in_an_ampersand_goes_on_below(schema: SchemaVersion) -> None:
    text = "GREEN VALLEY HARDWARE &\nPAINTS\nNO 5, JALAN ENAM\n43000 KAJANG\n" + _SALE
    found = _fields(text, schema)
    assert found["company"].value["value"] == "GREEN VALLEY HARDWARE & PAINTS"
    assert found["address"].value["value"] == "NO 5, JALAN ENAM 43000 KAJANG"


def test_a_prepaid_slip_with_only_total_and_cash_is_a_receipt(schema: SchemaVersion) -> None:
    text = "FUELPOINT SEMENYIH\nLOT 12, JALAN SATU\n43500 SEMENYIH, SELANGOR\nPREPAY SLIP\n02-05-2018 08:30:00\n"
    text += "PUMP 3\n30.00\nTOTAL AMOUNT\nCASH\n30.00\n"
    found = _fields(text, schema)
    assert found["company"].value["value"] == "FUELPOINT SEMENYIH"
    assert found["date"].value["value"] == "2018-05-02"
    assert found["total"].value["value"] == 30.0


def test_two_different_prices_are_not_a_receipt(schema: SchemaVersion) -> None:
    note = "Shopping list\nmilk 4.20 at the corner shop\nbread 3.10, total to be paid on Friday\n"
    assert extract_receipt(_doc(note), schema) == []


def test_a_return_policy_printed_first_is_no_seller(schema: SchemaVersion) -> None:
    """A slogan printed above the seller does not open the header (the contact line after it would end it)."""
    text = "THANK YOU. PLEASE COME AGAIN.\nGOODS SOLD ARE NOT RETURNABLE.\nTEL: 03-8000 1234\n"
    text += "PAKU MART SDN.BHD\n(123456-W)\nNO 9, JALAN SEMBILAN\n43000 KAJANG\n" + _SALE
    assert _fields(text, schema)["company"].value["value"] == "PAKU MART SDN.BHD"


def test_a_legal_form_inside_a_registration_bracket_does_not_end_the_name(schema: SchemaVersion) -> None:
    text = "SERI REALTIES SDN BHD (CO. NO:20154-T)\nNO 9, JALAN SEMBILAN\n43000 KAJANG\n" + _SALE
    assert _fields(text, schema)["company"].value["value"] == "SERI REALTIES SDN BHD"


def test_a_net_amount_label_names_the_total(schema: SchemaVersion) -> None:
    text = "LOTUS VEGETARIAN RESTAURANT SDN BHD\nNO 9, JALAN SEMBILAN\n43000 KAJANG\nTAX INVOICE\nDATE: 06/01/2018\n"
    text += "CURRY MIXED VEGE\n1\n47.80\nGROSS AMT :\n47.80\nSVR TAX :\n2.87\nNET AMT :\n50.67\n"
    assert _fields(text, schema)["total"].value["value"] == 50.67


def test_a_label_printing_its_own_count_takes_no_amount_from_the_column(schema: SchemaVersion) -> None:
    text = "THE TOAST SDN BHD\nNO 9, JALAN SEMBILAN\n43000 KAJANG\nDATE: 16/06/2018\nKAYA TOAST\n12.30\n"
    text += "TOTAL ITEMS: 3\nSUB TOTAL RM\nDISCOUNT:\nTOTAL DUE (GST INC):\nPAID: CASH\nCHANGE:\nGST(0%):\n"
    text += "12.30\n0.00\n12.30\n20.00\n7.70\n12.30\n0.00\n"
    assert _fields(text, schema)["total"].value["value"] == 12.3


def test_an_amount_accepted_is_cash_tendered(schema: SchemaVersion) -> None:
    text = "SERI REALTIES SDN BHD\nNO 9, JALAN SEMBILAN\n43000 KAJANG\nTAX INVOICE\n28/05/18 11:41\n"
    text += "PAY PARKING TICKET\n5.00 RM\nAMOUNT INCL. GST\n5.00 RM\nACCEPTED TOTAL\n10.00 RM\nCHANGE\n5.00 RM\n"
    assert _fields(text, schema)["total"].value["value"] == 5.0


def test_a_date_glued_to_a_product_code_is_not_the_sale_date(schema: SchemaVersion) -> None:
    text = "HOME DIY SDN BHD\nNO 9, JALAN SEMBILAN\n43000 KAJANG\nTOILET BRUSH\nHD03-04-06 - 5/40/160\n2.70\n"
    text += "TOTAL\n2.70\nCASH\n5.00\nCHANGE\n2.30\n19-09-17\n"
    assert _fields(text, schema)["date"].value["value"] == "2017-09-19"


def test_unlabelled_the_date_printed_with_its_time_is_the_sale_date(schema: SchemaVersion) -> None:
    text = "HOME DIY SDN BHD\nNO 9, JALAN SEMBILAN\n43000 KAJANG\nCURTAIN STRAPS\nCK 11-02-18 - 10/400\n5.00\n"
    text += "TOTAL\n5.00\nCASH\n10.00\nCHANGE\n5.00\n19-09-17 15:39 SH01\n"
    assert _fields(text, schema)["date"].value["value"] == "2017-09-19"


def test_a_line_priced_on_the_next_one_is_an_item_not_address(schema: SchemaVersion) -> None:
    text = "CARE STORES SDN BHD\nCOMPANY REG NO.: 28982V\nUSJ SUMMIT, SUBANG (SS)\n22241 WS CUT SCISSORS\n18.00\n"
    text += "TOTAL\n18.00\nCASH\n20.00\nCHANGE\n2.00\n"
    assert _fields(text, schema)["address"].value["value"] == "USJ SUMMIT, SUBANG (SS)"


@pytest.mark.parametrize(
    ("after", "expected"),
    [
        ("FOLDING CHAIR BLUE\n", "NO 7, JLN MELATI, KLANG."),  # a plain line after the full stop is the sale's
        ("TAMAN MELATI,\n", "NO 7, JLN MELATI, KLANG. TAMAN MELATI,"),  # OCR reads commas as full stops
        ("41150 KLANG\n", "NO 7, JLN MELATI, KLANG. 41150 KLANG"),  # the postcode and town go on
    ],
)
def test_after_a_full_stop_only_more_address_goes_on(schema: SchemaVersion, after: str, expected: str) -> None:
    text = "KEDAI RUNCIT MAJU\nGST:001122334455\nTAX INVOICE\nNO 7, JLN MELATI, KLANG.\n" + after + "400002\nS\n"
    text += "1.00 X 21.32\n21.32\n" + _SALE
    assert _fields(text, schema)["address"].value["value"] == expected


def test_the_six_percent_tax_of_an_amount_printed_is_not_the_total(schema: SchemaVersion) -> None:
    # OCR boxes in columns: "TOTAL:" takes the tax printed under it, 6% of the 50.00 sold, not what was paid
    text = "KEDAI BUKU MAJU\nNO 5, JALAN SATU\n53200 KUALA LUMPUR\nTOTAL:\n3.00\nPEN SET\n50.00\n53.00\nCASH\n53.00\n"
    assert _fields(text, schema)["total"].value["value"] == 53.0


def test_a_total_that_is_six_percent_of_the_cash_tendered_stays_the_total(schema: SchemaVersion) -> None:
    text = "KEDAI BUKU MAJU\nNO 5, JALAN SATU\n53200 KUALA LUMPUR\nPEN SET\n6.00\nTOTAL:\n6.00\nCASH\n100.00\n"
    total = _fields(text, schema)["total"]
    assert total.value["value"] == 6.0
    assert total.features["rule_label"] == 1.0  # read after its label, not guessed as the largest amount repeated


@pytest.mark.parametrize(
    ("before_rounding", "expected"),
    [
        ("27.27", 0.0),  # the total before its rounding to 5 sen is the total itself
        ("27.29", 0.0),
        ("27.30", 1.0),  # 5 sen more is another amount
        ("31.80", 1.0),
    ],
)
def test_the_total_before_rounding_is_no_larger_amount(
    schema: SchemaVersion, before_rounding: str, expected: float
) -> None:
    text = (
        "GREEN FORK SDN BHD\nNO 3, JALAN TIGA\n81750 MASAI, JOHOR\nTEL: 03-5555 0000\nITEM A\n27.25\n"
        f"TOTAL INCL. GST\n{before_rounding}\nGST SR@0%\n{before_rounding}\nROUNDING\n-0.02\nTOTAL\n27.25\n"
        "CASH 50.00\nCHANGE 22.75\n"
    )
    total = _fields(text, schema)["total"]
    assert total.value["value"] == 27.25
    assert total.features["exceeded"] == expected
    assert total.features["larger_repeated"] == expected


@pytest.mark.parametrize(
    ("cash", "change", "expected"),
    [
        ("100.00", "5.13", 0.0),  # cash less change settles 94.87: the shop does not round
        ("100.00", "5.15", 1.0),  # the cash settles 94.85: 94.87 is no rounded total
    ],
)
def test_a_total_the_cash_settles_is_not_oddly_rounded(
    schema: SchemaVersion, cash: str, change: str, expected: float
) -> None:
    text = (
        "GREEN FORK SDN BHD\nNO 3, JALAN TIGA\n81750 MASAI, JOHOR\nTEL: 03-5555 0000\nITEM A\n94.87\n"
        f"ROUNDING : 0.00\nTOTAL SALES (INCLUSIVE OF GST) : 94.87\nCASH : {cash}\nCHANGE : {change}\n"
    )
    total = _fields(text, schema)["total"]
    assert total.value["value"] == 94.87
    assert total.features["odd_rounding"] == expected


@pytest.mark.parametrize(
    ("street", "town", "expected"),
    [
        ("NO 3, JALAN SEPADU 25", "40400 SHAH ALAM, SELANGOR", 0.0),
        ("NO 3, JALAN SEPADU 25", "40400 SHAH ALAM, SELANGOR, MALAYSI", 1.0),  # a state or country misread
        ("NO 3, TAMAN IDUSTRIES", "40400 SHAH ALAM, SELANGOR", 1.0),  # a trade word misread
        ("NO 3, JALAN BANOAR", "40400 SHAH ALAM, SELANGOR", 1.0),  # a street word misread
    ],
)
def test_a_word_one_letter_from_a_known_address_word_is_a_misreading(
    schema: SchemaVersion, street: str, town: str, expected: float
) -> None:
    text = f"GREEN FORK SDN BHD\n{street}\n{town}\nTEL: 03-5555 0000\n" + _SALE
    assert _fields(text, schema)["address"].features["misread_words"] == expected


@pytest.mark.parametrize(
    ("street", "expected"),
    [
        ("NO 3, JALAN SEPADU 25", 0.0),
        ("LOT F36, FIRST FLOOR, JALAN SEPADU 25", 0.0),  # a lot or unit designation is the address's number
        ("UNIT G-5B, JALAN SEPADU 25", 0.0),
        ("NO: 28, JALAN SEPADU 25", 0.0),
        ("LEVEL 6, JALAN SEPADU 25", 0.0),
        ("PLAZA DANAU NO.37-1, JALAN SEPADU 25", 1.0),  # a building or branch name above the street
        ("CAR PARK OFFICE, JALAN SEPADU 25", 1.0),
    ],
)
def test_an_address_opening_with_words_not_a_unit_is_doubt(schema: SchemaVersion, street: str, expected: float) -> None:
    text = f"GREEN FORK SDN BHD\n{street}\n40400 SHAH ALAM, SELANGOR\nTEL: 03-5555 0000\n" + _SALE
    address = _fields(text, schema)["address"]
    assert address.value["value"].startswith(street.split(",")[0])
    assert address.features["opens_without_number"] == expected


@pytest.mark.parametrize(
    ("above", "expected"),
    [("", 0.0), ("LEMON LEAF CAFE\n", 1.0), ("LEMON LEAF CAFE\nTAMAN CONTOH OUTLET\n", 1.0)],
)
def test_a_name_line_above_the_seller_is_one_doubt_however_many(
    schema: SchemaVersion, above: str, expected: float
) -> None:
    # the gold joins a trade name printed above the legal name, or takes it instead, for about a third of such
    # sellers whether one line or more sits above: a flag, not a count
    text = above + "GREEN FORK SDN BHD\n(112233-A)\nNO 3, JALAN TIGA\n81750 MASAI, JOHOR\nTOTAL\n9.00\nCASH\n10.00\n"
    text += "CHANGE\n1.00\n"
    company = _fields(text, schema)["company"]
    assert company.value["value"] == "GREEN FORK SDN BHD"
    assert company.features["name_above"] == expected


@pytest.mark.parametrize(
    ("header", "seller", "expected"),
    [
        ("RESTAURANT JIAWEI\nJIAWEI HOUSE\n", "RESTAURANT JIAWEI", 1.0),  # the name goes on below
        ("AA PHARMACY\nSUBANG HEALTHCARE SDN\n", "AA PHARMACY", 1.0),  # a legal name the form cut off follows
        ("RESTAURANT JIAWEI\n002693074-K\n", "RESTAURANT JIAWEI", 0.0),  # its registration number follows
        ("GREEN FORK SDN BHD\nMYDIN MART SRI MUDA\n", "GREEN FORK SDN BHD", 0.0),  # a legal name is the seller
    ],
)
def test_a_name_line_below_a_name_without_legal_form_is_doubt(
    schema: SchemaVersion, header: str, seller: str, expected: float
) -> None:
    text = header + "13, JLN TASIK UTAMA 8\n57000 KUALA LUMPUR\nTOTAL\n9.00\nCASH\n10.00\nCHANGE\n1.00\n"
    company = _fields(text, schema)["company"]
    assert company.value["value"] == seller
    assert company.features["name_below"] == expected
