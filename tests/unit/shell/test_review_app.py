"""The review page over HTTP: tenant scope, escaping, the forms, the token, local hosts only."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extraction_assets.lib.review import history
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.web.review_app import create_review_app
from tests import review_seed
from tests.review_seed import HOSTILE, basic_auth, review_auth, seed, signed_in

BASE = "http://127.0.0.1"


@pytest.fixture
def site(tmp_path: Path) -> tuple[TestClient, Path, dict[str, str]]:
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    app = create_review_app(path, "acme", DEFAULT_PROMPTS, review_auth())
    return signed_in(TestClient(app, base_url=BASE), "ana"), path, ids


def _token(html: str) -> str:
    match = re.search(r'name="token" value="([^"]+)"', html)
    assert match
    return match.group(1)


def _form(html: str, **fields: str) -> dict[str, str]:
    """The token and the item's version a page's forms carry, with `fields`."""
    version = re.search(r'name="version" value="([^"]+)"', html)
    assert version
    return {"token": _token(html), "version": version.group(1), **fields}


def test_queue_lists_only_the_tenants_items(site) -> None:
    client, _, ids = site
    page = client.get("/")
    assert page.status_code == 200
    assert ids["acme:risk"] in page.text and ids["acme:decision"] in page.text
    assert ids["globex:commitment"] not in page.text
    assert ids["acme:commitment"] not in page.text, "a draft is not in the queue"
    assert ids["acme:commitment"] in client.get("/", params={"status": "draft"}).text
    assert ids["acme:decision"] not in client.get("/", params={"type": "risk"}).text
    assert "default-src 'none'" in page.headers["content-security-policy"]


def test_document_text_is_escaped(site) -> None:
    client, _, ids = site
    page = client.get(f"/items/{ids['acme:risk']}")
    assert page.status_code == 200
    assert HOSTILE not in page.text
    assert "&lt;script&gt;document.title=&#39;pwned&#39;" in page.text
    assert "<script" not in page.text.lower()
    assert '<mark id="ev-0"' in page.text, "the evidence is highlighted"


def test_another_tenants_item_is_not_found(site) -> None:
    client, path, ids = site
    foreign = ids["globex:commitment"]
    assert client.get(f"/items/{foreign}").status_code == 404
    form = _form(client.get(f"/items/{ids['acme:risk']}").text)
    response = client.post(f"/items/{foreign}/accept", data=form)
    assert response.status_code == 404
    with open_warehouse(path) as con:
        assert con.execute("SELECT status FROM extracted_items WHERE item_id = ?", [foreign]).fetchone() == (
            "needs_review",
        )


def test_correct_then_history_shows_it(site) -> None:
    client, path, ids = site
    item = f"/items/{ids['acme:risk']}"
    form = _form(client.get(item).text, **{"field.severity": "critical", "status": "accepted", "note": "worse"})
    response = client.post(f"{item}/correct", data=form, follow_redirects=False)
    assert response.status_code == 303
    page = client.get(response.headers["location"])
    assert "Correction saved." in page.text
    assert 'id="history-table"' in page.text and "ana" in page.text and "worse" in page.text
    with open_warehouse(path) as con:
        [entry] = history(con, "acme", ids["acme:risk"])
    assert entry.after_snapshot["value"] == {"severity": "critical"}
    assert entry.after_snapshot["status"] == "accepted"


def test_rule_breaking_changes_are_shown_not_applied(site) -> None:
    client, path, ids = site
    item, commitment = f"/items/{ids['acme:risk']}", f"/items/{ids['acme:commitment']}"
    page = client.get(item).text
    bad_enum = client.post(f"{item}/correct", data=_form(page, **{"field.severity": "doom"}))
    bad_date = client.post(
        f"{commitment}/correct", data=_form(client.get(commitment).text, **{"field.due_date": "next week"})
    )
    no_one = client.post(f"{item}/accept", data=_form(page), auth=("ana", "wrong-token"))
    no_version = client.post(f"{item}/accept", data={"token": _token(page)})
    assert (bad_enum.status_code, bad_date.status_code, no_one.status_code, no_version.status_code) == (
        422,
        422,
        401,
        428,
    )
    assert "severity &#39;doom&#39; is not one of" in bad_enum.text
    assert "due_date &#39;next week&#39; is not a date" in bad_date.text
    with open_warehouse(path) as con:
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def test_forms_need_the_servers_token_and_a_local_host(site) -> None:
    client, path, ids = site
    item = f"/items/{ids['acme:risk']}"
    assert client.post(f"{item}/accept", data={"token": "forged", "by": "eve"}).status_code == 403
    assert client.post(f"{item}/accept", data={"by": "eve"}).status_code == 403
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400
    with open_warehouse(path) as con:
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def test_a_forged_reviewer_name_is_recorded_as_the_signed_in_reviewer(site) -> None:
    client, path, ids = site
    item = f"/items/{ids['acme:risk']}"
    form = _form(client.get(item).text, by="the-ceo (spoofed)", reviewer="the-ceo (spoofed)", note="ok")
    assert client.post(f"{item}/accept", data=form, follow_redirects=False).status_code == 303
    with open_warehouse(path) as con:
        actors = con.execute("SELECT actor FROM audit_log").fetchall()
        updated_by = con.execute("SELECT updated_by FROM extracted_items WHERE item_id = ?", [ids["acme:risk"]])
        assert (actors, updated_by.fetchone()) == ([("ana",)], ("ana",))


def test_every_page_needs_a_reviewer_of_this_tenant(site) -> None:
    client, path, ids = site
    item = f"/items/{ids['acme:risk']}"
    anonymous = client.get(item, auth=None)
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Basic ")
    assert client.get(item, auth=("linh", "acme-ana-token-0002")).status_code == 401, "the name must be the token's"
    assert client.get(item, auth=basic_auth("gus", "globex")).status_code == 403, "a reviewer of another tenant"
    token = _token(client.get(item).text)
    assert client.post(f"{item}/accept", data={"token": token}, auth=None).status_code == 401
    assert client.get("/", auth=None, headers={"Authorization": "Bearer acme-linh-token-0001"}).status_code == 200
    with open_warehouse(path) as con:
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)


def test_one_server_serves_several_tenants_each_reviewer_seeing_only_theirs(tmp_path: Path) -> None:
    from extraction_assets.web.review_app import create_server_app

    path = tmp_path / "w.duckdb"
    ids = seed(path)
    app = create_server_app(path, ["acme", "globex"], DEFAULT_PROMPTS, review_auth())
    ana = signed_in(TestClient(app, base_url=BASE), "ana")
    acme_page = ana.get("/")
    assert acme_page.status_code == 200 and ids["acme:risk"] in acme_page.text
    assert ids["globex:commitment"] not in acme_page.text
    assert ana.get(f"/items/{ids['globex:commitment']}").status_code == 404  # another tenant's item: not found
    [(gus, tenant)] = [key for key in review_seed.TOKENS if key[1] == "globex"][:1]
    globex = signed_in(TestClient(app, base_url=BASE), gus, tenant)
    page = globex.get("/")
    assert page.status_code == 200 and ids["acme:risk"] not in page.text
    assert TestClient(app, base_url=BASE).get("/").status_code == 401  # nobody signed in
    assert TestClient(app, base_url=BASE).get("/openapi.json").status_code == 200


def test_each_reviewer_has_their_own_form_token(site) -> None:
    client, path, ids = site
    item = f"/items/{ids['acme:risk']}"
    anas = _form(client.get(item).text)
    linhs = _form(client.get(item, auth=basic_auth("linh")).text)
    assert anas["token"] != linhs["token"]
    # a page drawn for ana cannot be posted by linh's browser, nor the other way round: nothing is audited
    assert client.post(f"{item}/accept", data=anas, auth=basic_auth("linh")).status_code == 403
    assert client.post(f"{item}/accept", data=linhs).status_code == 403
    with open_warehouse(path) as con:
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (0,)
    assert client.post(f"{item}/accept", data=anas, follow_redirects=False).status_code == 303


def test_a_stale_form_is_refused_with_409_and_the_change_in_between_kept(site) -> None:
    client, path, ids = site
    item = f"/items/{ids['acme:risk']}"
    stale = _form(client.get(item).text, **{"field.severity": "low"})
    fresh = _form(client.get(item, auth=basic_auth("linh")).text, **{"field.severity": "critical"})
    assert (
        client.post(f"{item}/correct", data=fresh, auth=basic_auth("linh"), follow_redirects=False).status_code == 303
    )
    refused = client.post(f"{item}/correct", data=stale)
    assert refused.status_code == 409 and "changed since you opened it" in refused.text
    with open_warehouse(path) as con:
        [entry] = history(con, "acme", ids["acme:risk"])
    assert entry.after_snapshot["value"]["severity"] == "critical" and entry.actor == "linh"


def test_a_missed_item_is_added_without_script_from_the_typed_quote(site) -> None:
    client, path, ids = site
    with open_warehouse(path) as con:
        [(doc_id,)] = con.execute("SELECT doc_id FROM extracted_items WHERE item_id = ?", [ids["acme:risk"]]).fetchall()
    page = client.get(f"/documents/{doc_id}", params={"schema": "pulse@v1", "type": "commitment"})
    assert page.status_code == 200 and 'src="/static/select.js"' in page.text
    assert "<script>" not in page.text, "no inline script: the one script is a file of this server"
    policy = page.headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    script = client.get("/static/select.js")
    assert script.status_code == 200 and script.headers["content-type"].startswith("text/javascript")
    assert client.get("/static/../review_app.py").status_code == 404
    form = {
        "token": _token(page.text),
        "schema": "pulse@v1",
        "item_type": "commitment",
        "quote": "Should we hire two temps",
        "field.owner_name": "Ops",
    }
    added = client.post(f"/documents/{doc_id}/items", data=form, follow_redirects=False)
    assert added.status_code == 303
    shown = client.get(added.headers["location"])
    assert "Item added." in shown.text and "Ops" in shown.text
    missing = client.post(f"/documents/{doc_id}/items", data={**form, "quote": "nothing like it"})
    assert missing.status_code == 422 and "is not in the document" in missing.text
