"""End to end through the real assets: interview@v1 fields and the pulse chaos import (sheets and pasted chats)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import dagster as dg
import openpyxl
import pytest

from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import invariants, open_warehouse, rows_as_dicts
from extraction_assets.runner import run_pipeline

INTERVIEW = "interview@v1"
PULSE = "pulse@v1"
REQUIRED = {"primary_channel", "weekly_spend", "pain_points"}
EVIDENCE_TYPES = {"user_quote", "tool_selection", "system_observation", "uploaded_artifact"}


def _run(settings: Settings, schema: str) -> None:
    results = run_pipeline(settings, schema_keys=[schema], instance=dg.DagsterInstance.ephemeral())
    assert all(r.success for r in results), results
    assert [r.failed_checks for r in results] == [[] for _ in results]


def _write_transcript(inbox: Path, rel: str, turns: list[tuple[str, str]]) -> None:
    path = inbox / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"title": rel, "turns": [{"id": f"t{i}", "speaker": s, "text": t} for i, (s, t) in enumerate(turns, 1)]}
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")


@pytest.fixture
def interview_settings(settings: Settings) -> Settings:
    """The sample inbox plus two hand-made sessions whose answers are known."""
    _write_transcript(
        settings.inbox,
        "study-lab/sessions/s1.json",
        [
            ("访谈员", "您平时晚饭主要怎么解决？"),
            ("受访者", "我主要是自己做饭。"),
            ("访谈员", "那工作日呢？"),
            ("受访者", "工作日基本都点外卖。"),
            ("访谈员", "您会推荐外卖给朋友吗？"),
            ("受访者", "会推荐。"),
            ("访谈员", "我总结一下：您会把外卖推荐给朋友，对吗？"),
            ("受访者", "不对，我不会推荐，只是自己用。"),
        ],
    )
    _write_transcript(
        settings.inbox,
        "study-lab/sessions/s2.json",
        [
            ("访谈员", "请在问卷里选择平时晚饭主要怎么解决。"),
            ("问卷工具", "受访者选择：主要自己做"),
            ("访谈员", "谢谢，今天先到这里。"),
        ],
    )
    return settings


def test_interview_fields_are_records_with_typed_turn_evidence(interview_settings: Settings) -> None:
    _run(interview_settings, INTERVIEW)
    with open_warehouse(interview_settings.warehouse) as con:
        items = rows_as_dicts(
            con,
            """SELECT i.*, r.source_uri, r.turns AS doc_turns, r.tenant_id AS doc_tenant,
                      (SELECT count(*) FROM evidence e WHERE e.item_id = i.item_id) AS n_evidence
               FROM extracted_items i JOIN raw_documents r USING (doc_id) WHERE i.schema_version = ?""",
            [INTERVIEW],
        )
        evidence = rows_as_dicts(
            con,
            """SELECT e.*, r.turns AS doc_turns, r.tenant_id AS doc_tenant FROM evidence e
               JOIN raw_documents r USING (doc_id) WHERE e.schema_version = ?""",
            [INTERVIEW],
        )
        transcripts = [  # the transcripts the interview schema reads (a meeting's is the pulse schema's)
            r[0]
            for r in con.execute(
                """SELECT r.doc_id FROM raw_documents r JOIN document_applicability a USING (doc_id)
                   WHERE r.kind = 'transcript' AND a.schema_version = ? AND a.taken""",
                [INTERVIEW],
            ).fetchall()
        ]
        assert len(transcripts) >= 2
        queue = {
            r[0]
            for r in con.execute("SELECT item_id FROM review_queue WHERE schema_version = ?", [INTERVIEW]).fetchall()
        }
        assert invariants.items_without_evidence(con, [INTERVIEW]) == {}
        assert invariants.cross_tenant_evidence(con, [INTERVIEW]) == {}

    # every required field has a record in every transcript, even when its value is null
    for doc_id in transcripts:
        assert {i["item_type"] for i in items if i["doc_id"] == doc_id} >= REQUIRED, doc_id
    # the null placeholder is the only item without evidence, and it always waits for a person
    for item in items:
        value = json.loads(item["value"])
        if item["n_evidence"] == 0:
            assert value == {"value": None}
            assert item["status"] == "needs_review" and item["item_id"] in queue
            assert any(r.startswith("no_evidence") for r in json.loads(item["review_reasons"]))
        else:
            assert value["value"] is not None
    assert any(i["n_evidence"] == 0 for i in items)
    # evidence refs carry a turn id of their document and an evidence type
    for ev in evidence:
        turns = {t["turn_id"]: t for t in json.loads(ev["doc_turns"])}
        assert ev["turn_id"] in turns
        assert turns[ev["turn_id"]]["start"] <= ev["char_start"] < turns[ev["turn_id"]]["end"]
        assert ev["evidence_type"] in EVIDENCE_TYPES
        assert ev["tenant_id"] == ev["doc_tenant"]

    by_session = {(i["source_uri"], i["item_type"]): i for i in items}
    recommend = by_session[("study-lab/sessions/s1.json", "would_recommend")]
    assert json.loads(recommend["value"]) == {"value": False}
    rules = {r.split(":")[0] for r in json.loads(recommend["review_reasons"])}
    assert {"contradiction", "denied_by_speaker"} <= rules and recommend["status"] == "needs_review"
    assert "Contradiction" in recommend["reasoning_summary"] and "Denied" in recommend["reasoning_summary"]
    channel = by_session[("study-lab/sessions/s1.json", "primary_channel")]
    assert "contradiction" in channel["review_reasons"]
    tool_choice = by_session[("study-lab/sessions/s2.json", "primary_channel")]
    assert json.loads(tool_choice["value"]) == {"value": "home_cooking"}
    tool_evidence = [e for e in evidence if e["item_id"] == tool_choice["item_id"]]
    assert [(e["turn_id"], e["evidence_type"]) for e in tool_evidence] == [("t2", "tool_selection")]
    for name in ("weekly_spend", "pain_points"):
        placeholder = by_session[("study-lab/sessions/s2.json", name)]
        assert placeholder["n_evidence"] == 0 and placeholder["status"] == "needs_review"


def test_interview_rerun_overwrites_instead_of_adding(interview_settings: Settings) -> None:
    _run(interview_settings, INTERVIEW)
    with open_warehouse(interview_settings.warehouse) as con:
        con.execute("UPDATE extraction_status SET extractor_version = 'older' WHERE schema_version = ?", [INTERVIEW])
        before = sorted(con.execute("SELECT item_id, value FROM extracted_items").fetchall())
    _run(interview_settings, INTERVIEW)
    with open_warehouse(interview_settings.warehouse) as con:
        after = sorted(con.execute("SELECT item_id, value FROM extracted_items").fetchall())
    assert after == before


# ---------------------------------------------------------------------------------------------------- chaos import

QUESTIONS = ["What will you do today?", "Any risks?", "Do you need a decision?"]
ROWS = [
    [
        "Dana",
        "2026-11-30",
        "I will send the quote by Friday. I'll also call Northwind.",
        "Supplier delay on brackets.",
        "",
    ],
    [
        "Marcus",
        "2026-11-30",
        "Inventory count.",
        "The order was cancelled. We may pay a penalty.",
        "Please approve the rental.",
    ],
]


def _write_chaos_files(inbox: Path, tenant: str) -> None:
    folder = inbox / tenant / "import"
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "checkins.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=";")
        writer.writerow(["Member", "Date", *QUESTIONS])
        writer.writerows(ROWS)
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Chat"
    sheet.append(["Time", "Sender", "Message"])
    sheet.append(["08:01", "Dana", "We will ship the brackets tomorrow."])
    sheet.append(["08:03", "Jordan", "The van is delayed again."])
    book.save(folder / "chat.xlsx")
    (folder / "paste.txt").write_text(
        "Crew\n[08:02] Jordan: Short-staffed today, Sam is out.\n[08:05] Dana: Need your approval for a temp.\n",
        encoding="utf-8",
    )


def test_chaos_import_feeds_pulse_items_with_turn_evidence_in_its_own_tenant(settings: Settings) -> None:
    for tenant in ("import-a", "import-b"):
        _write_chaos_files(settings.inbox, tenant)
    _run(settings, PULSE)
    with open_warehouse(settings.warehouse) as con:
        rows = rows_as_dicts(
            con,
            """SELECT r.tenant_id AS doc_tenant, r.source_uri, r.kind, r.turns, i.item_id, i.item_type, i.title,
                      i.tenant_id AS item_tenant, e.tenant_id AS evidence_tenant, e.turn_id, e.quote
               FROM extracted_items i JOIN evidence e USING (item_id) JOIN raw_documents r ON r.doc_id = i.doc_id
               WHERE i.schema_version = ? AND r.tenant_id LIKE 'import-%'""",
            [PULSE],
        )
        per_slot = con.execute(
            """SELECT i.doc_id, e.turn_id, i.item_type, count(DISTINCT i.item_id) FROM extracted_items i
               JOIN evidence e USING (item_id) JOIN raw_documents r ON r.doc_id = i.doc_id
               WHERE i.schema_version = ? AND r.kind = 'pulse' GROUP BY ALL HAVING count(DISTINCT i.item_id) > 1""",
            [PULSE],
        ).fetchall()
        assert invariants.cross_tenant_evidence(con, [PULSE]) == {}
    assert per_slot == []  # one item per type per answer slot
    for row in rows:
        assert row["doc_tenant"] == row["item_tenant"] == row["evidence_tenant"]
        turns = {t["turn_id"]: t for t in json.loads(row["turns"])}
        assert row["turn_id"] in turns
        assert row["title"] in row["quote"] or row["quote"].startswith(row["title"].rstrip("…"))
    sources = {(r["doc_tenant"], r["source_uri"].split("/", 1)[1], r["kind"]) for r in rows}
    for tenant in ("import-a", "import-b"):
        assert {(s, k) for t, s, k in sources if t == tenant} == {
            ("import/checkins.csv#row2", "pulse"),
            ("import/checkins.csv#row3", "pulse"),
            ("import/chat.xlsx#Chat", "chat"),
            ("import/paste.txt", "chat"),
        }
    dana = {(r["item_type"], r["turn_id"]) for r in rows if r["source_uri"] == "import-a/import/checkins.csv#row2"}
    assert dana == {("commitment", "a1"), ("risk", "a2")}
    marcus = {(r["item_type"], r["turn_id"]) for r in rows if r["source_uri"] == "import-a/import/checkins.csv#row3"}
    assert marcus == {("risk", "a2"), ("decision", "a3")}
    pasted = {(r["item_type"], r["turn_id"]) for r in rows if r["source_uri"] == "import-b/import/paste.txt"}
    assert pasted == {("risk", "m1"), ("decision", "m2")}
    # the same sheet in two tenants is two documents: nothing is shared across tenants
    ids: dict[str, set[str]] = {r["doc_tenant"]: set() for r in rows}
    for r in rows:
        ids[r["doc_tenant"]].add(r["item_id"])
    assert not ids["import-a"] & ids["import-b"]
