"""The generic pack: user-defined schemas extracted offline from the finders their front matter declares."""

from __future__ import annotations

import pytest

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.heuristics.generic import extract_generic, generic_options, score_confidence
from extraction_assets.lib.models import Document, ExtractionInput, ItemRecord
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema, parse_schema_text
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

TICKET = (
    "Hello, I write for Brightline Hospitality LLC. We ordered 12 wall sconces on 2026-11-16 and three arrived "
    "cracked. Please refund $480.00 for the broken units. Our invoice showed $1,200.00 in total.\n"
    "This is urgent. Call me on +1 510 555 0177 or write to jordan.reyes@brightline.test.\n"
)


def schema_text(options: str, fields: str = "") -> str:
    return f"""---
schema: my_schema
version: v1
shape: fields
heuristic: generic
fields:
  - {{name: refund, type: number}}
  - {{name: ordered_on, type: date}}
  - {{name: issue, type: enum, enum_options: [damaged, late_delivery]}}
  - {{name: contact, type: string}}
  - {{name: phone, type: string}}
  - {{name: company, type: string}}
  - {{name: note, type: string}}
{fields}options:
{options}
---
Extract a ticket.
"""


OPTIONS = """  generic:
    fields:
      refund: {find: amount, near: [refund]}
      ordered_on: {find: date, near: [ordered], only_near: true}
      issue: {find: keywords, keywords: {damaged: [cracked, broken], late_delivery: [late, delayed]}}
      contact: {find: email}
      phone: {find: phone}
      company: {find: organisation}
"""


@pytest.fixture
def schema() -> SchemaVersion:
    return parse_schema_text(schema_text(OPTIONS))


def run(text: str, schema: SchemaVersion) -> tuple[Document, dict[str, ItemRecord]]:
    doc = Document(doc_id="d1", tenant_id="acme", source_uri="acme/t.txt", kind="text", text=text)
    result = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    assert result.status == "processed", result.error
    for item in result.items:
        for ev in item.evidence:
            assert text[ev.char_start : ev.char_end] == ev.quote
    return doc, {item.item_type: item for item in result.items}


def test_every_finder_fills_its_field(schema: SchemaVersion) -> None:
    _, items = run(TICKET, schema)
    values = {name: item.value["value"] for name, item in items.items()}
    assert values == {
        "refund": 480.0,  # the mention next to "refund" wins over the invoice total
        "ordered_on": "2026-11-16",
        "issue": "damaged",
        "contact": "[EMAIL_1]",
        "phone": "[PHONE_1]",
        "company": "Brightline Hospitality LLC",
    }
    assert items["refund"].value["currency"] == "USD"
    assert "note" not in items, "a string field without a rule is left to the model"


def test_placeholder_values_ground_on_the_raw_text(schema: SchemaVersion) -> None:
    _, items = run(TICKET, schema)
    assert "jordan.reyes@brightline.test" in {ev.quote for ev in items["contact"].evidence}
    assert "+1 510 555 0177" in {ev.quote for ev in items["phone"].evidence}


def test_near_words_raise_confidence_and_review_follows(schema: SchemaVersion) -> None:
    _, items = run(TICKET, schema)
    assert items["refund"].confidence == score_confidence(near=True, unambiguous=False)
    assert items["company"].confidence == score_confidence(near=False, unambiguous=True)
    assert items["company"].status == "needs_review"  # 0.65 is under the default threshold 0.75
    assert all(0.60 <= item.confidence <= 0.80 for item in items.values())


def test_only_near_drops_other_mentions(schema: SchemaVersion) -> None:
    _, items = run("Delivered on 2026-11-20. Nothing else.", schema)
    assert "ordered_on" not in items


def test_negated_keywords_do_not_count(schema: SchemaVersion) -> None:
    _, items = run("The box was not delayed. It arrived broken.", schema)
    assert items["issue"].value["value"] == "damaged"
    _, items = run("The parcel is not delayed at all.", schema)
    assert "issue" not in items


def test_types_imply_rules_when_none_are_declared() -> None:
    schema = parse_schema_text(schema_text("  {}"))
    options = generic_options(schema)
    assert {name: rule.find for name, rule in options.fields.items()} == {
        "refund": "amount",
        "ordered_on": "date",
        "issue": "keywords",
    }
    _, items = run("Order 7: another late delivery. Refund 20 USD by 2026-12-01.", schema)
    assert items["issue"].value["value"] == "late_delivery"  # enum options are their own keywords
    assert items["refund"].value["value"] == 20.0
    assert items["ordered_on"].value["value"] == "2026-12-01"


def test_when_gate_leaves_other_documents_alone() -> None:
    gated = OPTIONS.replace("  generic:\n", "  generic:\n    when: [refund, khiếu nại]\n")
    schema = parse_schema_text(schema_text(gated))
    doc = ExtractionInput(doc_id="d", tenant_id="t", kind="text", text="Invoice $50.00 paid, delivered broken.")
    assert extract_generic(doc, schema) == []
    doc = doc.model_copy(update={"text": "Khách khiếu nại: hàng bị vỡ, broken."})
    assert [c.item_type for c in extract_generic(doc, schema)] == ["issue"]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("  generic:\n    fields:\n      refund: {find: amout}", "options.generic"),
        ("  generic:\n    fields:\n      nope: {find: date}", "does not have: ['nope']"),
        ("  generic:\n    field: {}", "options.generic"),
    ],
)
def test_bad_declarations_fail_the_document_with_a_clear_reason(options: str, message: str) -> None:
    schema = parse_schema_text(schema_text(options))
    doc = Document(doc_id="d1", tenant_id="acme", source_uri="acme/t.txt", kind="text", text=TICKET)
    result = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    assert result.status == "failed"
    assert message in (result.error or "")
    assert "my_schema@v1" in (result.error or "")


def test_records_shape_is_refused() -> None:
    schema = parse_schema_text(schema_text(OPTIONS).replace("shape: fields", "shape: records"))
    doc = ExtractionInput(doc_id="d", tenant_id="t", kind="text", text=TICKET)
    with pytest.raises(ValueError, match="not records"):
        extract_generic(doc, schema)


def test_items_shape_keeps_every_mention() -> None:
    schema = parse_schema_text(schema_text(OPTIONS).replace("shape: fields", "shape: items"))
    doc = Document(doc_id="d1", tenant_id="acme", source_uri="acme/t.txt", kind="text", text=TICKET)
    result = extract_document(doc, scrub_document(doc), schema, HeuristicExtractor())
    refunds = sorted(i.value["value"] for i in result.items if i.item_type == "refund")
    assert refunds == [480.0, 1200.0]


def test_the_bundled_example_schema_reads_a_vietnamese_complaint() -> None:
    schema = load_schema(DEFAULT_PROMPTS, "support_ticket@v1")
    text = (
        "Khách: Công ty TNHH Mộc Coffee, vy.tran@mocoffee.test.\n"
        "Đơn đặt hàng ngày 2026-11-25 bị giao nhầm.\n"
        "Chị Vy yêu cầu hoàn tiền 2.100.000 VND, cần xử lý gấp.\n"
    )
    _, items = run(text, schema)
    assert {name: item.value["value"] for name, item in items.items()} == {
        "company": "Công ty TNHH Mộc Coffee",
        "customer_email": "[EMAIL_1]",
        "issue": "wrong_item",
        "order_date": "2026-11-25",
        "refund_amount": 2_100_000.0,
        "urgency": "high",
    }
