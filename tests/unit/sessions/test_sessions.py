"""A live interview session, driven turn by turn: light extraction into session_state, checkpoint drafts when an
objective is covered, post-session extraction when the session is completed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from extraction_assets.lib.extraction import build_extractor
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.review import Change, apply_change
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.sessions import (
    HeuristicLight,
    SessionEnv,
    SessionFile,
    SessionFileError,
    light_extractor,
    read_session,
    session_document,
    session_files,
    sync_sessions,
)
from extraction_assets.lib.settings import ModelSettings
from extraction_assets.lib.warehouse import documents_to_route, invariants, open_warehouse, rows_as_dicts
from tests.session_seed import TURNS, append, turn, with_objectives


@pytest.fixture
def live(tmp_path: Path, prompts: Path) -> tuple[SessionEnv, Path, Path]:
    with_objectives(prompts)
    sessions = tmp_path / "sessions"
    (sessions / "lanting").mkdir(parents=True)
    env = SessionEnv(
        sessions_dir=sessions, prompts_dir=prompts, extractor=build_extractor(ModelSettings()), light=HeuristicLight()
    )
    return env, sessions / "lanting" / "s-001.jsonl", tmp_path / "w.duckdb"


def _connect(warehouse: Path):
    return lambda: open_warehouse(warehouse)


def _read(sessions: Path, path: Path) -> SessionFile:
    """The session file at `path`, listed and read as a pass does."""
    [entry] = [e for e in session_files(sessions) if e.rel == path.relative_to(sessions).as_posix()]
    return read_session(sessions, entry)


def _items(warehouse: Path) -> dict[str, dict[str, Any]]:
    with open_warehouse(warehouse) as con:
        rows = rows_as_dicts(con, "SELECT * FROM extracted_items ORDER BY item_type")
    return {r["item_type"]: r for r in rows}


def _state(warehouse: Path) -> dict[str, dict[str, Any]]:
    with open_warehouse(warehouse) as con:
        return {r["field_name"]: r for r in rows_as_dicts(con, "SELECT * FROM session_state")}


def test_a_growing_transcript_goes_through_light_checkpoint_and_final_extraction(live) -> None:
    env, path, warehouse = live
    connect = _connect(warehouse)

    append(path, {"schema_version": "interview@v1", "title": "R01 live"}, turn(*TURNS[0]))
    [report] = sync_sessions(connect, env)
    assert (report.new_respondent_turns, report.light) == (0, "skipped"), "the interviewer spoke: nothing to assess"
    assert sync_sessions(connect, env) == [], "an unchanged file is not read again"

    append(path, turn(*TURNS[1]))
    [report] = sync_sessions(connect, env)
    assert (report.new_respondent_turns, report.light, report.checkpointed) == (1, "ok", [])
    state = _state(warehouse)
    assert state["primary_channel"]["covered"] and state["primary_channel"]["turn_id"] == "t2"
    assert 0.6 <= state["primary_channel"]["confidence"] <= 0.8
    assert not state["weekly_spend"]["covered"] and state["weekly_spend"]["objective"] == "spend"
    assert _items(warehouse) == {}, "light extraction never writes an item"

    append(path, turn(*TURNS[2]), turn(*TURNS[3]))
    [report] = sync_sessions(connect, env)
    assert report.checkpointed == ["spend"], "objective spend is covered; habits still lacks a field"
    items = _items(warehouse)
    assert set(items) == {"weekly_spend"}
    spend = items["weekly_spend"]
    assert (spend["status"], json.loads(spend["value"]), spend["schema_version"]) == (
        "draft",
        {"value": 300},
        "interview@v1",
    )
    assert spend["extracted_by"] == "heuristic" and "interview" in spend["extractor_version"]

    with open_warehouse(warehouse) as con:  # a researcher accepts the draft while the interview goes on
        apply_change(con, "lanting", spend["item_id"], Change(status="accepted"), "mei", "accept")

    append(path, turn(*TURNS[4]), turn(*TURNS[5]))
    [report] = sync_sessions(connect, env)
    assert report.checkpointed == ["pain"]
    items = _items(warehouse)
    assert items["pain_points"]["status"] == "draft"
    assert items["weekly_spend"]["status"] == "accepted", "a checkpoint never overwrites an accepted record"

    append(path, {"status": "completed"})
    [report] = sync_sessions(connect, env)
    assert report.status == "completed" and report.final_items is not None
    items = _items(warehouse)
    # every field: the required ones without an answer are null placeholders for review
    assert set(items) >= {"primary_channel", "weekly_spend", "pain_points"}
    assert items["weekly_spend"]["status"] == "accepted", "the final pass keeps a person's decision"
    assert "checkpoint draft" not in (items["pain_points"]["reasoning_summary"] or ""), "the final pass replaced it"
    with open_warehouse(warehouse) as con:
        session = rows_as_dicts(con, "SELECT * FROM sessions")[0]
        doc_id = session["doc_id"]
        evidence = rows_as_dicts(con, "SELECT turn_id FROM evidence WHERE doc_id = ?", [doc_id])
        assert invariants.quote_mismatches(con) == {}
        assert invariants.ids_not_content_hashes(con) == []
        assert invariants.review_status_mismatches(con) == {}
    assert {e["turn_id"] for e in evidence} <= {"t2", "t4", "t6"}
    assert session["status"] == "completed" and session["final_extracted_at"] is not None
    assert 0 <= session["final_delay_s"] < 60
    print(f"completion -> final records: {session['final_delay_s']:.3f} s")


def test_required_fields_unanswered_are_null_placeholders(live) -> None:
    env, path, warehouse = live
    append(path, turn(*TURNS[0]), turn(*TURNS[1]), {"status": "completed"})
    sync_sessions(_connect(warehouse), env)
    items = _items(warehouse)
    for name in ("weekly_spend", "pain_points"):
        assert json.loads(items[name]["value"]) == {"value": None}
        assert items[name]["status"] == "needs_review"
    with open_warehouse(warehouse) as con:
        queued = {r[0] for r in con.execute("SELECT item_type FROM review_queue").fetchall()}
    assert {"weekly_spend", "pain_points"} <= queued, "needs_review fields reach the review queue"


class Broken:
    name = "broken"

    def assess(self, doc: ExtractionInput, schema: SchemaVersion) -> list:
        raise TimeoutError("the light model did not answer in 10 s")


def test_a_failing_light_extraction_stops_nothing(live) -> None:
    env, path, warehouse = live
    env = env.model_copy(update={"light": Broken()})
    append(path, turn(*TURNS[0]), turn(*TURNS[1]))
    [report] = sync_sessions(_connect(warehouse), env)
    assert report.light == "failed" and "did not answer" in (report.light_error or "")
    append(path, {"status": "completed"})
    [report] = sync_sessions(_connect(warehouse), env)
    assert report.final_items and report.final_items > 0
    assert "primary_channel" in _items(warehouse)


def test_a_light_model_that_errors_is_a_light_failure(live, tmp_path: Path) -> None:
    from evals.fake_llm import FakeLLMServer

    env, path, warehouse = live
    with FakeLLMServer() as fake:
        fake.configure(server_error_every=1)
        choice = ModelSettings(llm_base_url=fake.base_url, llm_model="big", llm_http_retries=0)
        light = light_extractor(choice, "small", env.prompts_dir)
        env = env.model_copy(update={"light": light})
        append(path, turn(*TURNS[0]), turn(*TURNS[1]))
        [report] = sync_sessions(_connect(warehouse), env)
        requests = list(fake.requests)
    assert report.light == "failed"
    assert requests and requests[0]["model"] == "small", "the light model, not the extraction model"
    assert "covered so far" in json.dumps(requests[0], ensure_ascii=False), "its own light prompt"
    assert _state(warehouse) == {}


def test_a_session_document_keeps_its_id_and_offsets_as_it_grows(live) -> None:
    env, path, _ = live
    append(path, turn(*TURNS[0]), turn(*TURNS[1]))
    first = session_document(_read(env.sessions_dir, path))
    append(path, turn(*TURNS[2]))
    later = session_document(_read(env.sessions_dir, path))
    assert first.doc_id == later.doc_id and later.text.startswith(first.text)
    assert later.turns[:2] == first.turns


def test_a_line_being_written_waits_and_a_bad_line_is_reported(live) -> None:
    env, path, _ = live
    append(path, turn(*TURNS[0]))
    with path.open("a", encoding="utf-8") as out:
        out.write("{not json\n")
        out.write('{"id": "t2", "speaker": "受访者", "text": "半')  # still being written
    session = _read(env.sessions_dir, path)
    assert [t["id"] for t in session.turns] == ["t1"]
    assert len(session.problems) == 1 and "line 2" in session.problems[0]


def test_an_unknown_status_is_refused(live) -> None:
    env, path, _ = live
    path.with_suffix(".json").write_text(json.dumps({"status": "paused", "turns": []}), encoding="utf-8")
    with pytest.raises(SessionFileError, match="unknown session status"):
        _read(env.sessions_dir, path.with_suffix(".json"))


def test_a_rewritten_json_transcript_is_read_whole(live) -> None:
    env, path, warehouse = live
    json_path = path.with_suffix(".json")
    body = {"status": "in_progress", "turns": [turn(*t) for t in TURNS[:2]]}
    json_path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    [report] = sync_sessions(_connect(warehouse), env)
    assert report.light == "ok"
    body["turns"] = [turn(*t) for t in TURNS[:4]]
    body["status"] = "completed"
    json_path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    os.utime(json_path)
    [report] = sync_sessions(_connect(warehouse), env)
    assert report.final_items and json.loads(_items(warehouse)["weekly_spend"]["value"]) == {"value": 300}


def test_inbox_routing_never_takes_a_session_transcript(live) -> None:
    env, path, warehouse = live
    append(path, turn(*TURNS[0]), turn(*TURNS[1]))
    sync_sessions(_connect(warehouse), env)
    with open_warehouse(warehouse) as con:
        assert con.execute("SELECT count(*) FROM scrubbed_documents").fetchone() == (1,)
        assert documents_to_route(con, "interview@v1", ["transcript"], "rules") == []


class ScriptedModel:
    """A light model's client that answers from a script (the HTTP side is tested with the fake server above)."""

    def __init__(self, answer: dict[str, Any]) -> None:
        self.settings = type("S", (), {"model": "small"})()
        self.answer = answer
        self.messages: list[dict[str, str]] = []

    def complete(
        self, messages: list[dict[str, str]], output: type[BaseModel], tags: dict[str, str] | None = None
    ) -> tuple[BaseModel, None]:
        self.messages = messages
        return output.model_validate(self.answer), None


def test_a_light_models_coverage_counts_only_quotes_found_in_the_transcript(live) -> None:
    from extraction_assets.lib.sessions import ModelLight

    env, path, warehouse = live
    fields = [
        {"field": "primary_channel", "covered": True, "confidence": 0.99, "value": "delivery_app",
         "evidence_span": "工作日基本都是点外卖"},
        {"field": "weekly_spend", "covered": True, "confidence": 0.9, "value": 5000, "evidence_span": "一周五千块"},
        {"field": "not_a_field", "covered": True, "confidence": 0.9, "evidence_span": "美团"},
    ]  # fmt: skip
    client = ScriptedModel({"fields": fields})
    env = env.model_copy(update={"light": ModelLight(client, env.prompts_dir)})
    append(path, turn(*TURNS[0]), turn(*TURNS[1]))
    [report] = sync_sessions(_connect(warehouse), env)
    state = _state(warehouse)
    assert report.light == "ok" and state["primary_channel"]["extractor"] == "small"
    assert state["primary_channel"]["covered"] and state["primary_channel"]["turn_id"] == "t2"
    assert state["primary_channel"]["confidence"] == 0.9, "clamped to the schema's model band"
    assert not state["weekly_spend"]["covered"], "an invented quote covers nothing"
    assert "not_a_field" not in state
    system = client.messages[0]["content"]
    assert "while it is still running" in system and "weekly_spend (number" in system, (
        "the light prompt, with the fields"
    )


def test_a_rewrite_that_changes_stored_turns_is_refused(live) -> None:
    env, path, warehouse = live
    json_path = path.with_suffix(".json")
    body: dict[str, Any] = {"turns": [turn(*t) for t in TURNS[:4]]}
    json_path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    sync_sessions(_connect(warehouse), env)
    body["turns"][1] = turn("t2", "受访者", "其实我都是自己做饭。")  # an earlier answer edited afterwards
    body["status"] = "completed"
    json_path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    os.utime(json_path)
    [report] = sync_sessions(_connect(warehouse), env)
    assert report.error and "only appending" in report.error
    with open_warehouse(warehouse) as con:
        assert invariants.quote_mismatches(con) == {}, "stored evidence still cites the stored text"
        [letter] = con.execute("SELECT reason FROM dead_letters WHERE stage = 'session'").fetchall()
        assert "only appending" in letter[0]
        assert con.execute("SELECT status FROM sessions").fetchone() == ("in_progress",)
    assert sync_sessions(_connect(warehouse), env) == [], "the refused version is not read again"
