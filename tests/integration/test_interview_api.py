"""The interview API with a real HTTP client against the review server running on 127.0.0.1: a session's fields
with evidence, a correction audited under the token's name, the 409 of a re-extraction that would overwrite a
person's decision, history, and attempts on another tenant's session and fields."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn

from extraction_assets.lib.extraction import build_extractor
from extraction_assets.lib.ports import free_port
from extraction_assets.lib.review import AuthConfig, Authenticator, hash_token
from extraction_assets.lib.sessions import HeuristicLight, SessionEnv, sync_sessions
from extraction_assets.lib.settings import ModelSettings
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.web.review_app import create_review_app
from tests.one_row import one_row
from tests.session_seed import TURNS, whole_session, with_objectives

TOKENS = {
    "mei": ("lanting", "lanting-api-token-1"),
    "rob": ("rival", "rival-api-token-2"),
    "lan": ("lanting", "lanting-page-token-3"),
}


@pytest.fixture
def api(tmp_path: Path, prompts: Path) -> Iterator[tuple[str, Path]]:
    """Two tenants with a completed session each (the same session id), and lanting's server."""
    with_objectives(prompts)
    (prompts / "interview" / "v2.md").write_text(
        (prompts / "interview" / "v1.md").read_text(encoding="utf-8").replace("version: v1", "version: v2"),
        encoding="utf-8",
    )
    sessions, warehouse = tmp_path / "sessions", tmp_path / "w.duckdb"
    for tenant in ("lanting", "rival"):
        whole_session(sessions / tenant / "s-001.jsonl")
    env = SessionEnv(
        sessions_dir=sessions, prompts_dir=prompts, extractor=build_extractor(ModelSettings()), light=HeuristicLight()
    )
    assert all(r.final_items for r in sync_sessions(lambda: open_warehouse(warehouse), env))
    principals = [{"name": n, "tenant": t, "token_sha256": hash_token(tok)} for n, (t, tok) in TOKENS.items()]
    auth = Authenticator(AuthConfig.model_validate({"principals": principals}))
    port = free_port()
    app = create_review_app(warehouse, "lanting", prompts, auth)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the review server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", warehouse
    server.should_exit = True
    thread.join(timeout=10)


def _client(base: str, name: str | None = "mei") -> httpx.Client:
    headers = {"Authorization": f"Bearer {TOKENS[name][1]}"} if name else {}
    return httpx.Client(base_url=base, headers=headers, timeout=30)


def _rival_item(warehouse: Path) -> str:
    with open_warehouse(warehouse) as con:
        row = con.execute(
            "SELECT item_id FROM extracted_items WHERE tenant_id = 'rival' AND item_type = 'weekly_spend'"
        ).fetchone()
    assert row
    return row[0]


def test_fields_with_evidence_a_correction_and_its_history(api) -> None:
    base, warehouse = api
    with _client(base) as http:
        got = http.get("/sessions/s-001/extracted-fields")
        assert got.status_code == 200 and got.headers["content-type"] == "application/json"
        body = got.json()
        assert (body["tenant_id"], body["status"], body["schema_version_id"]) == (
            "lanting",
            "completed",
            "interview@v1",
        )
        fields = {f["field_name"]: f for f in body["fields"]}
        assert {"primary_channel", "weekly_spend", "pain_points"} <= set(fields)
        spend = fields["weekly_spend"]
        assert spend["value"] == 300 and spend["schema_version_id"] == "interview@v1"
        turn_ids = {t[0] for t in TURNS}
        for field in body["fields"]:
            for ev in field["evidence"]:
                assert ev["turn_id"] in turn_ids and ev["quote"] and ev["evidence_type"] and ev["strength"]
        assert spend["evidence"][0]["turn_id"] == "t4"

        url, version = f"/extracted-fields/{spend['id']}", spend["version"]
        one = http.get(url)
        assert one.json()["version"] == version and one.headers["etag"] == f'"{version}"'
        assert one.json()["evidence"] == spend["evidence"]
        assert http.patch(url, json={"status": "accepted", "by": "ceo", "version": version}).status_code == 422
        unversioned = http.patch(url, json={"status": "accepted"})
        assert unversioned.status_code == 428 and "If-Match" in unversioned.json()["error"]
        patched = http.patch(url, json={"status": "accepted", "note": "checked"}, headers={"If-Match": f'"{version}"'})
        assert patched.status_code == 200
        assert patched.json()["changed"] and patched.json()["field"]["status"] == "accepted"
        assert patched.json()["field"]["updated_by"] == "mei"
        version = patched.json()["field"]["version"]
        again = http.patch(url, json={"status": "accepted", "version": version})
        assert again.status_code == 200 and again.json()["changed"] is False
        wrong = http.patch(url, json={"value": "three hundred", "version": version})
        assert wrong.status_code == 422, "a value must fit the field's type, as on the command line"

        history = http.get(f"/extracted-fields/{spend['id']}/history").json()
        assert [(h["actor"], h["action"], h["note"]) for h in history] == [("mei", "accept", "checked")]
        assert (
            history[0]["changes"]["status"] == ["draft", "accepted"] or history[0]["changes"]["status"][1] == "accepted"
        )
    with open_warehouse(warehouse) as con:
        assert con.execute("SELECT actor, action FROM audit_log").fetchall() == [("mei", "accept")]


def test_a_re_extraction_over_a_persons_decision_needs_confirmation(api) -> None:
    base, _ = api
    with _client(base) as http:
        fields = {f["field_name"]: f for f in http.get("/sessions/s-001/extracted-fields").json()["fields"]}
        spend = fields["weekly_spend"]["id"]
        version = fields["weekly_spend"]["version"]
        assert (
            http.patch(f"/extracted-fields/{spend}", json={"status": "rejected", "version": version}).status_code == 200
        )

        refused = http.post("/sessions/s-001/re-extract", json={"schema_version_id": "interview@v1"})
        assert refused.status_code == 409
        counts = refused.json()
        assert counts["need_confirmation"] == 1 and counts["would_overwrite"] == len(fields) - 1
        assert counts["protected_by_status"] == {"rejected (human)": 1}
        after = {f["field_name"]: f for f in http.get("/sessions/s-001/extracted-fields").json()["fields"]}
        assert after["weekly_spend"]["status"] == "rejected", "nothing changed"

        done = http.post("/sessions/s-001/re-extract", json={"schema_version_id": "interview@v1", "confirm": True})
        assert done.status_code == 200 and done.json()["overwrote_with_confirmation"] == 1
        redone = {f["field_name"]: f for f in http.get("/sessions/s-001/extracted-fields").json()["fields"]}
        assert redone["weekly_spend"]["extracted_by"] == "heuristic" and len(redone) == len(fields)

        again = http.post("/sessions/s-001/re-extract", json={"schema_version_id": "interview@v1"})
        assert again.status_code == 200
        assert len(http.get("/sessions/s-001/extracted-fields").json()["fields"]) == len(fields), "idempotent"

        v2 = http.post("/sessions/s-001/re-extract", json={"schema_version_id": "interview@v2"})
        assert v2.status_code == 200 and v2.json()["items_stored"] == len(fields)
        new = http.get("/sessions/s-001/extracted-fields", params={"schema_version_id": "interview@v2"}).json()
        assert {f["schema_version_id"] for f in new["fields"]} == {"interview@v2"}
        old = http.get("/sessions/s-001/extracted-fields").json()
        assert len(old["fields"]) == len(fields), "the old version's records stay beside the new ones"

        unknown = http.post("/sessions/s-001/re-extract", json={"schema_version_id": "interview@v9"})
        assert unknown.status_code == 422 and "unknown schema version" in unknown.json()["error"]
        not_json = http.post("/sessions/s-001/re-extract", content=b"schema_version_id=interview@v1")
        assert not_json.status_code == 415


def test_no_token_or_another_tenants_token_or_data_gets_nothing(api) -> None:
    base, warehouse = api
    rival_item = _rival_item(warehouse)
    with _client(base, None) as anonymous:
        response = anonymous.get("/sessions/s-001/extracted-fields")
        assert response.status_code == 401 and response.headers["www-authenticate"] == "Bearer"
        basic = anonymous.get("/sessions/s-001/extracted-fields", auth=("mei", TOKENS["mei"][1]))
        assert basic.status_code == 401, "the API takes bearer tokens only"
        assert anonymous.get("/openapi.json").status_code == 200, "the description is public"
    with _client(base, "rob") as rival:  # a valid token of another tenant
        assert rival.get("/sessions/s-001/extracted-fields").status_code == 403
        assert rival.patch(f"/extracted-fields/{rival_item}", json={"status": "rejected"}).status_code == 403
    with _client(base) as mei:  # lanting's token reaching for rival's records
        assert (
            mei.patch(f"/extracted-fields/{rival_item}", json={"status": "accepted", "version": "x"}).status_code == 404
        )
        assert mei.get(f"/extracted-fields/{rival_item}/history").status_code == 404
        assert mei.get("/sessions/s-404/extracted-fields").status_code == 404
        own = mei.get("/sessions/s-001/extracted-fields").json()
        assert rival_item not in {f["id"] for f in own["fields"]}, "the same session id in another tenant stays apart"
    with open_warehouse(warehouse) as con:
        assert con.execute("SELECT status FROM extracted_items WHERE item_id = ?", [rival_item]).fetchone() != (
            "accepted",
        )
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def test_the_openapi_description_is_served(api) -> None:
    base, _ = api
    with _client(base, None) as http:
        doc = http.get("/openapi.json").json()
    assert doc["openapi"].startswith("3.1")
    assert set(doc["paths"]) == {
        "/sessions/{session_id}/extracted-fields",
        "/sessions/{session_id}/state",
        "/extracted-fields/{field_id}",
        "/sessions/{session_id}/re-extract",
        "/extracted-fields/{field_id}/history",
    }
    assert "409" in doc["paths"]["/sessions/{session_id}/re-extract"]["post"]["responses"]


def test_the_runtime_reads_a_sessions_coverage(api) -> None:
    base, _ = api
    with _client(base) as http:
        state = http.get("/sessions/s-001/state")
        assert state.status_code == 200
        body = state.json()
        fields = {f["field_name"]: f for f in body["fields"]}
        assert fields["weekly_spend"]["covered"] and fields["weekly_spend"]["objective"] == "spend"
        assert fields["weekly_spend"]["turn_id"] == "t4" and fields["weekly_spend"]["extractor"] == "heuristic"
        assert body["light_error"] is None and body["status"] == "completed"
        assert http.get("/sessions/s-404/state").status_code == 404
    with _client(base, "rob") as rival:
        assert rival.get("/sessions/s-001/state").status_code == 403


def test_oversized_or_deeply_nested_bodies_and_long_notes_are_refused_and_nothing_is_stored(api) -> None:
    base, warehouse = api
    with _client(base) as http:
        spend = next(
            f
            for f in http.get("/sessions/s-001/extracted-fields").json()["fields"]
            if f["field_name"] == "weekly_spend"
        )
        url = f"/extracted-fields/{spend['id']}"
        huge = http.patch(url, json={"status": "accepted", "note": "x" * 2_000_000})
        assert huge.status_code == 413
        chunked = http.patch(
            url, content=iter([b'{"note": "', b"x" * 400_000, b'"}']), headers={"Content-Type": "application/json"}
        )
        assert chunked.status_code == 413  # no length declared: counted as it streams in
        deep = http.patch(url, content=b"[" * 100_000 + b"]" * 100_000, headers={"Content-Type": "application/json"})
        assert deep.status_code in (400, 413) and "Traceback" not in deep.text
        nested = http.patch(
            url,
            content=b'{"value": ' + b"[" * 20_000 + b"]" * 20_000 + b"}",
            headers={"Content-Type": "application/json"},
        )
        assert nested.status_code == 400 and "nested too deeply" in nested.text
        long_note = http.patch(url, json={"status": "accepted", "note": "x" * 5_000})
        assert long_note.status_code == 422
    with open_warehouse(warehouse) as con:
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def _page_form(html: str) -> dict[str, str]:
    found = {name: re.search(rf'name="{name}" value="([^"]+)"', html) for name in ("token", "version")}
    assert all(found.values()), found
    return {name: match.group(1) for name, match in found.items() if match}


def test_two_reviewers_on_the_page_and_the_api_lose_no_update(api) -> None:
    """Each writes against the version they read; whoever comes second gets 409 and the first one's work stays."""
    base, warehouse = api
    with _client(base) as mei, httpx.Client(base_url=base, auth=("lan", TOKENS["lan"][1]), timeout=30) as lan:
        spend = {f["field_name"]: f for f in mei.get("/sessions/s-001/extracted-fields").json()["fields"]}[
            "weekly_spend"
        ]
        url = f"/items/{spend['id']}"
        form = _page_form(lan.get(url).text)  # lan opens the page ...
        patched = mei.patch(
            f"/extracted-fields/{spend['id']}",
            json={"value": 310, "status": "needs_review", "version": spend["version"]},  # a second look wanted
        )
        assert patched.status_code == 200  # ... mei corrects through the API meanwhile ...
        stale_page = lan.post(f"{url}/correct", data={**form, "field.value": "290"})  # ... lan saves the old form
        assert stale_page.status_code == 409 and "changed since" in stale_page.text
        # the other way round: lan's page decision first, then mei's PATCH against the version mei last read
        form = _page_form(lan.get(url).text)
        assert lan.post(f"{url}/accept", data=form, follow_redirects=False).status_code == 303
        stale_api = mei.patch(
            f"/extracted-fields/{spend['id']}",
            json={"status": "rejected", "version": patched.json()["field"]["version"]},
        )
        assert stale_api.status_code == 409 and stale_api.json()["field"]["status"] == "accepted"
    with open_warehouse(warehouse) as con:
        rows = con.execute(
            "SELECT actor, action FROM audit_log WHERE item_id = ? ORDER BY seq", [spend["id"]]
        ).fetchall()
        value = one_row(con.execute("SELECT value FROM extracted_items WHERE item_id = ?", [spend["id"]]))[0]
    assert rows == [("mei", "correct"), ("lan", "accept")] and '"value": 310' in value
