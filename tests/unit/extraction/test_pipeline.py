from datetime import date
from typing import Any

from extraction_assets.lib.extraction import (
    ExtractorRun,
    HeuristicExtractor,
    extract_document,
    extraction_input,
    item_id_for,
)
from extraction_assets.lib.extraction.extractors import ExtractedBy
from extraction_assets.lib.llm.budget import Prices
from extraction_assets.lib.models import CandidateItem, Document, ExtractionInput, Turn
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

SCHEMA = load_schema(DEFAULT_PROMPTS, "pulse@v1")


def _pulse(answer: str, question: str = "What will you do this week?") -> Document:
    text = f"{question}\n{answer}\n\n"
    start = len(question) + 1
    return Document(
        doc_id=Document.make_id("acme", "pulse", text),
        tenant_id="acme",
        source_uri="acme/p.json",
        kind="pulse",
        text=text,
        turns=[Turn(turn_id="a1", start=start, end=start + len(answer), speaker="Dana", question=question)],
        doc_date=date(2026, 11, 25),
    )


class _Scripted:
    """An extractor that proposes exactly the given candidates, as a model might."""

    concurrency = 1
    model: str | None = "m"
    prices: Prices | None = None

    def __init__(self, candidates: list[CandidateItem], extracted_by: ExtractedBy = "model") -> None:
        self.candidates = candidates
        self.extracted_by: ExtractedBy = extracted_by

    def version(self, schema: SchemaVersion) -> str:
        return "scripted-v1"

    def preload_cache(self, entries: dict[str, dict[str, Any]]) -> None:
        return None

    def take_cache_entries(self) -> list[dict[str, Any]]:
        return []

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        return ExtractorRun(
            candidates=self.candidates, extracted_by=self.extracted_by, extractor_version="scripted-v1", model="m"
        )


def test_evidence_offsets_point_into_raw_text_even_across_masked_pii() -> None:
    doc = _pulse("Email dana@acme.com first. I will send the quote to bob@acme.com by Friday.")
    scrubbed = scrub_document(doc)
    assert "dana@acme.com" not in scrubbed.text and "[EMAIL_2]" in scrubbed.text
    outcome = extract_document(doc, scrubbed, SCHEMA, HeuristicExtractor())
    assert outcome.status == "processed"
    commitment = next(i for i in outcome.items if i.item_type == "commitment")
    ev = commitment.evidence[0]
    assert doc.text[ev.char_start : ev.char_end] == ev.quote
    assert "bob@acme.com" in ev.quote  # the raw quote, while the extractor saw only the placeholder
    assert "[EMAIL_" in commitment.title
    assert ev.turn_id == "a1"
    assert commitment.value["due_date"] == "2026-11-27"
    assert 0.6 <= commitment.confidence <= 0.8


def test_turns_are_rebased_onto_scrubbed_text() -> None:
    doc = _pulse("Call +1 415 555 0132 today; we will ship.")
    scrubbed = scrub_document(doc)
    rebased = extraction_input(doc, scrubbed).turns[0]
    assert scrubbed.text[rebased.start : rebased.end] == "Call [PHONE_1] today; we will ship."


def test_ungrounded_candidates_are_dropped_and_dead_lettered() -> None:
    doc = _pulse("We will ship the order on Monday.")
    candidates = [
        CandidateItem(
            item_type="commitment", title="ship", evidence_span="We will ship the order on Monday.", confidence=0.99
        ),
        CandidateItem(
            item_type="risk", title="made up", evidence_span="The factory burned down overnight.", confidence=0.9
        ),
    ]
    outcome = extract_document(doc, scrub_document(doc), SCHEMA, _Scripted(candidates))
    assert [i.item_type for i in outcome.items] == ["commitment"]
    assert outcome.items[0].confidence == 0.9  # clamped into the model band
    assert outcome.dropped == 1
    assert [d.stage for d in outcome.dead_letters] == ["grounding"]
    assert outcome.dead_letters[0].detail["evidence_span"] == "The factory burned down overnight."


def test_cap_keeps_the_most_confident_items_in_text_order() -> None:
    sentences = [f"We will finish task number {n}." for n in range(15)]
    doc = _pulse(" ".join(sentences))
    candidates = [
        CandidateItem(item_type="commitment", title=s, evidence_span=s, confidence=0.6 + n / 100)
        for n, s in enumerate(sentences)
    ]
    outcome = extract_document(doc, scrub_document(doc), SCHEMA, _Scripted(candidates, "heuristic"))
    assert len(outcome.items) == 10 and outcome.capped == 5
    kept = [i.title for i in outcome.items]
    assert kept == sentences[5:]
    starts = [i.evidence[0].char_start for i in outcome.items]
    assert starts == sorted(starts)


def test_item_ids_are_deterministic_and_spelling_insensitive() -> None:
    assert item_id_for("d", "pulse@v1", "risk", "Supplier  LATE") == item_id_for(
        "d", "pulse@v1", "risk", "supplier late"
    )
    assert item_id_for("d", "pulse@v1", "risk", "x") != item_id_for("d", "pulse@v2", "risk", "x")
    doc = _pulse("The supplier delay is a risk for the launch.")
    first = extract_document(doc, scrub_document(doc), SCHEMA, HeuristicExtractor())
    second = extract_document(doc, scrub_document(doc), SCHEMA, HeuristicExtractor())
    assert first == second and first.items


def test_extractor_crash_marks_the_document_failed() -> None:
    class Broken(_Scripted):
        def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
            raise ValueError("bad payload")

    doc = _pulse("We will ship.")
    outcome = extract_document(doc, scrub_document(doc), SCHEMA, Broken([]))
    assert outcome.status == "failed"
    assert outcome.items == []
    assert outcome.error == "ValueError: bad payload"
    assert outcome.dead_letters[0].stage == "extract"


def test_low_confidence_item_needs_review_with_reason() -> None:
    doc = _pulse("Maybe a delay.", question="Anything else?")
    outcome = extract_document(doc, scrub_document(doc), SCHEMA, HeuristicExtractor())
    risk = next(i for i in outcome.items if i.item_type == "risk")
    assert risk.status == "needs_review"
    assert risk.review_reasons[0].startswith("below_threshold")


FIELDS = SchemaVersion.model_validate(
    {
        "schema": "receipt",
        "version": "v9",
        "shape": "fields",
        "heuristic": "pulse",
        "fields": [
            {"name": "total", "type": "number", "required": True, "confidence_threshold": 0.6},
            {"name": "company", "type": "string", "required": True},
            {"name": "note", "type": "string"},
        ],
    }
)


def _text_doc(text: str) -> Document:
    return Document(
        doc_id=Document.make_id("t", "text", text), tenant_id="t", source_uri="t/r.txt", kind="text", text=text
    )


def test_fields_shape_keeps_best_value_per_field_and_placeholders_for_required_ones() -> None:
    doc = _text_doc("TOTAL 12.50\nSubtotal 10.00\nThank you")
    candidates = [
        CandidateItem(
            item_type="total",
            title="total 10.00",
            evidence_span="Subtotal 10.00",
            confidence=0.6,
            value={"value": 10.0},
        ),
        CandidateItem(
            item_type="total", title="total 12.50", evidence_span="TOTAL 12.50", confidence=0.75, value={"value": 12.5}
        ),
    ]
    outcome = extract_document(doc, scrub_document(doc), FIELDS, _Scripted(candidates, "heuristic"))
    by_field = {i.item_type: i for i in outcome.items}
    assert set(by_field) == {"total", "company"}  # note is optional and absent
    assert by_field["total"].value == {"value": 12.5}
    assert by_field["total"].status == "draft"
    company = by_field["company"]
    assert company.value == {"value": None} and company.evidence == []
    assert company.status == "needs_review"
    assert [r.split(":")[0] for r in company.review_reasons] == ["below_threshold", "no_evidence"]
    # the field, not the quote, is the identity: a re-worded value updates the same item
    again = extract_document(
        doc,
        scrub_document(doc),
        FIELDS,
        _Scripted([candidates[0].model_copy(update={"confidence": 0.8})], "heuristic"),
    )
    assert {i.item_type: i.item_id for i in again.items}["total"] == by_field["total"].item_id


def test_more_evidence_contradiction_and_record_keys() -> None:
    doc = _text_doc("Alice: I love the app. Bob: we stopped using it. Alice: honestly I never open it.")
    candidate = CandidateItem(
        item_type="risk",
        title="usage unclear",
        evidence_span="I love the app.",
        more_evidence=["honestly I never open it.", "not in the text at all"],
        confidence=0.7,
        key="msg-1:crm",
        contradiction="Alice says she loves it and that she never opens it",
    )
    outcome = extract_document(doc, scrub_document(doc), SCHEMA, _Scripted([candidate], "heuristic"))
    item = outcome.items[0]
    assert [e.quote for e in item.evidence] == ["I love the app.", "honestly I never open it."]
    assert any(r.startswith("contradiction: Alice") for r in item.review_reasons)
    other = _text_doc("Forwarded again. " + doc.text)
    again = extract_document(other, scrub_document(other), SCHEMA, _Scripted([candidate], "heuristic"))
    assert again.items[0].item_id == item.item_id  # keyed by record, not by document


def test_turns_the_scrub_did_not_move_are_passed_on_as_they_are() -> None:
    text = "Lan: we ship on Monday\nNam: call me at dana@acme.test\nLan: done"
    turns = [
        Turn(turn_id="t1", start=0, end=22, speaker="Lan"),
        Turn(turn_id="t2", start=23, end=53, speaker="Nam"),
        Turn(turn_id="t3", start=54, end=63, speaker="Lan"),
    ]
    doc = Document(doc_id="d", tenant_id="t", source_uri="t/x.json", kind="transcript", text=text, turns=turns)
    seen = extraction_input(doc, scrub_document(doc))
    assert seen.turns[0] is turns[0]  # before the masked address: not copied
    assert [seen.text[t.start : t.end] for t in seen.turns] == [
        "Lan: we ship on Monday",
        "Nam: call me at [EMAIL_1]",
        "Lan: done",
    ]
