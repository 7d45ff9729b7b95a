"""Corrections: transitions, ownership, audit, evidence untouched, tenant scope."""

from __future__ import annotations

import itertools
from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.models import ItemStatus
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.review import (
    ALLOWED_TRANSITIONS,
    Change,
    InvalidCorrection,
    ItemNotFound,
    NothingToChange,
    apply_change,
    check_chain,
    corrections,
)
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import items_without_evidence, open_warehouse, rows_as_dicts
from tests.one_row import one_row
from tests.review_seed import SCHEMA, seed

STATUSES: tuple[ItemStatus, ...] = ("draft", "needs_review", "accepted", "rejected")


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "w.duckdb"
    return path, seed(path)


def _set_status(con: duckdb.DuckDBPyConnection, item_id: str, status: str) -> None:
    con.execute("UPDATE extracted_items SET status = ? WHERE item_id = ?", [status, item_id])


@pytest.mark.parametrize(("current", "new"), [p for p in itertools.product(STATUSES, STATUSES) if p[0] != p[1]])
def test_every_status_transition_is_allowed_or_refused_as_defined(
    warehouse, current: ItemStatus, new: ItemStatus
) -> None:
    path, ids = warehouse
    item_id = ids["acme:commitment"]
    with open_warehouse(path) as con:
        _set_status(con, item_id, current)
        if new in ALLOWED_TRANSITIONS[current]:
            result = apply_change(con, "acme", item_id, Change(status=new), "ana", "correct")
            assert (result.before["status"], result.after["status"]) == (current, new)
            assert con.execute("SELECT status FROM extracted_items WHERE item_id = ?", [item_id]).fetchone() == (new,)
        else:
            with pytest.raises(InvalidCorrection, match=f"{current} cannot become {new}"):
                apply_change(con, "acme", item_id, Change(status=new), "ana", "correct")
            assert con.execute("SELECT status FROM extracted_items WHERE item_id = ?", [item_id]).fetchone() == (
                current,
            )
            assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def test_no_one_moves_an_item_back_to_draft() -> None:
    assert all("draft" not in targets for targets in ALLOWED_TRANSITIONS.values())
    assert ALLOWED_TRANSITIONS["needs_review"] == {"accepted", "rejected"}


def test_accept_makes_the_item_human_owned_audits_it_and_leaves_evidence_alone(warehouse) -> None:
    path, ids = warehouse
    item_id = ids["acme:risk"]
    with open_warehouse(path) as con:
        evidence_before = con.execute("SELECT * FROM evidence ORDER BY evidence_id").fetchall()
        assert con.execute("SELECT count(*) FROM review_queue WHERE item_id = ?", [item_id]).fetchone() == (1,)
        result = corrections.accept(con, "acme", item_id, "ana", note="checked with ops")
        row = rows_as_dicts(con, "SELECT * FROM extracted_items WHERE item_id = ?", [item_id])[0]
        audit = rows_as_dicts(con, "SELECT * FROM audit_log")
        evidence_after = con.execute("SELECT * FROM evidence ORDER BY evidence_id").fetchall()
        queued = con.execute("SELECT count(*) FROM review_queue WHERE item_id = ?", [item_id]).fetchone()
    assert (row["status"], row["extracted_by"], row["updated_by"]) == ("accepted", "human", "ana")
    assert row["updated_at"] > row["created_at"]
    assert evidence_after == evidence_before
    assert queued == (0,), "an accepted item leaves the queue at once"
    assert len(audit) == 1
    assert (audit[0]["actor"], audit[0]["action"], audit[0]["note"]) == ("ana", "accept", "checked with ops")
    assert result.before["status"] == "needs_review" and result.before["extracted_by"] == "heuristic"
    assert result.after["status"] == "accepted" and result.after["extracted_by"] == "human"
    assert result.audit.seq == 1


def test_correct_value_and_normalized_value(warehouse) -> None:
    path, ids = warehouse
    item_id = ids["acme:commitment"]
    schemas = {SCHEMA: load_schema(DEFAULT_PROMPTS, SCHEMA)}
    with open_warehouse(path) as con:
        result = apply_change(
            con,
            "acme",
            item_id[:8],
            Change(value={"due_date": "2026-12-05", "owner_name": "Linh"}, normalized_value={"due": "2026-12-05"}),
            "ana",
            "correct",
            schemas=schemas,
        )
        value, normalized, status = one_row(
            con.execute("SELECT value, normalized_value, status FROM extracted_items WHERE item_id = ?", [item_id])
        )
    assert result.item_id == item_id, "a unique prefix resolves to the item"
    assert '"owner_name": "Linh"' in value and '"2026-12-05"' in normalized
    assert status == "accepted", "a person's value is a decided one: a correction without a status accepts it"
    assert result.audit.changes()["value"] == (
        {"due_date": "2026-12-04"},
        {"due_date": "2026-12-05", "owner_name": "Linh"},
    )


def test_a_value_breaking_its_type_is_refused(warehouse) -> None:
    path, ids = warehouse
    schemas = {SCHEMA: load_schema(DEFAULT_PROMPTS, SCHEMA)}
    with open_warehouse(path) as con:
        with pytest.raises(InvalidCorrection, match="severity='apocalyptic' is not one of"):
            apply_change(
                con,
                "acme",
                ids["acme:risk"],
                Change(value={"severity": "apocalyptic"}),
                "ana",
                "correct",
                None,
                schemas,
            )
        with pytest.raises(InvalidCorrection, match="JSON object"):
            apply_change(con, "acme", ids["acme:risk"], Change(value="high"), "ana", "correct")
        con.execute('UPDATE extracted_items SET value = \'{"severity": "doom"}\' WHERE item_id = ?', [ids["acme:risk"]])
        with pytest.raises(InvalidCorrection, match="correct it first"):
            corrections.accept(con, "acme", ids["acme:risk"], "ana", schemas=schemas)
        corrections.reject(con, "acme", ids["acme:risk"], "ana")  # rejecting a broken value is fine
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (1,)


def test_nothing_to_change_and_no_actor_write_nothing(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
        with pytest.raises(NothingToChange):
            corrections.accept(con, "acme", ids["acme:risk"], "ben")
        with pytest.raises(InvalidCorrection, match="who made the change"):
            corrections.reject(con, "acme", ids["acme:risk"], "  ")
        with pytest.raises(InvalidCorrection, match="nothing to change"):
            apply_change(con, "acme", ids["acme:risk"], Change(), "ana", "correct")
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (1,)


def test_another_tenants_item_is_not_found_and_not_changed(warehouse) -> None:
    path, ids = warehouse
    foreign = ids["globex:commitment"]
    with open_warehouse(path) as con:
        for operation in (
            lambda: corrections.accept(con, "acme", foreign, "ana"),
            lambda: corrections.reject(con, "acme", foreign[:8], "ana"),
            lambda: corrections.history(con, "acme", foreign),
            lambda: corrections.load_item(con, "acme", foreign),
        ):
            with pytest.raises(ItemNotFound, match="not found in tenant 'acme'"):
                operation()
        row = con.execute("SELECT status, extracted_by FROM extracted_items WHERE item_id = ?", [foreign]).fetchone()
        assert row == ("needs_review", "heuristic")
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)
        with pytest.raises(ItemNotFound, match="at least 6"):
            corrections.load_item(con, "acme", "f0")


def test_history_is_oldest_first_and_the_chain_holds(warehouse) -> None:
    path, ids = warehouse
    item_id = ids["acme:decision"]
    with open_warehouse(path) as con:
        corrections.reject(con, "acme", item_id, "ana", "not a decision")
        apply_change(con, "acme", item_id, Change(status="needs_review"), "ben", "correct", "reopened")
        corrections.accept(con, "acme", item_id, "cho")
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
        entries = corrections.history(con, "acme", item_id)
        report = check_chain(con)
    assert [(e.actor, e.action, e.after_snapshot["status"]) for e in entries] == [
        ("ana", "reject", "rejected"),
        ("ben", "correct", "needs_review"),
        ("cho", "accept", "accepted"),
    ]
    assert [e.seq for e in entries] == [1, 2, 3]
    assert report.intact and report.head.row_count == 4


def test_a_person_may_fill_a_required_placeholder_without_breaking_the_evidence_invariant(warehouse) -> None:
    path, ids = warehouse
    item_id = ids["acme:decision"]
    with open_warehouse(path) as con:
        con.execute("DELETE FROM evidence WHERE item_id = ?", [item_id])
        con.execute("UPDATE extracted_items SET value = '{\"value\": null}' WHERE item_id = ?", [item_id])
        assert items_without_evidence(con) == {}, "a machine's null placeholder awaiting review is allowed"
        con.execute('UPDATE extracted_items SET value = \'{"value": "x"}\' WHERE item_id = ?', [item_id])
        assert items_without_evidence(con) == {SCHEMA: [item_id]}, "a machine's value without evidence is not"
        apply_change(con, "acme", item_id, Change(value="Monday", status="accepted"), "ana", "correct")
        value = one_row(con.execute("SELECT value FROM extracted_items WHERE item_id = ?", [item_id]))[0]
        assert items_without_evidence(con) == {}
    assert value == '{"value": "Monday"}', "a bare value fills a single-value field"


def test_a_correction_changes_the_fields_it_names_and_no_longer_speaks_as_the_machine(warehouse) -> None:
    """`--value '{"owner_name": "Linh"}'` used to wipe due_date and the rest; and the item kept its machine reasons
    and confidence as if the machine still vouched for the value."""
    path, ids = warehouse
    item_id = ids["acme:commitment"]
    with open_warehouse(path) as con:
        con.execute(
            "UPDATE extracted_items SET value = ?, review_reasons = ?, reasoning_summary = ?, status = 'needs_review' "
            "WHERE item_id = ?",
            [
                '{"due_date": "2026-12-04", "owner_name": "Dana", "severity": "high"}',
                '["below_threshold: confidence 0.60 < 0.70"]',
                "owner is Dana",
                item_id,
            ],
        )
        apply_change(con, "acme", item_id, Change(value={"owner_name": "Linh"}), "ana", "correct")
        item = corrections.load_item(con, "acme", item_id)
        assert item["value"] == {"due_date": "2026-12-04", "owner_name": "Linh", "severity": "high"}
        assert item["review_reasons"] == [] and item["reasoning_summary"] == "value set by ana"
        assert item["status"] == "accepted" and corrections.provenance(item) == "set by ana"
        apply_change(con, "acme", item_id, Change(value={"owner_name": "Linh"}, replace=True), "ana", "correct")
        assert corrections.load_item(con, "acme", item_id)["value"] == {"owner_name": "Linh"}
