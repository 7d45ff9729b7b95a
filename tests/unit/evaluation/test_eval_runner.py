"""The eval runner on tiny hand-made gold files, through the production scrub-extract-ground path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from extraction_assets.lib.evaluation import (
    MICRO,
    EvalConfigError,
    GoldRecord,
    gold_document,
    line_turns,
    parse_registry,
    run_eval,
)
from extraction_assets.lib.evaluation.report import placement_rows
from extraction_assets.lib.evaluation.report import review_figures as eval_figures
from extraction_assets.lib.extraction import ExtractorRun, HeuristicExtractor
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import DEFAULT_PROMPTS

MEETING = (
    "Ann: Good morning everyone.\n"
    "Bob: The supplier delay is a serious risk for the launch.\n"
    "Ann: Please decide whether we approve the budget by Friday.\n"
    "Bob: Lunch was nice, write to bob@example.com.\n"
)


def _line_span(text: str, fragment: str) -> dict[str, int]:
    start = text.index(fragment)
    return {"start": start, "end": text.index("\n", start)}


def _write(path: Path, records: list[Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _registry(path: Path, body: str):
    return parse_registry(f"datasets:\n  meetings:\n    path: {path}\n{body}")


EVIDENCE = """    schema_version: pulse@v1
    document_kind: transcript
    turns: lines
    mode: evidence_turns
    items: items
    item_spans: evidence
    fields:
      decision: {select: {kinds: decision}}
      risk: {select: {kinds: problem_or_risk}}
"""


@pytest.fixture
def pulse() -> SchemaVersion:
    """pulse@v1 opted in to a meeting's explicit signals (by default the pack abstains on meetings): items to score."""
    schema = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    return schema.model_copy(update={"options": {**schema.options, "meeting_max_items": 4}})


@pytest.fixture
def meetings(tmp_path: Path) -> Path:
    gold = {
        "items": [
            {"kinds": ["decision"], "evidence": [_line_span(MEETING, "Ann: Please decide")]},
            {"kinds": ["decision"], "evidence": [_line_span(MEETING, "Bob: Lunch")]},
            {"kinds": ["problem_or_risk"], "evidence": [_line_span(MEETING, "Bob: The supplier")]},
        ]
    }
    return _write(tmp_path / "meetings" / "dev.jsonl", [{"id": "m1", "text": MEETING, "gold": gold}, "{broken"])


def test_line_turns_split_speaker_and_content() -> None:
    turns = line_turns("Ann: hi there\n\nBob: ok\nno speaker line")
    assert [(t.turn_id, t.speaker) for t in turns] == [("t0", "Ann"), ("t2", "Bob"), ("t3", None)]
    text = "Ann: hi there\n\nBob: ok\nno speaker line"
    assert [text[t.start : t.end] for t in turns] == ["hi there", "ok", "no speaker line"]


def test_evidence_turn_recall_through_the_real_extractor(meetings: Path, pulse: SchemaVersion) -> None:
    entry = _registry(meetings, EVIDENCE).entry("meetings")
    seen: list[tuple[int, int]] = []
    result = run_eval(entry, meetings, pulse, HeuristicExtractor(), on_progress=lambda d, t: seen.append((d, t)))
    scores = {f.field: f for f in result.fields}
    assert (scores["decision"].tp, scores["decision"].fn, scores["decision"].precision) == (1, 1, None)
    assert (scores["risk"].tp, scores["risk"].fn) == (1, 0)
    assert scores[MICRO].recall == pytest.approx(2 / 3, abs=1e-3)
    assert result.documents == 1 and result.records_invalid == 1
    assert any("line 2" in m for m in result.messages)
    assert result.items_stored == result.items_proposed > 0
    assert result.grounding_rate == 1.0 and result.hallucination_rate == 0.0
    assert result.calibration.ece is None  # not defined on non-exhaustive gold
    placement = result.placement
    assert placement is not None and placement.pooled is not None
    assert [d.items for d in placement.by_document] == [placement.pooled.items]  # one document, pooled over fields
    assert placement.by_document[0].hits == placement.pooled.hits > 0
    assert placement.pooled.lift_low is not None and placement.pooled.lift_high is not None
    assert placement.pooled.lift_low <= (placement.pooled.lift or 0) <= placement.pooled.lift_high
    pooled_row = placement_rows(result)[-1]
    assert (
        pooled_row[0] == "pooled"
        and pooled_row[-1] == f"{placement.pooled.lift_low:.2f} to {placement.pooled.lift_high:.2f}"
    )
    figures = eval_figures(result)
    assert (figures["lift_pooled_low"], figures["lift_pooled_high"]) == (
        placement.pooled.lift_low,
        placement.pooled.lift_high,
    )
    assert result.notes and "Precision is not defined" in result.notes[0]
    assert result.extractor == HeuristicExtractor().version(pulse)
    assert seen[-1] == (2, 2)
    assert result.samples[0].record_id == "m1" and result.samples[0].gold_marks
    summary = result.summary()
    assert set(summary["fields"]) == {"decision", "risk"}
    assert {"dataset", "schema_version", "extractor", "documents", "grounding_rate", "hallucination_rate"} <= set(
        summary
    )


def test_field_mode_on_an_items_schema_compares_evidence_quotes(tmp_path: Path, pulse: SchemaVersion) -> None:
    risk = "The supplier delay is a serious risk for the launch."
    path = _write(tmp_path / "notes.jsonl", [{"id": "n1", "text": MEETING, "gold": {"risk": risk, "decision": ""}}])
    body = """    schema_version: pulse@v1
    document_kind: transcript
    turns: lines
    fields:
      risk: {gold: risk, compare: normalized}
      decision: {gold: decision, compare: normalized}
      owner: {schema_fields: [owner], gold: risk, compare: exact}
"""
    result = run_eval(_registry(path, body).entry("meetings"), path, pulse, HeuristicExtractor())
    scores = {f.field: f for f in result.fields}
    assert (scores["risk"].tp, scores["risk"].fp, scores["risk"].fn) == (1, 0, 0)
    assert scores["decision"].fp == 1  # a decision was proposed where the gold has none
    assert scores["owner"].fn == 1
    assert any("'owner'" in m and "does not have" in m for m in result.messages)
    assert result.calibration.points >= 2


class _Crashing(HeuristicExtractor):
    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        raise RuntimeError("model went away")


class _Caching(HeuristicExtractor):
    """Stands in for a model extractor: records what it was preloaded with, hands back one new answer."""

    model: str | None = "fake-model"

    def __init__(self) -> None:
        self.preloaded: dict[str, dict[str, Any]] = {}

    def preload_cache(self, entries: dict[str, dict[str, Any]]) -> None:
        self.preloaded.update(entries)

    def take_cache_entries(self) -> list[dict[str, Any]]:
        return [{"request_hash": "h1"}]


class _RecordingCache:
    def __init__(self) -> None:
        self.asked: list[tuple[str, list[str]]] = []
        self.stored: list[list[dict[str, Any]]] = []

    def load(self, model: str, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        self.asked.append((model, doc_ids))
        return {"h0": {"request_hash": "h0", "response": {}}}

    def store(self, entries: list[dict[str, Any]]) -> None:
        self.stored.append(entries)


def test_a_failing_document_is_counted_and_its_gold_missed(meetings: Path, pulse: SchemaVersion) -> None:
    entry = _registry(meetings, EVIDENCE).entry("meetings")
    result = run_eval(entry, meetings, pulse, _Crashing())
    assert result.documents_failed == 1
    assert any("model went away" in m for m in result.messages)
    assert next(f for f in result.fields if f.field == MICRO).tp == 0


def test_the_model_cache_is_read_before_and_written_after_each_batch(meetings: Path, pulse: SchemaVersion) -> None:
    cache, extractor = _RecordingCache(), _Caching()
    entry = _registry(meetings, EVIDENCE).entry("meetings")
    run_eval(entry, meetings, pulse, extractor, cache=cache)
    doc = gold_document(entry, GoldRecord(id="m1", text=MEETING, gold={}))
    assert cache.asked == [("fake-model", [doc.doc_id])]
    assert "h0" in extractor.preloaded
    assert cache.stored == [[{"request_hash": "h1"}]]
    offline = _RecordingCache()
    run_eval(entry, meetings, pulse, HeuristicExtractor(), cache=offline)
    assert offline.asked == []  # no model, nothing to look up


def test_configuration_problems_are_clear_errors(tmp_path: Path, meetings: Path, pulse: SchemaVersion) -> None:
    entry = _registry(meetings, EVIDENCE).entry("meetings")
    with pytest.raises(EvalConfigError, match="does not exist"):
        run_eval(entry, tmp_path / "absent.jsonl", pulse, HeuristicExtractor())
    with pytest.raises(EvalConfigError, match="needs a schema version"):
        run_eval(entry, meetings, None, None)
    pulse_only = pulse.model_copy(update={"document_kinds": ["pulse"]})
    with pytest.raises(EvalConfigError, match="kind 'transcript'"):
        run_eval(entry, meetings, pulse_only, HeuristicExtractor())


def test_scrubber_mode_needs_no_schema(tmp_path: Path) -> None:
    text = "Write to bob@example.com or call later."
    start = text.index("bob@")
    entities = [{"type": "EMAIL_ADDRESS", "start": start, "end": start + len("bob@example.com")}]
    path = _write(tmp_path / "pii.jsonl", [{"id": "p1", "text": text, "gold": {"entities": entities}}])
    body = """    schema_version: pii@v1
    mode: entity_spans
    items: entities
    fields:
      EMAIL: {select: {type: EMAIL_ADDRESS}}
"""
    result = run_eval(_registry(path, body).entry("meetings"), path, None, None, schema_key="pii@v1")
    email = next(f for f in result.fields if f.field == "EMAIL")
    assert (email.tp, email.fp, email.fn) == (1, 0, 0)
    assert result.schema_version == "pii@v1" and result.grounding_rate is None


def test_gold_documents_live_in_their_own_tenant(meetings: Path) -> None:
    entry = _registry(meetings, EVIDENCE).entry("meetings")
    doc = gold_document(entry, GoldRecord(id="m1", text=MEETING, gold={}))
    assert doc.tenant_id == "eval-meetings" and doc.kind == "transcript" and len(doc.turns) == 4


class _OneItemPerPass(HeuristicExtractor):
    """Finds one more of the pack's items with each pass, as a re-ask for what was missed might."""

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        run = super().extract(doc, schema)
        ranked = sorted(run.candidates, key=lambda c: c.item_type)
        return run.model_copy(update={"candidates": ranked[: schema.extraction_passes]})


def test_recall_is_reported_after_each_pass(meetings: Path, pulse: SchemaVersion) -> None:
    entry = _registry(meetings, EVIDENCE).entry("meetings")
    result = run_eval(entry, meetings, pulse.model_copy(update={"extraction_passes": 3}), _OneItemPerPass())
    recalls = [r for r in result.recall_per_pass if r is not None]
    assert len(recalls) == len(result.recall_per_pass) == 3
    assert recalls[0] < recalls[-1]
    assert recalls == sorted(recalls)
    assert result.recall_per_pass[-1] == next(f.recall for f in result.fields if f.field == MICRO)
    assert run_eval(entry, meetings, pulse, HeuristicExtractor()).recall_per_pass == []
