"""Scoring one document in each mode, on hand-made gold with known answers."""

from __future__ import annotations

from extraction_assets.lib.evaluation import GoldRecord, Prediction, parse_registry, score_document

REGISTRY = parse_registry(
    """
datasets:
  receipts:
    path: r.jsonl
    schema_version: receipt@v1
    fields:
      total: {gold: total.value, spans: total.spans, compare: amount}
      company: {gold: company.value, compare: normalized}
      date: {gold: date.value, compare: date, day_first: true}
      parties: {schema_fields: [party_a, party_b], gold: parties, compare: set, split: ";"}
      penalty: {schema_fields: [penalty_clause], gold: penalty, compare: boolean}
      law_clause: {schema_fields: [governing_law], gold: law.value, spans: law.spans, compare: span_overlap}
  meetings:
    path: m.jsonl
    schema_version: pulse@v1
    mode: evidence_turns
    items: items
    item_spans: evidence
    fields:
      decision: {select: {kinds: decision}}
  pii:
    path: p.jsonl
    schema_version: pii@v1
    mode: entity_spans
    items: entities
    fields:
      EMAIL: {select: {type: EMAIL_ADDRESS}}
"""
)


def _pred(
    field: str, value: object = None, spans: list[tuple[int, int]] | None = None, conf: float = 0.7
) -> Prediction:
    return Prediction(field=field, value={"value": value}, quote=str(value), confidence=conf, spans=spans or [(0, 1)])


def test_field_mode_counts_each_field() -> None:
    record = GoldRecord(
        id="r1",
        text="x" * 100,
        gold={
            "total": {"value": "9.00", "spans": [{"start": 50, "end": 54}]},
            "company": {"value": "ACME SDN BHD"},
            "date": {"value": "05/10/2018"},
            "parties": 'Acme Corp ("Acme"); Beta LLC ("Buyer")',
            "penalty": "No",
            "law": {"value": "Texas", "spans": [{"start": 10, "end": 40}]},
        },
    )
    predictions = [
        _pred("total", "RM9.00", [(50, 54)], 0.8),  # right
        _pred("company", "ACME TRADING", conf=0.75),  # wrong: a false positive and a false negative
        _pred("party_a", "Acme Corp"),  # right member
        _pred("party_b", "Gamma Inc"),  # wrong member
        _pred("penalty_clause", True),  # said yes, gold says no
        _pred("governing_law", "laws of Texas", [(30, 60)]),  # evidence overlaps the gold clause
    ]  # no date predicted: a false negative
    score = score_document(REGISTRY.entry("receipts"), record, predictions)
    counts = {k: (c.tp, c.fp, c.fn) for k, c in score.counts.items()}
    assert counts == {
        "total": (1, 0, 0),
        "company": (0, 1, 1),
        "date": (0, 0, 1),
        "parties": (1, 1, 1),
        "penalty": (0, 1, 0),
        "law_clause": (1, 0, 0),
    }
    assert sorted(score.calibration) == sorted(
        [(0.8, True), (0.75, False), (0.7, True), (0.7, False), (0.7, False), (0.7, True)]
    )
    assert {(m.label, m.start, m.end) for m in score.gold_marks} == {("total", 50, 54), ("law_clause", 10, 40)}
    total_mark = next(m for m in score.predicted_marks if m.label == "total")
    assert total_mark.correct is True and "RM9.00" in total_mark.detail


def test_a_prediction_without_gold_is_a_false_positive_and_silence_is_fine() -> None:
    record = GoldRecord(id="r2", text="abc", gold={"total": {"value": ""}, "penalty": "Yes"})
    score = score_document(REGISTRY.entry("receipts"), record, [_pred("total", "5.00")])
    assert (score.counts["total"].tp, score.counts["total"].fp, score.counts["total"].fn) == (0, 1, 0)
    assert (score.counts["company"].tp, score.counts["company"].fp, score.counts["company"].fn) == (0, 0, 0)
    assert score.counts["penalty"].fn == 1  # a "yes" nobody predicted
    no_answer = score_document(REGISTRY.entry("receipts"), record, [_pred("penalty_clause", "no")])
    assert (no_answer.counts["penalty"].fp, no_answer.counts["penalty"].fn) == (0, 1)


def test_evidence_mode_counts_recall_only() -> None:
    text = "\n".join(f"S{i}: line {i}" for i in range(10))
    line = [text.index(f"S{i}:") for i in range(10)]
    record = GoldRecord(
        id="m1",
        text=text,
        gold={
            "items": [
                {"kinds": ["decision"], "evidence": [{"start": line[2], "end": line[4]}]},
                {"kinds": ["decision"], "evidence": [{"start": line[7], "end": line[8]}]},
                {"kinds": [], "evidence": [{"start": line[0], "end": line[9]}]},  # not a decision: ignored
            ]
        },
    )
    predictions = [
        _pred("decision", "x", [(line[3], line[3] + 5)]),  # inside the first gold item's turns
        _pred("decision", "y", [(line[5], line[5] + 5)]),  # outside every decision: not judged
        _pred("risk", "z", [(line[7], line[7] + 5)]),  # a risk does not find a decision
    ]
    score = score_document(REGISTRY.entry("meetings"), record, predictions)
    decision = score.counts["decision"]
    assert (decision.tp, decision.fp, decision.fn) == (1, None, 1)
    assert [m.correct for m in score.predicted_marks] == [True, None]
    assert score.calibration == []


def test_entity_mode_matches_spans_one_to_one() -> None:
    text = "mail a@b.co or c@d.org now"
    first, second = text.index("a@b.co"), text.index("c@d.org")
    record = GoldRecord(
        id="p1",
        text=text,
        gold={
            "entities": [
                {"type": "EMAIL_ADDRESS", "start": first, "end": first + 6},
                {"type": "EMAIL_ADDRESS", "start": second, "end": second + 7},
                {"type": "PERSON", "start": 0, "end": 4},
            ]
        },
    )
    predictions = [
        Prediction(field="EMAIL", confidence=0.9, spans=[(first, first + 6)]),
        Prediction(field="EMAIL", confidence=0.9, spans=[(0, 4)]),  # wrong place
        Prediction(field="PHONE", confidence=0.9, spans=[(second, second + 7)]),  # a kind not scored here
    ]
    score = score_document(REGISTRY.entry("pii"), record, predictions)
    email = score.counts["EMAIL"]
    assert (email.tp, email.fp, email.fn) == (1, 1, 1)
    assert score.calibration == [(0.9, True), (0.9, False)]
    assert score.outcomes[0].gold == ["a@b.co", "c@d.org"]
