"""Label Studio: tasks with evidence spans as predictions, and annotations back as audited corrections."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from extraction_assets.lib.review import export_tasks, history, import_annotations, label_config, utf16_offset
from extraction_assets.lib.warehouse import open_warehouse
from tests.review_seed import SCHEMA, seed


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "w.duckdb"
    return path, seed(path)


def _annotate(task: dict, *results: dict, cancelled: bool = False, stamp: str = "2026-12-01T10:00:00") -> dict:
    annotated = copy.deepcopy(task)
    annotation = {"id": 7, "completed_by": 3, "was_cancelled": cancelled, "updated_at": stamp, "result": list(results)}
    annotated.setdefault("annotations", []).append(annotation)
    return annotated


def _choice(status: str) -> dict:
    return {"from_name": "decision", "to_name": "text", "type": "choices", "value": {"choices": [status]}}


def _textarea(name: str, text: str) -> dict:
    return {"from_name": name, "to_name": "text", "type": "textarea", "value": {"text": [text]}}


def test_utf16_offsets_count_astral_characters_twice() -> None:
    text = "a🚀b"
    assert [utf16_offset(text, i) for i in range(4)] == [0, 1, 3, 4]


def test_export_puts_the_document_and_evidence_spans_in_label_studio_form(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        tasks = export_tasks(con, "acme", SCHEMA)
    assert {t["data"]["item_id"] for t in tasks} == {ids["acme:risk"], ids["acme:decision"]}
    for task in tasks:
        text = task["data"]["text"]
        [prediction] = task["predictions"]
        spans = [r for r in prediction["result"] if r["type"] == "labels"]
        assert spans and prediction["score"] < 1.0
        for span in spans:
            value = span["value"]
            units = text.encode("utf-16-le")
            # Label Studio slices in UTF-16 code units (the text holds an emoji before the spans)
            assert units[2 * value["start"] : 2 * value["end"]].decode("utf-16-le") == value["text"]
            assert text.index(value["text"]) == value["start"] - 1
            assert value["labels"] == [task["data"]["item_type"]]
    config = ET.fromstring(label_config(t["data"]["item_type"] for t in tasks))
    assert {e.get("value") for e in config.iter("Label")} == {"risk", "decision"}
    assert {e.get("name") for e in config.iter("TextArea")} == {"value", "normalized_value", "note"}


def test_round_trip_applies_annotations_through_the_audited_path(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        exported = json.loads(json.dumps(export_tasks(con, "acme")))  # as Label Studio stores it
    tasks = {t["data"]["item_type"]: t for t in exported}
    annotated = [
        _annotate(tasks["risk"], _choice("accepted"), _textarea("note", "confirmed by the PM")),
        _annotate(
            tasks["decision"],
            _choice("rejected"),
            _textarea("value", '{"owner_name": "Sam"}'),
            {"from_name": "evidence", "type": "labels", "value": {"start": 0, "end": 4, "labels": ["risk"]}},
        ),
    ]
    with open_warehouse(path) as con:
        report = import_annotations(con, "acme", annotated, "importer")
        again = import_annotations(con, "acme", annotated, "importer")
        statuses = dict(con.execute("SELECT item_id, status FROM extracted_items WHERE tenant_id = 'acme'").fetchall())
        risk_history = history(con, "acme", ids["acme:risk"])
        decision_history = history(con, "acme", ids["acme:decision"])
    assert sorted(report.applied) == sorted([ids["acme:risk"], ids["acme:decision"]])
    assert report.failed == []
    assert [n[0] for n in report.notices] == [ids["acme:decision"]], "a relabelled span is reported, not applied"
    assert sorted(again.unchanged) == sorted(report.applied), "importing twice changes nothing"
    assert statuses[ids["acme:risk"]] == "accepted" and statuses[ids["acme:decision"]] == "rejected"
    assert [(e.action, e.actor) for e in risk_history] == [("accept", "importer")]
    assert risk_history[0].note == "Label Studio annotation 7 by 3: confirmed by the PM"
    assert decision_history[0].action == "correct"
    assert decision_history[0].after_snapshot["value"] == {"owner_name": "Sam"}


def test_bad_tasks_are_reported_and_do_not_stop_the_import(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        [task, *_] = export_tasks(con, "acme")
        foreign = {"data": {"item_id": ids["globex:commitment"], "item_type": "commitment"}}
        tasks = [
            {"data": {"text": "no id"}},
            _annotate(foreign, _choice("accepted")),
            _annotate(task, _textarea("value", "{not json")),
            _annotate(task, _choice("maybe")),
            task,
            _annotate(task, _choice("accepted"), cancelled=True),
            _annotate(task, _textarea("note", "only a note")),
            _annotate(task, _choice("accepted")),
        ]
        report = import_annotations(con, "acme", tasks, "importer")
        foreign_status = con.execute(
            "SELECT status FROM extracted_items WHERE item_id = ?", [ids["globex:commitment"]]
        ).fetchone()
    reasons = [why for _, why in report.failed]
    assert report.failed[0] == ("task 1", "no data.item_id: not a task exported by extraction-assets")
    assert "not found in tenant 'acme'" in reasons[1]
    assert "not valid JSON" in reasons[2]
    assert "status" in reasons[3]
    assert [why for _, why in report.skipped] == [
        "no annotation",
        "no annotation",
        "the annotation holds no decision and no corrected value",
    ]
    assert report.applied == [task["data"]["item_id"]]
    assert foreign_status == ("needs_review",)
