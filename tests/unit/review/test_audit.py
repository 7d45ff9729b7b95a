"""The audit log is append-only: the chain check catches any edit, deletion or rewrite."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.review import check_chain, corrections, record_head
from extraction_assets.lib.settings import PACKAGE_DIR
from extraction_assets.lib.warehouse import open_warehouse
from tests.one_row import one_row
from tests.review_seed import seed

CORRECTED = ("acme:risk", "acme:decision", "globex:commitment")


@pytest.fixture
def ids(tmp_path: Path) -> dict[str, str]:
    return seed(tmp_path / "w.duckdb")


@pytest.fixture
def con(tmp_path: Path, ids: dict[str, str]):
    with open_warehouse(tmp_path / "w.duckdb") as connection:
        corrections.accept(connection, "acme", ids["acme:risk"], "ana", "looks right")
        corrections.reject(connection, "acme", ids["acme:decision"], "ben")
        corrections.accept(connection, "globex", ids["globex:commitment"], "gus")
        yield connection


def _checked(con: duckdb.DuckDBPyConnection) -> list[str]:
    report = check_chain(con)
    record_head(con, report)
    return report.problems


def test_an_untouched_chain_passes_and_its_head_is_recorded_once(con) -> None:
    assert _checked(con) == []
    assert con.execute("SELECT row_count FROM audit_log_heads").fetchall() == [(3,)]
    assert _checked(con) == []
    assert con.execute("SELECT count(*) FROM audit_log_heads").fetchone() == (1,), "idle checks write nothing"


def test_an_empty_log_passes_without_writing_a_head(tmp_path: Path) -> None:
    path = tmp_path / "empty.duckdb"
    seed(path)
    with open_warehouse(path) as con:
        assert _checked(con) == []
        assert con.execute("SELECT count(*) FROM audit_log_heads").fetchone() == (0,)


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        ("UPDATE audit_log SET note = 'nothing to see' WHERE seq = 1", "content changed"),
        ("UPDATE audit_log SET actor = 'mallory' WHERE seq = 2", "content changed"),
        ("UPDATE audit_log SET after_snapshot = before_snapshot WHERE seq = 3", "content changed"),
        ("DELETE FROM audit_log WHERE seq = 2", "row missing"),
        ("DELETE FROM audit_log WHERE seq = 3", "shrank from 3 to 2"),
    ],
)
def test_tampering_is_caught(con, tamper: str, expected: str) -> None:
    assert _checked(con) == []
    con.execute(tamper)
    problems = _checked(con)
    assert any(expected in p for p in problems), problems
    assert con.execute("SELECT max(row_count) FROM audit_log_heads").fetchone() == (3,), "a broken chain is no head"


def test_a_rewritten_chain_with_valid_hashes_is_caught_by_the_recorded_head(con, ids) -> None:
    assert _checked(con) == []
    # forge a history of the same length through the real code path: every hash in it is valid
    con.execute("DELETE FROM audit_log")
    for key in CORRECTED:
        tenant = key.split(":")[0]
        corrections.apply_change(con, tenant, ids[key], corrections.Change(status="needs_review"), "mallory", "correct")
    assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (3,)
    problems = check_chain(con).problems
    assert problems == ["row 3 no longer carries the head hash recorded by the last check"]


def test_no_code_path_updates_or_deletes_the_audit_log() -> None:
    writes = re.compile(
        r"(UPDATE\s+audit_log\b|DELETE\s+FROM\s+audit_log\b|DROP\s+TABLE\s+(IF\s+EXISTS\s+)?audit_log\b)", re.I
    )
    offenders = [
        str(path.relative_to(PACKAGE_DIR))
        for path in PACKAGE_DIR.rglob("*.py")
        if writes.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    inserts = [p.name for p in PACKAGE_DIR.rglob("*.py") if "INSERT INTO audit_log " in p.read_text(encoding="utf-8")]
    assert inserts == ["audit.py"], "the chain has exactly one writer"


def test_with_a_key_a_forged_row_or_a_rewritten_chain_does_not_verify(tmp_path: Path, monkeypatch) -> None:
    from extraction_assets.lib.review.audit import AUDIT_KEY_ENV, item_history

    monkeypatch.setenv(AUDIT_KEY_ENV, "a key that never sits in the warehouse")
    ids = seed(tmp_path / "k.duckdb")
    with open_warehouse(tmp_path / "k.duckdb") as con:
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
        corrections.accept(con, "acme", ids["acme:commitment"], "ana")
        assert check_chain(con).problems == []
        # someone who can write the warehouse, but has no key, rewrites a row with a valid SHA-256 hash
        row = one_row(con.execute("SELECT audit_id FROM audit_log ORDER BY seq DESC LIMIT 1"))[0]
        con.execute("UPDATE audit_log SET actor = 'the-ceo (spoofed)' WHERE audit_id = ?", [row])
        (entry,) = [e for e in item_history(con, "acme", ids["acme:commitment"]) if e.audit_id == row]
        con.execute("UPDATE audit_log SET row_hash = ? WHERE audit_id = ?", [entry.computed_hash(None), row])
        assert any(row in p and "content changed" in p for p in check_chain(con).problems)
        monkeypatch.delenv(AUDIT_KEY_ENV)  # without the key, the forged hash would pass
        assert not any(row in p and "content changed" in p for p in check_chain(con).problems)


def test_an_item_edited_directly_in_the_table_is_caught(con, ids) -> None:
    assert _checked(con) == []
    con.execute("UPDATE extracted_items SET status = 'accepted' WHERE item_id = ?", [ids["acme:commitment"]])
    assert any("no audit row" in p for p in check_chain(con).problems)


def test_a_rewrite_of_the_chain_and_its_heads_is_caught_by_the_head_kept_outside(con, tmp_path: Path) -> None:
    from extraction_assets.lib.review import keep_outside_head, read_kept_heads

    kept = read_kept_heads(tmp_path / "w.duckdb.audit-head.json")
    report = check_chain(con, kept)
    assert report.intact and [k.head for k in kept] == [report.head] * 2  # moved by the appends themselves
    assert not keep_outside_head(kept, report)
    con.execute("DELETE FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)")  # the log shrinks...
    con.execute("DELETE FROM audit_log_heads")  # ...and the warehouse's own record of it goes too
    con.execute("UPDATE extracted_items SET status = 'draft', extracted_by = 'heuristic' WHERE status <> 'draft'")
    problems = check_chain(con, kept).problems
    assert any("head file beside the warehouse" in p for p in problems)
    assert any("copy of the head in the user's config folder" in p for p in problems)


@pytest.mark.parametrize("keyed", [False, True])
def test_deleting_the_newest_decision_and_restoring_its_item_is_caught_with_no_check_in_between(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed: bool
) -> None:
    """The head kept beside the warehouse moves with every append (after its transaction commits), so a deletion
    shows even when no pipeline check ran since the decision."""
    import json

    from extraction_assets.lib.review import read_kept_heads

    if keyed:
        monkeypatch.setenv("EXTRACTION_AUDIT_KEY", "a key kept outside the warehouse")
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
        corrections.reject(con, "acme", ids["acme:decision"], "ben")  # the newest decision
        kept = read_kept_heads(path.with_name("w.duckdb.audit-head.json"))
        assert [k.head.row_count if k.head else None for k in kept] == [2, 2]
        before = json.loads(one_row(con.execute("SELECT before_snapshot FROM audit_log WHERE seq = 2"))[0])
        con.execute("DELETE FROM audit_log WHERE seq = 2")
        con.execute(
            "UPDATE extracted_items SET status = ?, extracted_by = ?, updated_by = NULL WHERE item_id = ?",
            [before["status"], before["extracted_by"], ids["acme:decision"]],
        )
        problems = check_chain(con, kept).problems
        assert any("head file beside the warehouse" in p for p in problems), problems
        assert not check_chain(con).problems  # what the warehouse alone says: nothing (no check ran since)
