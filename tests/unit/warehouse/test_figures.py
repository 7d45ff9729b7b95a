"""The figures an extraction partition reports: each count equal to the same count taken another way, for each
version of a run at once."""

from __future__ import annotations

from pathlib import Path

from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.lib.warehouse.figures import extraction_figures
from tests.review_seed import ITEMS, SCHEMA, seed


def test_a_partitions_figures_count_its_own_rows(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    seed(path)
    with open_warehouse(path) as con:
        con.execute(  # another version's rows must not be counted
            "INSERT INTO extracted_items SELECT * REPLACE (item_id || '-other' AS item_id,"
            " 'other@v1' AS schema_version) FROM extracted_items"
        )
        con.execute(
            "INSERT INTO document_routing SELECT DISTINCT doc_id, ?, tenant_id, 'manual_review', 0.6, '[]', '[]', '[]',"
            " 'h1', now() FROM extracted_items",
            [SCHEMA],
        )
        con.execute(  # and its evidence: each version's preview shows its own items
            "INSERT INTO evidence SELECT * REPLACE (evidence_id || '-other' AS evidence_id,"
            " item_id || '-other' AS item_id, 'other@v1' AS schema_version) FROM evidence"
        )
        both = extraction_figures(con, [SCHEMA, "absent@v1"])
        other = extraction_figures(con, ["other@v1"])["other@v1"]
        assert extraction_figures(con, [SCHEMA]) == {SCHEMA: both[SCHEMA]}  # a version's figures, alone or not
    figures, empty = both[SCHEMA], both["absent@v1"]
    per_document = [sum(1 for item in ITEMS if item[0] == tenant) for tenant in ("acme", "globex")]
    assert figures["items"] == len(ITEMS) == figures["evidence"]
    assert figures["needs_review_items"] == sum(1 for item in ITEMS if item[4] == "needs_review")
    assert figures["items_by_type"] == {"commitment": 2, "decision": 1, "risk": 1}
    assert figures["items_per_document"] == {
        "documents_with_items": 2,
        "mean": sum(per_document) / 2,
        "max": max(per_document),
    }
    assert figures["routing_outcomes"] == {"manual_review": 2}
    assert [type(v) for v in figures["items_per_document"].values()] == [int, float, int]
    by_confidence = sorted(ITEMS, key=lambda item: -item[3])
    assert [(row["item_type"], row["confidence"]) for row in figures["preview"]] == [
        (i[1], i[3]) for i in by_confidence
    ]
    assert [row["quote"] for row in figures["preview"]] == [i[2] for i in by_confidence]  # no PII in these quotes
    assert other["preview"] == figures["preview"] and other["items"] == figures["items"]
    assert empty | {"preview": []} == {
        "documents_taken": 0,
        "documents_not_taken": 0,
        "items": 0,
        "needs_review_items": 0,
        "items_per_document": {"documents_with_items": 0, "mean": 0.0, "max": 0},
        "evidence": 0,
        "items_by_type": {},
        "routing_outcomes": {},
        "preview": [],
        "calibrated_items": 0,
        "expected_error_capture": None,
        "expected_precision_unqueued": None,
    }


def test_a_partition_expects_from_its_probabilities_what_review_catches(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    seed(path)
    with open_warehouse(path) as con:
        ids = [row[0] for row in con.execute("SELECT item_id FROM extracted_items ORDER BY item_id").fetchall()]
        probability = dict(zip(ids, (0.9, 0.8, 0.5, 0.95), strict=True))
        for item_id, p in probability.items():
            con.execute("UPDATE extracted_items SET probability_correct = ? WHERE item_id = ?", [p, item_id])
        rows = con.execute("SELECT item_id, status FROM extracted_items WHERE schema_version = ?", [SCHEMA]).fetchall()
        figures = extraction_figures(con, [SCHEMA])[SCHEMA]
    machine = {i: status for i, status in rows if status in ("draft", "needs_review")}
    wrong = sum(1 - probability[i] for i in machine)
    queued = sum(1 - probability[i] for i, status in machine.items() if status == "needs_review")
    drafts = [probability[i] for i, status in machine.items() if status == "draft"]
    assert figures["calibrated_items"] == len(machine)
    assert figures["expected_error_capture"] == round(queued / wrong, 4)
    assert figures["expected_precision_unqueued"] == (round(sum(drafts) / len(drafts), 4) if drafts else None)
