"""Near-duplicate groups in the queue, ranked by the errors a decision catches, decided in one audited decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_assets.lib.review import Change, StaleVersion, check_chain, corrections, history, item_version
from extraction_assets.lib.review.groups import group_detail, group_item_ids, list_groups
from extraction_assets.lib.review.queries import list_queue
from extraction_assets.lib.warehouse import open_warehouse, rebuild_review_queue
from tests.review_seed import SCHEMA, seed_documents

SHOP = "GREEN LEAF GROCERY\nDate: 14/02/2026\nTOTAL 5.20\n"
DOCUMENTS = {
    "r1": ("acme", "acme/receipts/r1.txt", SHOP + "Thank you.\n"),
    "r2": ("acme", "acme/receipts/r2.txt", SHOP + "Come again!\n"),
    "r3": ("acme", "acme/receipts/r3.txt", SHOP.replace("GREEN", "Green") + "Bye.\n"),
    "n1": ("acme", "acme/notes/n1.txt", "The supplier delay is a risk for the launch.\n"),
    "g1": ("globex", "globex/receipts/g1.txt", SHOP),
}
# (document, type, quote, confidence, status, value): the same shop name on three receipts (one written in another
# case), two of them queued and one a draft; a lone risk; the same shop in another tenant
ITEMS = [
    ("r1", "company", "GREEN LEAF GROCERY", 0.62, "needs_review", {"value": "GREEN LEAF GROCERY"}),
    ("r2", "company", "GREEN LEAF GROCERY", 0.64, "needs_review", {"value": "GREEN LEAF GROCERY"}),
    ("r3", "company", "Green LEAF GROCERY", 0.78, "draft", {"value": "Green Leaf  grocery"}),
    ("n1", "risk", "The supplier delay is a risk for the launch.", 0.60, "needs_review", {"severity": "high"}),
    ("g1", "company", "GREEN LEAF GROCERY", 0.61, "needs_review", {"value": "GREEN LEAF GROCERY"}),
]


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "w.duckdb"
    return path, seed_documents(path, DOCUMENTS, ITEMS)


def test_near_duplicates_form_one_group_ranked_by_the_errors_a_decision_catches(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        groups = list_groups(con, "acme")
        queue = con.execute("SELECT item_id, group_id, group_size, priority FROM review_queue ORDER BY 1").fetchall()
    shop, risk = groups
    assert (shop.item_type, shop.size, shop.queued, shop.documents) == ("company", 3, 2, 2)
    # the errors one decision is expected to catch: each member's probability of error, summed (drafts included)
    assert shop.priority == pytest.approx((1 - 0.62) + (1 - 0.64) + (1 - 0.78))
    assert shop.item_id == ids["r1:company"], "the representative is the member most likely wrong"
    assert (risk.size, risk.priority) == (1, pytest.approx(0.40))
    by_item = {row[0]: row for row in queue}
    assert by_item[ids["r1:company"]][1] == by_item[ids["r2:company"]][1] != by_item[ids["g1:company"]][1]
    assert by_item[ids["r1:company"]][2] == 3 and by_item[ids["g1:company"]][2] == 1, "a group never spans tenants"


def test_the_probability_column_ranks_the_queue_where_it_is_set(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        con.execute("UPDATE extracted_items SET probability_correct = 0.01 WHERE item_id = ?", [ids["n1:risk"]])
        rebuild_review_queue(con, SCHEMA)
        first = list_groups(con, "acme")[0]
        rows = list_queue(con, "acme")
    assert (first.item_type, first.priority) == ("risk", pytest.approx(0.99))
    assert rows[0].item_id == ids["n1:risk"] and rows[0].probability_correct == pytest.approx(0.01)


def test_a_group_is_decided_in_one_decision_with_an_audit_row_per_member_naming_it(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        group = list_groups(con, "acme")[0]
        detail = group_detail(con, "acme", group.group_id[:8])
        assert detail.members[0].item["item_id"] == ids["r1:company"]
        group_id, members, versions = group_item_ids(con, "acme", group.group_id, group.version)
        decision = corrections.apply_changes(
            con,
            "acme",
            members,
            Change(value={"value": "GREEN LEAF GROCERY SDN BHD"}),
            "linh",
            "correct",
            "the legal name",
            versions=versions,
            groups=dict.fromkeys(members, group_id),
        )
        rows = con.execute(
            "SELECT item_id, status, value, extracted_by FROM extracted_items WHERE tenant_id = 'acme' ORDER BY 1"
        ).fetchall()
        entries = [e for item in members for e in history(con, "acme", item)]
        queue = [r[0] for r in con.execute("SELECT item_id FROM review_queue").fetchall()]
        report = check_chain(con)
    assert len(decision.results) == 3 and decision.decision_id and decision.group_id == group.group_id
    corrected = {r[0]: r for r in rows if r[0] in members}
    assert {(r[1], json.loads(r[2])["value"], r[3]) for r in corrected.values()} == {
        ("accepted", "GREEN LEAF GROCERY SDN BHD", "human")
    }
    assert len(entries) == 3 and {(e.decision_id, e.group_id, e.actor) for e in entries} == {
        (decision.decision_id, group.group_id, "linh")
    }
    assert ids["g1:company"] in queue and ids["r1:company"] not in queue, "globex's item is not acme's to decide"
    assert report.intact, report.problems


def test_a_decision_is_all_or_nothing_and_refused_when_an_item_moved_on(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        group = list_groups(con, "acme")[0]
        _, members, versions = group_item_ids(con, "acme", group.group_id)
        corrections.accept(con, "acme", ids["r2:company"], "ana")  # another reviewer, in between
        with pytest.raises(StaleVersion, match="changed since"):
            corrections.apply_changes(
                con, "acme", members, Change(status="rejected"), "linh", "reject", versions=versions
            )
        with pytest.raises(StaleVersion, match="changed since you saw it"):
            group_item_ids(con, "acme", group.group_id, group.version)
        statuses = dict(con.execute("SELECT item_id, status FROM extracted_items").fetchall())
        # a type the field refuses stops the whole decision: nothing of it is written
        with pytest.raises(corrections.InvalidCorrection, match=ids["n1:risk"]):
            corrections.apply_changes(
                con,
                "acme",
                [ids["r1:company"], ids["n1:risk"]],
                Change(value={"severity": "doom"}),
                "linh",
                "correct",
                schemas=_schemas(),
            )
        after = dict(con.execute("SELECT item_id, status FROM extracted_items").fetchall())
    assert statuses[ids["r1:company"]] == "needs_review" and statuses[ids["r2:company"]] == "accepted"
    assert after == statuses


def test_several_ids_are_one_decision_and_items_already_decided_are_left_alone(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", ids["r1:company"], "ana")
        before = item_version(corrections.load_item(con, "acme", ids["r1:company"]))
        decision = corrections.apply_changes(
            con, "acme", [ids["r1:company"], ids["n1:risk"][:8]], Change(status="accepted"), "linh", "accept"
        )
        after = item_version(corrections.load_item(con, "acme", ids["r1:company"]))
        with pytest.raises(corrections.NothingToChange, match="all 2 items"):
            corrections.apply_changes(
                con, "acme", [ids["r1:company"], ids["n1:risk"]], Change(status="accepted"), "linh", "accept"
            )
    assert decision.unchanged == [ids["r1:company"]] and [r.item_id for r in decision.results] == [ids["n1:risk"]]
    assert decision.decision_id is not None and before == after


def test_an_accepted_item_loses_its_queue_badges(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", ids["n1:risk"], "ana")
        [row] = [r for r in list_queue(con, "acme", status="any") if r.item_id == ids["n1:risk"]]
    assert row.reasons and row.rules == [], "the reasons are history; the badges show the state"


def _schemas() -> dict:
    from extraction_assets.lib.prompt_files import discover_schemas
    from extraction_assets.lib.settings import DEFAULT_PROMPTS

    return dict(discover_schemas(DEFAULT_PROMPTS)[0])


def test_the_audit_chain_covers_the_decision_a_row_names(warehouse) -> None:
    path, _ = warehouse
    with open_warehouse(path) as con:
        group = list_groups(con, "acme")[0]
        group_id, members, versions = group_item_ids(con, "acme", group.group_id)
        corrections.apply_changes(
            con,
            "acme",
            members,
            Change(status="rejected"),
            "linh",
            "reject",
            versions=versions,
            groups=dict.fromkeys(members, group_id),
        )
        assert check_chain(con).intact
        con.execute("UPDATE audit_log SET group_id = NULL WHERE seq = 2")  # a row taken out of its group decision
        report = check_chain(con)
    assert not report.intact and any("content changed" in p for p in report.problems)
