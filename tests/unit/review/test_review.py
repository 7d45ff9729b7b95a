import pytest

from extraction_assets.lib.extraction import review_reasons, type_violations
from extraction_assets.lib.models import EvidenceRecord, MatchKind, Strength
from extraction_assets.lib.schemas import AttributeSpec, FieldSpec

MATCH_KIND: dict[Strength, MatchKind] = {"strong": "exact", "medium": "normalized", "weak": "fuzzy"}


def _evidence(strength: Strength) -> EvidenceRecord:
    return EvidenceRecord(
        evidence_id="e",
        item_id="i",
        doc_id="d",
        tenant_id="t",
        schema_version="s@v1",
        char_start=0,
        char_end=3,
        quote="abc",
        turn_id=None,
        match_kind=MATCH_KIND[strength],
        strength=strength,
    )


RISK = FieldSpec(
    name="risk",
    confidence_threshold=0.7,
    attributes={
        "severity": AttributeSpec(type="enum", enum_options=["low", "high"]),
        "due": AttributeSpec(type="date"),
    },
)


def _rules(reasons: list[str]) -> list[str]:
    return [r.split(":", 1)[0] for r in reasons]


def test_confident_grounded_item_stays_draft() -> None:
    assert review_reasons(RISK, 0.75, [_evidence("strong")], {"severity": "high"}) == []


def test_below_threshold() -> None:
    reasons = review_reasons(RISK, 0.65, [_evidence("strong")], {})
    assert _rules(reasons) == ["below_threshold"]
    assert "0.65 < 0.70" in reasons[0]


def test_no_evidence_and_weak_evidence() -> None:
    assert _rules(review_reasons(RISK, 0.8, [], {})) == ["no_evidence"]
    assert _rules(review_reasons(RISK, 0.8, [_evidence("weak")], {})) == ["weak_evidence_only"]
    assert review_reasons(RISK, 0.8, [_evidence("weak"), _evidence("medium")], {}) == []


def test_type_and_enum_violations() -> None:
    reasons = review_reasons(RISK, 0.8, [_evidence("strong")], {"severity": "apocalyptic", "due": "next week"})
    assert _rules(reasons) == ["type_violation", "type_violation"]
    assert type_violations(RISK, {"severity": None, "due": "2026-12-01"}) == []


@pytest.mark.parametrize(
    ("spec", "value", "ok"),
    [
        (FieldSpec(name="n", type="number"), {"value": 3.5}, True),
        (FieldSpec(name="n", type="number"), {"value": "3.5"}, False),
        (FieldSpec(name="n", type="integer"), {"value": True}, False),
        (FieldSpec(name="b", type="boolean"), {"value": False}, True),
        (FieldSpec(name="e", type="enum", enum_options=["a"]), {"value": "b"}, False),
        (FieldSpec(name="s", type="string"), {"value": None}, True),
    ],
)
def test_single_value_fields(spec: FieldSpec, value: dict, ok: bool) -> None:
    assert (type_violations(spec, value) == []) is ok


def test_policy_always_and_never() -> None:
    always = RISK.model_copy(update={"review_policy": "always"})
    assert _rules(review_reasons(always, 0.8, [_evidence("strong")], {})) == ["policy_always"]
    never = RISK.model_copy(update={"review_policy": "never"})
    assert _rules(review_reasons(never, 0.5, [_evidence("strong")], {})) == ["below_threshold"]


def test_contradiction_denial_and_undeclared_type() -> None:
    reasons = review_reasons(RISK, 0.8, [_evidence("strong")], {}, contradiction="turn 3 vs 7", denial="turn 9")
    assert _rules(reasons) == ["contradiction", "denied_by_speaker"]
    assert _rules(review_reasons(None, 0.8, [_evidence("strong")], {})) == ["type_violation"]
