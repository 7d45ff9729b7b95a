"""Each of the seven needs_review rules, fired through the pipeline: the item is needs_review, never a draft."""

from __future__ import annotations

import pytest

from extraction_assets.lib.extraction import ExtractorRun, ground_candidates
from extraction_assets.lib.models import CandidateItem, Document
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import parse_schema_text
from extraction_assets.lib.schemas import SchemaVersion

TEXT = "The vendor will deliver the pallets on Monday. The budget is tight this quarter.\n"
ITEMS_SCHEMA = """---
schema: rules
version: v1
shape: items
heuristic: pulse
fields:
  - name: plain
    confidence_threshold: 0.70
    attributes:
      level: {type: enum, enum_options: [low, high]}
  - name: always_reviewed
    confidence_threshold: 0.50
    review_policy: always
  - name: never_reviewed
    confidence_threshold: 0.90
    review_policy: never
---
"""
FIELDS_SCHEMA = """---
schema: rules
version: v2
shape: fields
heuristic: pulse
fields:
  - name: vendor
    type: string
    required: true
---
"""
EXACT = "The vendor will deliver the pallets on Monday."


def _items(schema: SchemaVersion, *candidates: CandidateItem):
    doc = Document(doc_id="d1", tenant_id="t", source_uri="t/a.txt", kind="text", text=TEXT)
    run = ExtractorRun(candidates=list(candidates), extracted_by="heuristic", extractor_version="test")
    return ground_candidates(doc, scrub_document(doc), schema, run)[0]


def _candidate(item_type: str = "plain", span: str = EXACT, confidence: float = 0.78, **extra) -> CandidateItem:
    return CandidateItem(item_type=item_type, title=item_type, evidence_span=span, confidence=confidence, **extra)


@pytest.mark.parametrize(
    ("rule", "candidate"),
    [
        ("below_threshold", _candidate(confidence=0.62)),
        ("weak_evidence_only", _candidate(span="The vendr will delivr the palets on Mondey.")),
        ("contradiction", _candidate(contradiction="turn 2 says Monday, turn 5 says Friday")),
        ("type_violation", _candidate(value={"level": "catastrophic"})),
        ("denied_by_speaker", _candidate(denial="the speaker denied it in the summary turn")),
        ("policy_always", _candidate(item_type="always_reviewed")),
        ("type_violation", _candidate(item_type="undeclared")),
    ],
)
def test_each_rule_sends_the_item_to_review(rule: str, candidate: CandidateItem) -> None:
    [item] = _items(parse_schema_text(ITEMS_SCHEMA), candidate)
    assert item.status == "needs_review"
    assert [r.split(":")[0] for r in item.review_reasons] == [rule]


def test_required_field_without_evidence_is_a_null_placeholder_in_review() -> None:
    [item] = _items(parse_schema_text(FIELDS_SCHEMA))
    assert (item.status, item.value, item.evidence) == ("needs_review", {"value": None}, [])
    assert [r.split(":")[0] for r in item.review_reasons] == ["below_threshold", "no_evidence"]


def test_a_clean_item_stays_draft_and_never_skips_only_the_policy_rule() -> None:
    schema = parse_schema_text(ITEMS_SCHEMA)
    [clean] = _items(schema, _candidate())
    [never] = _items(schema, _candidate(item_type="never_reviewed", confidence=0.7))
    assert (clean.status, clean.review_reasons) == ("draft", [])
    assert never.status == "needs_review"
    assert [r.split(":")[0] for r in never.review_reasons] == ["below_threshold"]
