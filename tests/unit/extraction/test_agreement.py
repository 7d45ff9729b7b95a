"""Confidence from agreement between the heuristic pack and the model."""

from __future__ import annotations

from extraction_assets.lib.extraction import with_agreement
from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.schemas import FieldSpec, SchemaVersion

FIELDS = SchemaVersion(
    schema="t", version="v1", heuristic="generic", shape="fields", fields=[FieldSpec(name="total", type="string")]
)


TEXT = "Cash 9.90\nTOTAL 12.50\nTotal: 12.50\n"


def _c(value: str, span: str, by: str, confidence: float) -> CandidateItem:
    return CandidateItem(
        item_type="total",
        title=value,
        evidence_span=span,
        confidence=confidence,
        value={"value": value},
        extracted_by=by,
    )


def test_agreement_puts_the_model_value_at_the_top_of_the_model_band_with_both_quotes() -> None:
    h, m = _c("12.50", "TOTAL 12.50", "heuristic", 0.7), _c("12.50 ", "Total: 12.50", "model", 0.86)
    [settled] = with_agreement(FIELDS, [h], [h], [m], TEXT)
    assert settled.extracted_by == "model"
    assert settled.confidence == FIELDS.model_band.high
    assert settled.evidence_span == "Total: 12.50" and settled.more_evidence == ["TOTAL 12.50"]
    assert settled.contradiction is None


def test_agreement_keeps_the_attributes_of_the_packs_value_the_model_cannot_answer() -> None:
    h = _c("12.50", "TOTAL 12.50", "heuristic", 0.7)
    h = h.model_copy(update={"value": {"value": "12.50", "as_printed": "12.50", "currency": "MYR"}})
    m = _c("12.50", "Total: 12.50", "model", 0.86)
    [settled] = with_agreement(FIELDS, [h], [h], [m], TEXT)
    assert settled.value == {"value": "12.50", "as_printed": "12.50", "currency": "MYR"}
    assert settled.confidence == FIELDS.model_band.high


def test_disagreement_goes_to_review_with_both_values_and_their_evidence() -> None:
    h, m = _c("12.50", "TOTAL 12.50", "heuristic", 0.7), _c("9.90", "Cash 9.90", "model", 0.88)
    [settled] = with_agreement(FIELDS, [h], [h], [m], TEXT)
    assert settled.value == {"value": "12.50"}, "the value the mode chose stays"
    assert settled.contradiction and "'12.50'" in settled.contradiction and "'9.90'" in settled.contradiction
    assert settled.more_evidence == ["Cash 9.90"]
    [by_model] = with_agreement(FIELDS, [m], [h], [m], TEXT)
    assert by_model.more_evidence == ["TOTAL 12.50"] and by_model.confidence == 0.88


def test_a_field_only_one_side_answered_is_unchanged() -> None:
    m = _c("9.90", "Cash 9.90", "model", 0.88)
    assert with_agreement(FIELDS, [m], [], [m], TEXT) == [m]
    assert with_agreement(FIELDS.model_copy(update={"shape": "items"}), [m], [m], [m], TEXT) == [m]


def test_only_grounded_answers_count_as_a_second_opinion() -> None:
    h = _c("12.50", "TOTAL 12.50", "heuristic", 0.7)
    invented_same = _c("12.50", "Amount due twelve fifty", "model", 0.88)
    [agreed] = with_agreement(FIELDS, [invented_same], [h], [invented_same], TEXT)
    assert agreed.confidence == FIELDS.model_band.high and agreed.value == {"value": "12.50"}
    assert agreed.evidence_span == "TOTAL 12.50", "the model's invented quote is not the evidence"
    assert "Amount due twelve fifty" not in agreed.more_evidence
    invented_other = _c("99.00", "Grand total 99.00", "model", 0.88)
    [kept] = with_agreement(FIELDS, [invented_other], [h], [invented_other], TEXT)
    assert kept.value == {"value": "12.50"} and kept.extracted_by == "heuristic" and kept.contradiction is None
    ungrounded_pack = _c("12.50", "Subtotal 12.50", "heuristic", 0.7)
    m = _c("12.50", "Total: 12.50", "model", 0.86)
    assert with_agreement(FIELDS, [m], [ungrounded_pack], [m], TEXT) == [m], "an ungrounded pack value lifts nothing"
