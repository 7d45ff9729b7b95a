"""The `email` pack: classify into finance / crm / intel / promotions, one flat record per module, with evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document, extraction_input
from extraction_assets.lib.heuristics.email import extract_email, parse_header_block, score_confidence, sentences
from extraction_assets.lib.models import CandidateItem, Document, ExtractionOutcome
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.readers import read_file
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

INVOICE = """Message-ID: <inv-7781@northwind.test>
Date: Fri, 27 Nov 2026 11:20:00 -0600
From: Northwind Packaging Billing <billing@northwind.test>
To: Dana Whitfield <dana@acme.test>
Subject: Invoice INV-2026-0117 for PO NW-55120

Hello Dana,

Please find attached invoice INV-2026-0117 for the first 300 brackets. The total amount due is
$4,210.00, including the $1,850.00 expedite charge. Payment is due by
2026-12-11 by bank transfer.

On Wed, 25 Nov 2026 at 16:05, Dana Whitfield <dana@acme.test> wrote:
> Please also quote us for 2,000 units; our budget is $9,000.00.

--
Northwind Packaging | +1 312 555 0199
"""
INQUIRY = """Message-ID: <req-5521@brightline.test>
Date: Mon, 30 Nov 2026 09:12:00 -0800
From: Jordan Reyes <jordan.reyes@brightline.test>
To: Sam Patel <sam@acme.test>
Subject: Request for quote: lobby lighting

Hi Sam,

We are interested in your retrofit service. Could you send us a quote for 40 pendant fixtures
by Friday? I would also like to schedule a call next week.

You can reach me at +1 510 555 0177.

Jordan Reyes
Facilities Manager, Brightline Hospitality LLC
"""
PROMO = """Message-ID: <bf-2026@lumenhaus.test>
Date: Sat, 28 Nov 2026 06:00:00 -0500
From: LumenHaus Supply <offers@lumenhaus.test>
To: Sam Patel <sam@acme.test>
Subject: Black Friday for the trade

This weekend only: take 25% off all commercial LED panels.
Use code TRADE25 at checkout.
Offer ends 2026-11-30 at midnight.

You receive this e-mail because you have a trade account. Unsubscribe at any time.
"""
NEWSLETTER = """Message-ID: <ltw-48@weekly.test>
Date: Sun, 29 Nov 2026 07:00:00 +0000
From: Lighting Trade Weekly <newsletter@weekly.test>
To: Sam Patel <sam@acme.test>
Subject: Lighting Trade Weekly: aluminium prices

This week's industry news:

- Aluminium extrusion prices rose 6% in November as smelters cut output.
- New state efficiency rules for commercial fixtures take effect in March.
- Survey: 41% of installers report delays on brackets and housings.
"""
LUNCH = """Message-ID: <lunch@acme.test>
Date: Mon, 30 Nov 2026 12:00:00 -0800
From: Priya Nair <priya@acme.test>
To: Team <team@acme.test>
Subject: Lunch?

Anyone up for tacos at noon?
"""
VI_PROMO = """Message-ID: <km-1@baobi.test>
Date: Sun, 29 Nov 2026 08:00:00 +0700
From: Bao Bi Viet <khuyenmai@baobi.test>
To: lan@saigonfoods.test
Subject: Khuyen mai cuoi nam
Content-Type: text/plain; charset=utf-8

Nhân dịp cuối năm, Bao Bì Việt giảm giá 20% cho túi hút chân không các cỡ.
Nhập mã giảm giá BBV20 khi đặt hàng.
Chương trình khuyến mãi đến hết ngày 2026-12-15.
"""


@pytest.fixture(scope="module")
def schema() -> SchemaVersion:
    return load_schema(DEFAULT_PROMPTS, "email@v1")


def read(tmp_path: Path, eml: str) -> Document:
    path = tmp_path / "m.eml"
    path.write_text(eml, encoding="utf-8")
    (doc,) = read_file(path, "acme", "acme/m.eml")
    assert isinstance(doc, Document), doc
    return doc


def records(doc: Document, schema: SchemaVersion) -> dict[str, CandidateItem]:
    found = extract_email(extraction_input(doc, scrub_document(doc)), schema)
    assert len({c.item_type for c in found}) == len(found), "one record per module"
    return {c.item_type: c for c in found}


def outcome(doc: Document, schema: SchemaVersion) -> ExtractionOutcome:
    result = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    assert result.status == "processed" and result.dropped == 0
    return result


def test_invoice_is_a_finance_record_from_the_own_text_only(tmp_path: Path, schema: SchemaVersion) -> None:
    found = records(read(tmp_path, INVOICE), schema)
    assert set(found) == {"finance"}
    finance = found["finance"]
    assert finance.value == {
        "Direction": "outgoing",
        "Counterparty": "Northwind Packaging Billing",
        "Amount": 4210.0,
        "Currency": "USD",
        "Document_Type": "invoice",
        "Reference": "INV-2026-0117",
        "Due_Date": "2026-12-11",
    }
    assert finance.key == "<inv-7781@northwind.test>:finance"
    spans = [finance.evidence_span, *finance.more_evidence]
    assert not any("9,000" in s or "555 0199" in s for s in spans), "quoted reply and signature are never read"
    assert any("$4,210.00" in s for s in spans)


def test_evidence_quotes_are_raw_slices_with_body_turns(tmp_path: Path, schema: SchemaVersion) -> None:
    doc = read(tmp_path, INQUIRY)
    (crm,) = outcome(doc, schema).items
    assert crm.item_type == "crm"
    assert crm.value["Contact_Name"] == "Jordan Reyes"
    assert crm.value["Contact_Email"] == "[EMAIL_1]"  # extractors see placeholders only
    assert crm.value["Phone"] == "[PHONE_1]"
    assert crm.value["Company"] == "Brightline Hospitality LLC"
    assert crm.value["Interaction"] == "quote_request"
    assert crm.value["Next_Step"].startswith("Could you send us a quote")
    quotes = {ev.quote for ev in crm.evidence}
    assert "jordan.reyes@brightline.test" in quotes  # the placeholder's evidence is the raw address
    for ev in crm.evidence:
        assert doc.text[ev.char_start : ev.char_end] == ev.quote
    body_turns = {ev.turn_id for ev in crm.evidence if "quote for 40" in ev.quote}
    assert body_turns == {"b1"}
    assert crm.status == "draft" and 0.60 <= crm.confidence <= 0.80


def test_promotion_record(tmp_path: Path, schema: SchemaVersion) -> None:
    found = records(read(tmp_path, PROMO), schema)
    assert set(found) == {"promotions"}
    assert found["promotions"].value == {
        "Brand": "LumenHaus Supply",
        "Offer_Type": "coupon",
        "Discount": "25%",
        "Promo_Code": "TRADE25",
        "Expires": "2026-11-30",
        "Worth_Saving": True,
    }


def test_vietnamese_promotion(tmp_path: Path, schema: SchemaVersion) -> None:
    found = records(read(tmp_path, VI_PROMO), schema)
    assert set(found) == {"promotions"}
    promo = found["promotions"].value
    assert (promo["Discount"], promo["Promo_Code"], promo["Expires"]) == ("20%", "BBV20", "2026-12-15")


def test_newsletter_is_intel_with_its_headlines(tmp_path: Path, schema: SchemaVersion) -> None:
    found = records(read(tmp_path, NEWSLETTER), schema)
    assert set(found) == {"intel"}
    intel = found["intel"].value
    assert intel["Source"] == "Lighting Trade Weekly"
    assert intel["Topic"] == "Lighting Trade Weekly: aluminium prices"
    assert intel["Items"] == [
        "Aluminium extrusion prices rose 6% in November as smelters cut output.",
        "New state efficiency rules for commercial fixtures take effect in March.",
        "Survey: 41% of installers report delays on brackets and housings.",
    ]
    assert all(item in found["intel"].more_evidence for item in intel["Items"])


def test_message_matching_no_module_yields_no_record_and_is_processed(tmp_path: Path, schema: SchemaVersion) -> None:
    result = outcome(read(tmp_path, LUNCH), schema)
    assert result.items == [] and result.proposed == 0


def test_an_internal_discount_is_not_a_promotion(tmp_path: Path, schema: SchemaVersion) -> None:
    eml = LUNCH.replace("Anyone up for tacos at noon?", "I need your approval on the 5% discount for Brightline.")
    assert "promotions" not in records(read(tmp_path, eml), schema)


def test_raw_rfc822_text_without_turns_is_structured_by_the_pack(schema: SchemaVersion) -> None:
    """Documents built from raw text (as the eval runner builds them) have no turns and no metadata."""
    text = INVOICE.replace("\n", "\r\n")
    doc = Document(doc_id="d1", tenant_id="eval", source_uri="eval#1", kind="email", text=text)
    (finance,) = outcome(doc, schema).items
    assert finance.value["Amount"] == 4210.0
    assert not any("9,000" in ev.quote for ev in finance.evidence)
    for ev in finance.evidence:
        assert text[ev.char_start : ev.char_end] == ev.quote


def test_record_key_falls_back_to_the_document_without_message_id(tmp_path: Path, schema: SchemaVersion) -> None:
    doc = read(tmp_path, INVOICE.replace("Message-ID: <inv-7781@northwind.test>\n", ""))
    assert records(doc, schema)["finance"].key == f"{doc.doc_id}:finance"


def test_modules_not_in_the_schema_are_not_produced(tmp_path: Path, schema: SchemaVersion) -> None:
    finance_only = schema.model_copy(update={"fields": [f for f in schema.fields if f.name == "finance"]})
    assert set(records(read(tmp_path, PROMO), finance_only)) == set()
    assert set(records(read(tmp_path, INVOICE), finance_only)) == {"finance"}


def test_header_block_parsing_joins_folded_lines() -> None:
    text = "From: a@b.test\r\nTo: x@y.test,\r\n\tz@w.test\r\nSubject: Hi\r\n\r\nFrom: not a header\r\n"
    headers = parse_header_block(text)
    assert headers["to"].text == "x@y.test,\r\n\tz@w.test"
    assert text[headers["to"].start : headers["to"].end] == headers["to"].text
    assert headers["subject"].text == "Hi"
    assert headers["from"].text == "a@b.test"


def test_sentences_join_wrapped_lines_and_split_lists() -> None:
    text = (
        "Quick one: I will send the Brightline retrofit quote by Friday, but I need your\n"
        "approval on the discount first. Thanks.\n\n- one item\n- two item\nDana"
    )
    found = list(sentences(text, 0, len(text)))
    assert [s.text for s in found] == [
        "Quick one: I will send the Brightline retrofit quote by Friday, but I need your\n"
        "approval on the discount first.",
        "Thanks.",
        "one item",
        "two item",
        "Dana",
    ]
    assert all(text[s.start : s.end] == s.text for s in found)


@pytest.mark.parametrize(
    ("signals", "expected"),
    [
        ({"strong": False, "distinct_keywords": 1, "in_subject": False, "key_value": False}, 0.60),
        ({"strong": True, "distinct_keywords": 1, "in_subject": False, "key_value": False}, 0.65),
        ({"strong": True, "distinct_keywords": 3, "in_subject": True, "key_value": True}, 0.80),
    ],
)
def test_confidence_stays_in_the_heuristic_band(signals: dict, expected: float) -> None:
    assert score_confidence(**signals) == expected


def test_every_keyword_phrase_is_found_through_its_needles() -> None:
    """A pattern runs only on clauses holding one of its needles: each phrase must hold its own."""
    from extraction_assets.lib.heuristics.email import _NEEDLES, _RULES  # private: the phrase tables' search
    from extraction_assets.lib.heuristics.email_lexicon import (
        CRM_INTERACTION,
        CRM_PARTY,
        CRM_STRONG,
        FINANCE_STRONG,
        FINANCE_WEAK,
        INTEL_STRONG,
        INTEL_WEAK,
        PROMOTIONS_STRONG,
        PROMOTIONS_WEAK,
    )
    from extraction_assets.lib.heuristics.segments import normalize_for_match

    tables = {
        ("finance", "strong"): FINANCE_STRONG,
        ("finance", "weak"): FINANCE_WEAK,
        ("crm", "strong"): CRM_STRONG,
        ("crm", "weak"): CRM_PARTY + CRM_INTERACTION,
        ("intel", "strong"): INTEL_STRONG,
        ("intel", "weak"): INTEL_WEAK,
        ("promotions", "strong"): (*PROMOTIONS_STRONG, "30% off"),
        ("promotions", "weak"): PROMOTIONS_WEAK,
    }
    for (module, strength), phrases in tables.items():
        keywords = getattr(_RULES[module], strength)
        for phrase in phrases:
            norm = normalize_for_match(f"so, {phrase} today")
            assert keywords.hits(norm, _NEEDLES.present(norm)), (module, strength, phrase)
    # case-insensitive phrases also match letters that fold onto theirs, which hold no needle
    norm = normalize_for_match("ſhop now")
    assert _RULES["promotions"].strong.hits(norm, _NEEDLES.present(norm)) == ["ſhop now"]
