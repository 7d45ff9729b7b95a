"""Seed 003's routing (auto_approve / manual_review / deep_analysis) from a document's stored items."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from extraction_assets.lib.extraction import route_document
from extraction_assets.lib.models import (
    EvidenceRecord,
    ExtractionOutcome,
    ExtractionStatus,
    ItemRecord,
    RoutingDecision,
)
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import open_warehouse, write_extraction_batch

TEXT_FIELDS = ("contract_type", "party_a", "party_b", "total_amount", "currency", "start_date", "end_date")


@pytest.fixture(scope="module")
def contract() -> SchemaVersion:
    return load_schema(DEFAULT_PROMPTS, "contract@v1")


def _with_policy(schema: SchemaVersion, **policy: Any) -> SchemaVersion:
    routing = {**schema.options["routing"], **policy}
    return schema.model_copy(update={"options": {**schema.options, "routing": routing}})


def _item(field: str, value: object = "x", confidence: float = 0.8, grounded: bool = True) -> ItemRecord:
    evidence = [
        EvidenceRecord(
            evidence_id=f"e-{field}",
            item_id=f"i-{field}",
            doc_id="d",
            tenant_id="t",
            schema_version="contract@v1",
            char_start=0,
            char_end=1,
            quote="x",
            turn_id=None,
            match_kind="exact",
            strength="strong",
        )
    ]
    return ItemRecord(
        item_id=f"i-{field}",
        doc_id="d",
        tenant_id="t",
        schema_version="contract@v1",
        item_type=field,
        value={"value": value},
        title=field,
        confidence=confidence,
        status="draft",
        extracted_by="heuristic",
        extractor_version="v",
        model=None,
        evidence=evidence if grounded else [],
    )


def _complete(*extra: ItemRecord) -> list[ItemRecord]:
    return [_item(name) for name in TEXT_FIELDS] + list(extra)


def test_a_flagged_clause_sends_a_confident_contract_to_deep_analysis(contract: SchemaVersion) -> None:
    decision = route_document(contract, _complete(_item("penalty_clause", True)))
    assert decision is not None
    assert decision.outcome == "deep_analysis"
    assert decision.flags == ["penalty_clause"]
    assert decision.weighted_confidence == pytest.approx(0.8)


def test_absent_clause_flags_do_not_lower_the_confidence(contract: SchemaVersion) -> None:
    decision = route_document(_with_policy(contract, auto_approve=True), _complete())
    assert decision is not None
    assert decision.weighted_confidence == pytest.approx(0.8)
    assert decision.outcome == "auto_approve"


def test_auto_approve_off_keeps_a_person_in_the_loop(contract: SchemaVersion) -> None:
    decision = route_document(contract, _complete(_item("termination_clause", True)))
    assert decision is not None
    assert decision.outcome == "manual_review"
    assert "auto_approve is off" in decision.reasons[0]


def test_a_missing_weighted_field_sends_the_contract_to_manual_review(contract: SchemaVersion) -> None:
    items = [i for i in _complete(_item("arbitration_clause", True)) if i.item_type != "party_b"]
    decision = route_document(contract, items)
    assert decision is not None
    assert decision.outcome == "manual_review"  # low confidence beats the arbitration flag
    assert decision.missing_fields == ["party_b"]
    # counted weight: seven text fields (0.90) + the arbitration flag found (0.05); party_b (0.15) scores 0
    assert decision.weighted_confidence == pytest.approx(0.8 * 0.80 / 0.95, abs=1e-4)
    assert decision.reasons[:2] == ["weighted confidence 0.67 < 0.75", "not found: party_b"]
    assert decision.flags == ["arbitration_clause"]


def test_ungrounded_items_and_guesses_weigh_what_they_are(contract: SchemaVersion) -> None:
    items = [_item(n) for n in TEXT_FIELDS if n != "contract_type"]
    items += [_item("contract_type", grounded=False)]
    decision = route_document(contract, items)
    assert decision is not None and "contract_type" in decision.missing_fields
    guessed = route_document(contract, [*items[:-1], _item("contract_type", confidence=0.74)])
    assert guessed is not None and guessed.weighted_confidence < 0.8


def test_no_grounded_value_means_nothing_to_route(contract: SchemaVersion) -> None:
    assert route_document(contract, []) is None
    assert route_document(contract, [_item("party_a", grounded=False)]) is None


def test_a_schema_without_a_policy_is_not_routed(contract: SchemaVersion) -> None:
    pulse = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    assert route_document(pulse, _complete()) is None


@pytest.mark.parametrize(
    ("policy", "message"),
    [({"review_below": 2}, "options.routing is invalid"), ({"deep_analysis_flags": ["fines"]}, "not fields")],
)
def test_a_malformed_policy_names_the_schema(contract: SchemaVersion, policy: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message) as raised:
        route_document(_with_policy(contract, **policy), _complete())
    assert "contract@v1" in str(raised.value)


def test_routing_rows_are_replaced_on_re_extraction_and_kept_when_it_fails(tmp_path: Path) -> None:
    def outcome(status: ExtractionStatus, decision: RoutingDecision | None) -> ExtractionOutcome:
        return ExtractionOutcome(
            doc_id="d",
            tenant_id="t",
            schema_version="contract@v1",
            status=status,
            extractor_version="v",
            scrubber_version="s",
            routing=decision,
        )

    deep = RoutingDecision(outcome="deep_analysis", weighted_confidence=0.8, flags=["penalty_clause"])
    manual = RoutingDecision(outcome="manual_review", weighted_confidence=0.6, missing_fields=["party_b"])
    with open_warehouse(tmp_path / "w.duckdb") as con:

        def rows() -> list[tuple]:
            return con.execute("SELECT doc_id, outcome, flags, missing_fields FROM document_routing").fetchall()

        assert write_extraction_batch(con, "contract@v1", [outcome("processed", deep)])["routed"] == 1
        assert rows() == [("d", "deep_analysis", '["penalty_clause"]', "[]")]
        write_extraction_batch(con, "contract@v1", [outcome("failed", None)])
        assert rows() == [("d", "deep_analysis", '["penalty_clause"]', "[]")]  # a failed run keeps the last decision
        write_extraction_batch(con, "contract@v1", [outcome("processed", manual)])
        assert rows() == [("d", "manual_review", "[]", '["party_b"]')]
        write_extraction_batch(con, "contract@v1", [outcome("processed", None)])
        assert rows() == []  # no longer recognised as a contract: no stale decision left behind
