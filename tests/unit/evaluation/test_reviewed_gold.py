"""Reviewers' decisions as gold: a version scored on what people accepted, corrected, rejected and added."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.evaluation import MICRO
from extraction_assets.lib.evaluation.reviewed import (
    ADDED_FIELD,
    decisions,
    reviewed_tenants,
    score_version_on_reviews,
)
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.review import Change, corrections
from extraction_assets.lib.review.missed import add_missed_item
from extraction_assets.lib.warehouse import open_warehouse
from tests.one_row import one_row
from tests.review_seed import seed_documents

RECEIPT = "SHOP ONE\nDate: 14/02/2026\nTOTAL 5.20\nROUNDING 0.01\n"
DOCUMENTS = {f"r{n}": ("acme", f"acme/receipts/r{n}.txt", RECEIPT.replace("ONE", str(n))) for n in (1, 2, 3)}
V1 = [
    ("r1", "company", "SHOP 1", 0.7, "needs_review", {"value": "SHOP 1"}),  # right: accepted
    ("r2", "company", "SHOP 2", 0.7, "needs_review", {"value": "SHOP"}),  # wrong: corrected to SHOP 2
    ("r3", "total", "ROUNDING 0.01", 0.7, "needs_review", {"value": 0.01}),  # wrong: rejected
]
V2 = [  # a later version: gets r2's name and r1's date (which v1 missed) right, repeats r3's rejected total
    ("r1", "company", "SHOP 1", 0.7, "draft", {"value": "SHOP 1"}),
    ("r2", "company", "SHOP 2", 0.7, "draft", {"value": "SHOP 2"}),
    ("r3", "total", "ROUNDING 0.01", 0.7, "draft", {"value": 0.01}),
    ("r1", "date", "14/02/2026", 0.7, "draft", {"value": "2026-02-14"}),
]


@pytest.fixture
def reviewed(tmp_path: Path, prompts: Path) -> tuple[Path, Path]:
    (prompts / "receipt" / "v2.md").write_text(
        (prompts / "receipt" / "v1.md").read_text(encoding="utf-8").replace("version: v1", "version: v2"),
        encoding="utf-8",
    )
    path = tmp_path / "w.duckdb"
    v1 = seed_documents(path, DOCUMENTS, V1, schema="receipt@v1")
    seed_documents(path, DOCUMENTS, V2, schema="receipt@v2")
    receipt = load_schema(prompts, "receipt@v1")
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", v1["r1:company"], "linh")
        corrections.apply_change(con, "acme", v1["r2:company"], Change(value={"value": "SHOP 2"}), "linh", "correct")
        corrections.reject(con, "acme", v1["r3:total"], "linh")
        doc = one_row(con.execute("SELECT doc_id FROM extracted_items WHERE item_id = ?", [v1["r1:company"]]))[0]
        add_missed_item(con, "acme", doc, receipt, "date", {"value": "2026-02-14"}, "linh", quote="14/02/2026")
    return path, prompts


def _scores(path: Path, prompts: Path, key: str) -> dict:
    with open_warehouse(path) as con:
        score = score_version_on_reviews(con, load_schema(prompts, key), "acme")
    assert score is not None
    return {f.field: f for f in score.result.fields} | {"used": score.used, "result": score.result}


def test_decisions_become_gold_of_every_kind(reviewed) -> None:
    path, _ = reviewed
    with open_warehouse(path) as con:
        gold = decisions(con, "acme", "receipt")
        tenants = reviewed_tenants(con, "receipt")
    assert tenants == ["acme"]
    assert sorted((d.item_type, d.kind, d.text) for d in gold) == [
        ("company", "accepted", "shop 1"),
        ("company", "corrected", "shop 2"),
        ("date", "added", "2026 02 14"),
        ("total", "rejected", "0 01"),
    ]


def test_a_version_is_scored_on_what_people_decided_and_what_they_added(reviewed) -> None:
    path, prompts = reviewed
    v1, v2 = _scores(path, prompts, "receipt@v1"), _scores(path, prompts, "receipt@v2")
    # v1 as its extractor proposed it: r1 right; r2's "SHOP" wrong (a false positive and a miss); r3's rejected
    # total a false positive; the date a person added was missed
    assert (v1[MICRO].tp, v1[MICRO].fp, v1[MICRO].fn) == (1, 2, 2)
    assert (v1[ADDED_FIELD].support, v1[ADDED_FIELD].recall) == (1, 0.0)
    # v2 gets both names and the missed date, and repeats the rejected total
    assert (v2[MICRO].tp, v2[MICRO].fp, v2[MICRO].fn) == (3, 1, 0)
    assert v2[ADDED_FIELD].recall == 1.0
    assert v1["used"] == {"accepted": 1, "corrected": 1, "rejected": 1, "added": 1}
    assert v2["result"].dataset == "reviewed:acme" and "recall of the 1 items reviewers added" in v2["result"].notes[0]
