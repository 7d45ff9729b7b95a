"""Erased decisions must not hide behind the head file beside the warehouse: someone who can write the warehouse and
its folder (not the user's config folder, nor the key) deletes the newest decisions, restores their items, empties
`audit_log_heads`, and deletes or rewrites `<warehouse>.audit-head.json`, with and without `EXTRACTION_AUDIT_KEY`.
The check the pipeline runs (`check_audit_log`, the asset check `audit_log_intact`) and `extraction-assets review
audit` must fail on each; a lost head file is accepted only by a person, and only where no row was removed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from extraction_assets.lib.review import corrections
from extraction_assets.lib.review.audit import AUDIT_KEY_ENV, HEAD_KEY_FILE, OUTSIDE_HEAD_SUFFIX, config_folder
from extraction_assets.lib.stages import check_audit_log
from extraction_assets.lib.warehouse import open_warehouse
from tests.one_row import one_row
from tests.review_seed import seed

CLI = [sys.executable, "-m", "extraction_assets.cli", "review", "audit"]


def _decide(path: Path) -> None:
    """Four decisions by two reviewers, each moving the head beside the warehouse (and its copy)."""
    ids = seed(path)
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
        corrections.accept(con, "globex", ids["globex:commitment"], "gus")
        corrections.reject(con, "acme", ids["acme:decision"], "ben")
        corrections.accept(con, "acme", ids["acme:commitment"], "ben")


def _erase_newest(path: Path, keep: int) -> tuple[int, str]:
    """What the attacker does inside the warehouse: rows after `keep` deleted, their items restored from the before
    snapshots, the warehouse's own heads emptied. Returns the head of what is left (the attacker can read it)."""
    with open_warehouse(path) as con:
        erased = con.execute("SELECT item_id, before_snapshot FROM audit_log WHERE seq > ? ORDER BY seq DESC", [keep])
        for item_id, before in erased.fetchall():
            item = json.loads(before)
            con.execute(
                "UPDATE extracted_items SET status = ?, extracted_by = ?, updated_by = ? WHERE item_id = ?",
                [item["status"], item["extracted_by"], item["updated_by"], item_id],
            )
        con.execute("DELETE FROM audit_log WHERE seq > ?", [keep])
        con.execute("DELETE FROM audit_log_heads")
        return keep, str(one_row(con.execute("SELECT row_hash FROM audit_log WHERE seq = ?", [keep]))[0])


@pytest.mark.parametrize("keyed", [False, True], ids=["no key", "EXTRACTION_AUDIT_KEY"])
@pytest.mark.parametrize("head_file", ["deleted", "rewritten"])
def test_erasing_decisions_behind_the_head_file_fails_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, keyed: bool, head_file: str
) -> None:
    if keyed:
        monkeypatch.setenv(AUDIT_KEY_ENV, "a key the attacker does not have")
    path = tmp_path / "warehouse.duckdb"
    _decide(path)
    rows, head_hash = _erase_newest(path, keep=2)
    beside = path.with_name(path.name + OUTSIDE_HEAD_SUFFIX)
    if head_file == "deleted":
        beside.unlink()
    else:  # the head of what is left, as the attacker can compute it, in the file's own shape
        beside.write_text(json.dumps({"row_count": rows, "head_hash": head_hash, "signature": "0" * 64}))
    report = check_audit_log(partial(open_warehouse, path), path).report
    assert not report.intact, "the erasure of the two newest decisions is hidden"
    said = "is missing while the log holds 2 rows" if head_file == "deleted" else "signature does not verify"
    assert any(said in problem for problem in report.problems), report.problems
    copy_says = "the log shrank from 4 to 2 rows (the copy of the head in the user's config folder)"
    assert copy_says in report.problems


def test_the_copy_in_the_config_folder_catches_an_older_signed_head_put_back_and_a_log_deleted_whole(
    tmp_path: Path,
) -> None:
    path = tmp_path / "warehouse.duckdb"
    beside = path.with_name(path.name + OUTSIDE_HEAD_SUFFIX)
    ids = seed(path)
    with open_warehouse(path) as con:
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
    older = beside.read_bytes()  # a folder-writer can set the signed file aside (a rename needs no read access)
    with open_warehouse(path) as con:
        corrections.reject(con, "acme", ids["acme:decision"], "ben")
    _erase_newest(path, keep=1)
    beside.write_bytes(older)  # ...and put it back: it verifies, and the log extends it
    problems = check_audit_log(partial(open_warehouse, path), path).report.problems
    assert problems == ["the log shrank from 2 to 1 rows (the copy of the head in the user's config folder)"], (
        "only the copy out of the folder-writer's reach knows"
    )

    with open_warehouse(path) as con:  # everything: the log, its heads, the file (a fresh log, to the folder)
        con.execute("DELETE FROM audit_log")
        con.execute("UPDATE extracted_items SET status = 'needs_review', extracted_by = 'heuristic'")
    beside.unlink()
    problems = check_audit_log(partial(open_warehouse, path), path).report.problems
    assert problems == ["the log shrank from 2 to 0 rows (the copy of the head in the user's config folder)"]


def test_a_lost_head_file_is_accepted_by_a_person_and_an_erasure_never_is(tmp_path: Path) -> None:
    path = tmp_path / "warehouse.duckdb"
    _decide(path)
    key_file = config_folder() / HEAD_KEY_FILE
    assert key_file.stat().st_mode & 0o777 == 0o600, "the key is its owner's only"
    beside = path.with_name(path.name + OUTSIDE_HEAD_SUFFIX)

    def audit(*args: str) -> tuple[int, dict]:
        done = subprocess.run(
            [*CLI, "--warehouse", str(path), "--json", *args],
            env=os.environ,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return done.returncode, json.loads(done.stdout)

    assert audit() == (0, {"intact": True, "rows": 4, "problems": []})
    beside.unlink()  # lost in a copy of the warehouse, say
    code, said = audit()
    assert code == 1 and "is missing while the log holds 4 rows" in said["problems"][0]
    assert audit("--accept")[0] == 0 and audit()[0] == 0, "accepted by a person: signed again"

    _erase_newest(path, keep=3)
    beside.unlink()
    code, said = audit("--accept")
    assert code == 1 and any("shrank from 4 to 3" in p for p in said["problems"]), "an erasure is never accepted"
    assert not beside.exists(), "nothing was written"
