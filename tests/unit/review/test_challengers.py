"""Challenger versions: only where they disagree with the current version does anything enter the queue; promoting
one is an audited decision that supersedes the current version."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.review import check_chain
from extraction_assets.lib.review.challengers import (
    disagreements,
    promote,
    queued_disagreements,
    read_roles,
    sync_roles,
)
from extraction_assets.lib.review.corrections import InvalidCorrection
from extraction_assets.lib.warehouse import open_warehouse, queue_in_step, rebuild_review_queue
from tests.one_row import one_row
from tests.review_seed import seed_documents

RECEIPT = "SHOP ONE\nDate: 14/02/2026\nTOTAL 5.20\n"
DOCUMENTS = {f"r{n}": ("acme", f"acme/receipts/r{n}.txt", RECEIPT.replace("ONE", str(n))) for n in (1, 2)}
CURRENT = [
    ("r1", "company", "SHOP 1", 0.78, "draft", {"value": "SHOP 1"}),
    ("r2", "company", "SHOP 2", 0.78, "draft", {"value": "SHOP"}),
    ("r1", "total", "TOTAL 5.20", 0.62, "needs_review", {"value": 5.2}),
]
CHALLENGER = [
    ("r1", "company", "SHOP 1", 0.78, "draft", {"value": "SHOP 1"}),  # agrees
    ("r2", "company", "SHOP 2", 0.78, "draft", {"value": "SHOP 2"}),  # disagrees
    ("r1", "total", "TOTAL 5.20", 0.62, "needs_review", {"value": 5.2}),  # agrees: its own doubt is not queued
]


@pytest.fixture
def versions(tmp_path: Path, prompts: Path) -> tuple[Path, list]:
    v1 = (prompts / "receipt" / "v1.md").read_text(encoding="utf-8")
    (prompts / "receipt" / "v2.md").write_text(
        v1.replace("version: v1", "version: v2\nchallenger: true"), encoding="utf-8"
    )
    path = tmp_path / "w.duckdb"
    seed_documents(path, DOCUMENTS, CURRENT, schema="receipt@v1")
    seed_documents(path, DOCUMENTS, CHALLENGER, schema="receipt@v2")
    schemas = list(discover_schemas(prompts)[0].values())
    with open_warehouse(path) as con:
        assert sorted(sync_roles(con, schemas))[:2] == ["contract@v1", "email@v1"]
        for version in ("receipt@v1", "receipt@v2"):
            rebuild_review_queue(con, version)
    return path, schemas


def _queue(path: Path) -> dict[str, list[tuple[str, list[str]]]]:
    with open_warehouse(path) as con:
        rows = con.execute("SELECT schema_version, title, reasons FROM review_queue ORDER BY ALL").fetchall()
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for version, title, reasons in rows:
        out.setdefault(version, []).append((title, [r.split(":")[0] for r in json.loads(reasons)]))
    return out


def test_only_disagreements_of_a_challenger_are_queued_on_both_sides(versions) -> None:
    path, _ = versions
    with open_warehouse(path) as con:
        roles = read_roles(con)
        in_step = [queue_in_step(con, v) for v in ("receipt@v1", "receipt@v2")]
        reasons = one_row(
            con.execute("SELECT reasons FROM review_queue WHERE schema_version = 'receipt@v1' AND title = 'SHOP 2'")
        )[0]
    assert (roles["receipt@v1"].role, roles["receipt@v1"].rivals) == ("current", ["receipt@v2"])
    assert (roles["receipt@v2"].role, roles["receipt@v2"].rivals) == ("challenger", ["receipt@v1"])
    assert _queue(path) == {
        "receipt@v1": [("SHOP 2", ["challenger_disagrees"]), ("TOTAL 5.20", ["below_threshold"])],
        "receipt@v2": [("SHOP 2", ["challenger_disagrees"])],
    }
    assert json.loads(reasons) == ["challenger_disagrees: receipt@v2 says SHOP 2"]
    assert in_step == [True, True]


def test_a_refreshed_queue_counts_the_disagreements_its_items_give(versions) -> None:
    path, _ = versions
    with open_warehouse(path) as con:
        queued = queued_disagreements(con, ["receipt@v1", "receipt@v2", "receipt@v9"])  # one statement for all
        counts = [(disagreements(con, v), queued[v]) for v in ("receipt@v1", "receipt@v2")]
        con.execute("DELETE FROM review_queue WHERE schema_version = 'receipt@v2'")  # no longer in step
        emptied = (disagreements(con, "receipt@v2"), queued_disagreements(con, ["receipt@v2"])["receipt@v2"])
    assert counts == [(1, 1), (1, 1)] and queued["receipt@v9"] == 0
    assert emptied == (1, 0), "the stored rows are counted: read them only once the queue is refreshed"


def test_promoting_a_challenger_is_audited_and_supersedes_the_current_version(versions) -> None:
    path, schemas = versions
    with open_warehouse(path) as con:
        with pytest.raises(InvalidCorrection, match="receipt@v1 is current, not a challenger"):
            promote(con, schemas, "receipt@v1", "ops")
        done = promote(con, schemas, "receipt@v2", "ops", "wins on the reviewed receipts")
        assert not queue_in_step(con, "receipt@v1"), "its role changed: its queue must be rebuilt"
        for version in ("receipt@v1", "receipt@v2"):
            rebuild_review_queue(con, version)
        roles = read_roles(con)
        [(actor, action, item, tenant, after)] = con.execute(
            "SELECT actor, action, item_id, tenant_id, after_snapshot FROM audit_log"
        ).fetchall()
        report = check_chain(con)
        with pytest.raises(InvalidCorrection, match="is current"):
            promote(con, schemas, "receipt@v2", "ops")
    assert (done.promoted, done.superseded, done.audit_seq) == ("receipt@v2", ["receipt@v1"], 1)
    assert (actor, action, item, tenant) == ("ops", "promote", "receipt@v2", "*")
    assert json.loads(after)["roles"] == {"receipt@v1": "superseded", "receipt@v2": "current"}
    assert (roles["receipt@v1"].role, roles["receipt@v2"].role) == ("superseded", "current")
    assert _queue(path) == {"receipt@v2": [("TOTAL 5.20", ["below_threshold"])]}, "the promoted one queues its own"
    assert report.intact, report.problems
