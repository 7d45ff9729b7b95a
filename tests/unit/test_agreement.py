"""Confidence from agreement between the heuristic pack and the model."""

from __future__ import annotations

from extraction_assets.lib.extraction import with_agreement
from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.schemas import FieldSpec, SchemaVersion

FIELDS = SchemaVersion(
    schema="t", version="v1", heuristic="generic", shape="fields", fields=[FieldSpec(name="total", type="string")]
)


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
    [settled] = with_agreement(FIELDS, [h], [h], [m])
    assert settled.extracted_by == "model"
    assert settled.confidence == FIELDS.model_band.high
    assert settled.evidence_span == "Total: 12.50" and settled.more_evidence == ["TOTAL 12.50"]
    assert settled.contradiction is None


def test_disagreement_goes_to_review_with_both_values_and_their_evidence() -> None:
    h, m = _c("12.50", "TOTAL 12.50", "heuristic", 0.7), _c("9.90", "Cash 9.90", "model", 0.88)
    [settled] = with_agreement(FIELDS, [h], [h], [m])
    assert settled.value == {"value": "12.50"}, "the value the mode chose stays"
    assert settled.contradiction and "'12.50'" in settled.contradiction and "'9.90'" in settled.contradiction
    assert settled.more_evidence == ["Cash 9.90"]
    [by_model] = with_agreement(FIELDS, [m], [h], [m])
    assert by_model.more_evidence == ["TOTAL 12.50"] and by_model.confidence == 0.88


def test_a_field_only_one_side_answered_is_unchanged() -> None:
    m = _c("9.90", "Cash 9.90", "model", 0.88)
    assert with_agreement(FIELDS, [m], [], [m]) == [m]
    assert with_agreement(FIELDS.model_copy(update={"shape": "items"}), [m], [m], [m]) == [m]
