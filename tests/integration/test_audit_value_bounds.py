"""The audit log must not grow without bound through values: a correction's value is bounded as a note is, at every
entry point (the command line in a subprocess, the review page, the API, a Label Studio import), and a change is
stored once (each value in the after snapshot of its own row; a row's before snapshot only where the item is not
what its previous row left it), with the chain verifiable and the history readable."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import partial
from pathlib import Path

from starlette.testclient import TestClient

from extraction_assets.lib.review import corrections, import_annotations
from extraction_assets.lib.review.corrections import MAX_VALUE_CHARS, Change
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.stages import check_audit_log
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.web.review_app import create_review_app
from tests.one_row import one_row
from tests.review_seed import bearer, review_auth, seed, signed_in

SAYS = f"at most {MAX_VALUE_CHARS} are kept"
BIG = {"owner_name": "x" * 240_000}  # the attack's size, under the servers' 256 KiB body limit; a string field


def _audit_rows(path: Path) -> int:
    with open_warehouse(path) as con:
        return int(one_row(con.execute("SELECT count(*) FROM audit_log"))[0])


def test_a_value_past_its_bound_is_refused_with_a_clear_message_at_every_entry_point(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    risk = ids["acme:risk"]
    app = create_review_app(path, "acme", DEFAULT_PROMPTS, review_auth())
    client = signed_in(TestClient(app, base_url="http://127.0.0.1"), "ana")

    page = client.get(f"/items/{risk}")
    token = re.search(r'name="token" value="([^"]+)"', page.text)
    version = re.search(r'name="version" value="([^"]+)"', page.text)
    assert token is not None and version is not None and 'name="field.owner_name"' in page.text
    form = {"token": token[1], "version": version[1], "field.owner_name": BIG["owner_name"], "status": "accepted"}
    refused = client.post(f"/items/{risk}/correct", data=form, follow_redirects=False)
    assert refused.status_code == 422 and SAYS in refused.text, "the page"

    read = client.get(f"/extracted-fields/{risk}", headers=bearer("ana"), auth=None).json()["version"]
    api = client.patch(  # auth=None: the bearer token alone (httpx takes None; `patch`'s annotation leaves it out)
        f"/extracted-fields/{risk}",
        json={"value": BIG, "version": read},
        headers=bearer("ana"),
        auth=None,  # type: ignore[arg-type]
    )
    assert api.status_code == 422 and SAYS in api.json()["error"], "the API"

    task = {
        "data": {"item_id": risk},
        "annotations": [
            {
                "id": 1,
                "updated_at": "2026-12-01T10:00:00",
                "result": [{"from_name": "value", "type": "textarea", "value": {"text": [json.dumps(BIG)]}}],
            }
        ],
    }
    with open_warehouse(path) as con:
        report = import_annotations(con, "acme", [task], "importer")
    assert [why for _, why in report.failed] == [f"the value is 240018 characters of JSON; {SAYS}"], "the import"

    value = json.dumps({"owner_name": "x" * 20_000})  # a command line's argument is at most 128 KiB
    command = ["review", "correct", risk, "--tenant", "acme", "--value", value, "--warehouse", str(path)]
    done = subprocess.run(
        [sys.executable, "-m", "extraction_assets.cli", *command],
        env=os.environ,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2 and SAYS in " ".join(done.stdout.split()), "the command line"
    assert _audit_rows(path) == 0, "nothing was stored"


def test_a_change_is_stored_once_and_its_history_and_chain_still_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    risk = ids["acme:risk"]
    values = [f"{n}:" + "v" * 9_000 for n in range(5)]
    with open_warehouse(path) as con:
        for value in values[:3]:
            corrections.apply_change(con, "acme", risk, Change(value={"severity": value}), "ana", "correct")
        # a forced re-extraction makes the item the machine's again: the next row keeps what it changed from
        con.execute(
            "UPDATE extracted_items SET value = ?, status = 'needs_review', extracted_by = 'heuristic' "
            "WHERE item_id = ?",
            [json.dumps({"severity": "high"}), risk],
        )
        for value in values[3:]:
            corrections.apply_change(con, "acme", risk, Change(value={"severity": value}), "ana", "correct")
        occurrences = (
            "SELECT sum(contains(before_snapshot::VARCHAR, $v)::INT + contains(after_snapshot::VARCHAR, $v)::INT) "
            "FROM audit_log"
        )
        stored = [int(one_row(con.execute(occurrences, {"v": value}))[0]) for value in values]
        kept = con.execute("SELECT before_snapshot::VARCHAR <> 'null' FROM audit_log ORDER BY seq").fetchall()
        before_kept = [row[0] for row in kept]
        entries = corrections.history(con, "acme", risk)
    assert stored == [1, 1, 1, 1, 1], "each value once: in the after snapshot of its own row"
    assert before_kept == [True, False, False, True, False], "a before snapshot only where the item was not as left"
    olds = [e.changes()["value"][0]["severity"] for e in entries]
    assert olds == ["high", values[0], values[1], "high", values[3]], "the history reads each change whole"
    assert check_audit_log(partial(open_warehouse, path), path).report.problems == []
