"""`extraction-assets eval` on a tiny hand-made gold file: terminal table, JSON, HTML, warehouse rows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_assets.cli import main
from extraction_assets.lib.warehouse import open_warehouse

TEXT = (
    "Ann: Good morning <team>.\n"
    "Bob: The supplier delay is a serious risk for the launch.\n"
    "Ann: Please decide whether we approve the budget by Friday.\n"
)
REGISTRY = """datasets:
  standups:
    path: nowhere/dev.jsonl
    schema_version: pulse@v1
    document_kind: chat
    turns: lines
    mode: evidence_turns
    items: items
    item_spans: evidence
    fields:
      decision: {select: {kinds: decision}}
      risk: {select: {kinds: problem_or_risk}}
"""


def _span(fragment: str) -> dict[str, int]:
    start = TEXT.index(fragment)
    return {"start": start, "end": TEXT.index("\n", start)}


@pytest.fixture
def gold(tmp_path: Path) -> tuple[Path, Path]:
    dataset = tmp_path / "standups" / "sample.jsonl"
    dataset.parent.mkdir()
    items = [
        {"kinds": ["decision"], "evidence": [_span("Ann: Please decide")]},
        {"kinds": ["problem_or_risk"], "evidence": [_span("Bob: The supplier")]},
    ]
    dataset.write_text(json.dumps({"id": "s1", "text": TEXT, "gold": {"items": items}}) + "\n", encoding="utf-8")
    registry = tmp_path / "registry.yaml"
    registry.write_text(REGISTRY, encoding="utf-8")
    return dataset, registry


def test_eval_writes_json_html_and_warehouse_rows(
    tmp_path: Path, gold: tuple[Path, Path], prompts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, registry = gold
    out, html, warehouse = tmp_path / "out" / "m.json", tmp_path / "out" / "m.html", tmp_path / "w.duckdb"
    files = ["--json", str(out), "--html", str(html), "--warehouse", str(warehouse), "--prompts", str(prompts)]
    code = main(["eval", "--dataset", str(dataset), "--schema", "pulse@v1", "--registry", str(registry), *files])
    assert code == 0
    printed = capsys.readouterr().out
    assert "standups on pulse@v1" in printed and "decision" in printed
    metrics = json.loads(out.read_text(encoding="utf-8"))
    assert metrics["dataset"] == "standups" and metrics["schema_version"] == "pulse@v1"
    assert metrics["documents"] == 1 and metrics["extractor"].startswith("heuristic")
    assert set(metrics["fields"]) == {"decision", "risk"}
    for figures in metrics["fields"].values():
        assert {"precision", "recall", "f1", "support"} <= set(figures)
        assert figures["recall"] == 1.0 and figures["support"] == 1
    assert metrics["grounding_rate"] == 1.0 and metrics["hallucination_rate"] == 0.0
    page = html.read_text(encoding="utf-8")
    assert "&lt;team&gt;" in page and "<team>" not in page
    with open_warehouse(warehouse) as con:
        run = con.execute("SELECT dataset, schema_version, documents, report_path FROM eval_runs").fetchall()
        fields = {
            r[0] for r in con.execute("SELECT field FROM eval_metrics WHERE run_id = ?", [metrics["run_id"]]).fetchall()
        }
    assert run == [("standups", "pulse@v1", 1, str(html))]
    assert {"decision", "risk"} <= fields


def test_entry_named_explicitly_and_unknown_folders_fail_clearly(
    tmp_path: Path, gold: tuple[Path, Path], prompts: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset, registry = gold
    elsewhere = tmp_path / "misc" / "copy.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text(dataset.read_text(encoding="utf-8"), encoding="utf-8")
    common = ["--registry", str(registry), "--warehouse", str(tmp_path / "w.duckdb"), "--prompts", str(prompts)]
    assert main(["eval", "--dataset", str(elsewhere), *common]) == 2
    assert "'misc' is not a registry entry" in capsys.readouterr().out
    assert main(["eval", "--dataset", str(elsewhere), "--registry-entry", "standups", "--limit", "1", *common]) == 0
    assert main(["eval", "--dataset", str(dataset), "--schema", "nope@v1", *common]) == 2
