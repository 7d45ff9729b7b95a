"""Gold files and dotted paths."""

from __future__ import annotations

import json
from pathlib import Path

from extraction_assets.lib.evaluation import GoldRecord, count_records, read_gold, resolve, selected, spans_at


def test_resolve_walks_lists_and_flattens() -> None:
    gold = {"a": {"clauses": [{"spans": [{"start": 1, "end": 2}]}, {"spans": [{"start": 5, "end": 9}]}]}, "n": "x"}
    assert resolve(gold, "a.clauses.spans") == [{"start": 1, "end": 2}, {"start": 5, "end": 9}]
    assert resolve(gold, "n") == ["x"]
    assert resolve(gold, "missing.key") == []
    assert resolve({"k": 1}, "") == [{"k": 1}]
    assert [(s.start, s.end, s.label) for s in spans_at(gold, "a.clauses.spans", "f")] == [(1, 2, "f"), (5, 9, "f")]
    assert spans_at(gold, "n") == []


def test_selected_matches_values_and_list_members() -> None:
    assert selected({"type": "EMAIL"}, {"type": "EMAIL"})
    assert selected({"kinds": ["decision", "other"]}, {"kinds": "decision"})
    assert not selected({"kinds": []}, {"kinds": "decision"})
    assert not selected("not a dict", {"kinds": "decision"})


def test_bad_lines_become_messages_and_reading_goes_on(tmp_path: Path) -> None:
    path = tmp_path / "gold.jsonl"
    lines = [
        json.dumps({"id": "a", "text": "one", "gold": {}}),
        "{not json",
        "",
        json.dumps({"id": "b", "gold": {}}),  # no text
        json.dumps({"id": "c", "text": "three", "gold": {"x": 1}}),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    read = list(read_gold(path))
    records = [r for r in read if isinstance(r, GoldRecord)]
    problems = [r for r in read if isinstance(r, str)]
    assert [r.id for r in records] == ["a", "c"]
    assert records[1].line == 5
    assert len(problems) == 2 and "line 2" in problems[0] and "line 4" in problems[1]
    assert count_records(path) == 4
    assert [r.id for r in read_gold(path, limit=1) if isinstance(r, GoldRecord)] == ["a"]
