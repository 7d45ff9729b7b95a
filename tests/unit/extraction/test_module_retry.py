"""Seed 001's failure table in classify_then_extract: a failed module call keeps the pack's record and leaves the
document `partial` (extracted again next run); a failed classification fails it with its reason."""

from __future__ import annotations

from pathlib import Path

from extraction_assets.lib.extraction import OrchestratedExtractor, extract_document
from extraction_assets.lib.models import Document, ScrubbedDocument
from extraction_assets.lib.offsets import OffsetMap
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import (
    insert_documents,
    open_warehouse,
    pending_extractions,
    upsert_scrubbed,
    write_extraction_batch,
)
from tests.stub_model import StubModel

EMAIL = load_schema(DEFAULT_PROMPTS, "email@v1")
TEXT = (
    "From: Northwind Billing <billing@northwind.test>\nSubject: Invoice INV-2026-0131\n\n"
    "Please find attached invoice INV-2026-0131. The total amount due is $1,980.00.\n"
)
EVIDENCE = "The total amount due is $1,980.00."


def _document() -> tuple[Document, ScrubbedDocument]:
    doc = Document(
        doc_id=Document.make_id("acme", "email", TEXT, {}),
        tenant_id="acme",
        source_uri="acme/mail/invoice.eml",
        kind="email",
        text=TEXT,
        metadata={"message_id": "<inv-7790@northwind.test>"},
    )
    scrubbed = ScrubbedDocument(
        doc_id=doc.doc_id, tenant_id="acme", text=TEXT, offset_map=OffsetMap(), pii_counts={}, scrubber_version="s1"
    )
    return doc, scrubbed


def test_a_failed_module_keeps_the_pack_record_and_leaves_the_document_partial() -> None:
    doc, scrubbed = _document()
    extractor = OrchestratedExtractor(StubModel(["finance"], EVIDENCE, fail={"modules"}))
    outcome = extract_document(doc, scrubbed, EMAIL, extractor)
    assert outcome.status == "partial" and outcome.outcome == "fallback_used"
    assert [(i.item_type, i.extracted_by) for i in outcome.items] == [("finance", "heuristic")]
    assert "finance" in (outcome.error or "")

    retried = OrchestratedExtractor(StubModel(["finance"], EVIDENCE))
    ok = extract_document(doc, scrubbed, EMAIL, retried)
    assert ok.status == "processed" and [i.extracted_by for i in ok.items] == ["model"]
    assert ok.items[0].item_id == outcome.items[0].item_id  # keyed by Message-ID: the retry replaces the record


def test_a_failed_classification_fails_the_document_with_its_reason() -> None:
    doc, scrubbed = _document()
    stub = StubModel(["finance"], EVIDENCE, fail={"classify"})
    outcome = extract_document(doc, scrubbed, EMAIL, OrchestratedExtractor(stub))
    assert outcome.status == "failed" and outcome.items == [] and stub.calls == ["classify"]
    assert [letter.reason for letter in outcome.dead_letters] == [outcome.error]
    assert "classification failed" in (outcome.error or "")


def test_a_partial_document_is_stored_and_stays_pending(tmp_path: Path) -> None:
    doc, scrubbed = _document()
    stub = StubModel(["finance"], EVIDENCE, {"modules"})
    outcome = extract_document(doc, scrubbed, EMAIL, OrchestratedExtractor(stub))
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        upsert_scrubbed(con, [scrubbed])
        written = write_extraction_batch(con, EMAIL.key, [outcome])
        assert written["items"] == 1
        assert pending_extractions(con, EMAIL.key, ["email"], outcome.extractor_version) == [doc.doc_id]
