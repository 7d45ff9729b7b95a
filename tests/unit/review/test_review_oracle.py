"""The review benches' scripted reviewer: what it decides from the gold of an eval record."""

from __future__ import annotations

import json
from pathlib import Path

from evals.review_oracle import GoldReviewer

RECEIPT = {
    "id": "sroie-X51",
    "text": "INDAH GIFT\nDATE 19/10/2018\nTOTAL 60.30\n",
    "gold": {"company": {"value": "INDAH GIFT"}, "date": {"value": "19/10/2018"}, "total": {"value": "60.30"}},
}
MEETING = {
    "id": "qmsum-Bed002",
    "text": "A: We decided to buy the new mikes .\nB: Lunch ?\n",
    "gold": {"items": [{"kinds": ["decision"], "evidence": [{"start": 3, "end": 36}]}]},
}


def _reviewer(tmp_path: Path) -> GoldReviewer:
    records = {"sroie": [RECEIPT], "qmsum_meetings": [MEETING], "cuad": [], "enron_categories": []}
    for dataset, rows in records.items():
        (tmp_path / dataset).mkdir()
        (tmp_path / dataset / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return GoldReviewer(tmp_path)


def test_a_right_value_is_accepted_a_wrong_one_corrected_as_its_type_and_the_unknown_taken(tmp_path: Path) -> None:
    reviewer = _reviewer(tmp_path)
    receipt = "t/receipts/0001-sroie-X51.txt"
    assert reviewer.verdict(receipt, "company", {"value": "Indah  gift"}, "INDAH GIFT").action == "accept"
    wrong_date = reviewer.verdict(receipt, "date", {"value": "2018-01-19"}, "19/10/2018")
    assert (wrong_date.action, wrong_date.value) == ("correct", {"value": "2018-10-19"})
    assert reviewer.verdict(receipt, "total", {"value": 4.68}, "4.68").value == {"value": 60.3}
    assert reviewer.verdict(receipt, "address", {"value": "JALAN"}, "JALAN").action == "reject", "no gold address"
    unknown = reviewer.verdict("t/mail/0003-enron-1.eml", "finance", {"Amount": 5}, "5")
    assert (unknown.action, unknown.judged) == ("accept", False)


def test_a_meeting_item_is_kept_only_inside_gold_evidence_of_its_kind(tmp_path: Path) -> None:
    reviewer = _reviewer(tmp_path)
    meeting = "t/meetings/0006-qmsum-Bed002.json"
    assert reviewer.verdict(meeting, "decision", {}, "We decided to buy the new mikes .").action == "accept"
    assert reviewer.verdict(meeting, "decision", {}, "Lunch ?").action == "reject"
    assert reviewer.verdict(meeting, "risk", {}, "We decided to buy the new mikes .").action == "reject"
    assert reviewer.verdict(meeting, "commitment", {}, "Lunch ?").judged is False
