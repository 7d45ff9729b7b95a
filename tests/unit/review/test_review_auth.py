"""Authentication of reviewers and API callers: tokens kept only as hashes, Bearer and Basic, the CLI's user."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from extraction_assets.lib.review.auth import (
    AuthConfig,
    Authenticator,
    AuthError,
    Principal,
    cli_actor,
    hash_token,
    load_auth,
    new_token,
)
from extraction_assets.web.openapi import openapi_document

DOCS = Path(__file__).resolve().parents[3] / "docs" / "openapi.json"


def _auth(token: str = "t0ken-linh") -> Authenticator:
    entry = {"name": "linh", "tenant": "acme", "token_sha256": hash_token(token)}
    return Authenticator(AuthConfig.model_validate({"principals": [entry]}))


def _basic(name: str, token: str) -> str:
    return "Basic " + base64.b64encode(f"{name}:{token}".encode()).decode()


def test_bearer_and_basic_name_the_tokens_principal() -> None:
    auth = _auth()
    linh = Principal(name="linh", tenant="acme")
    assert auth.from_header("Bearer t0ken-linh") == linh
    assert auth.from_header(_basic("linh", "t0ken-linh")) == linh
    assert auth.from_header(_basic("the-ceo", "t0ken-linh")) is None, "Basic's name must be the token's own"
    assert auth.from_header(_basic("林", "t0ken-linh")) is None, "any name, in any script"
    for header in (None, "", "Bearer", "Bearer wrong", "Basic !!!", "Token t0ken-linh", _basic("linh", "")):
        assert auth.from_header(header) is None, header


def test_a_token_in_clear_in_the_configuration_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "auth.yaml"
    config.write_text("principals:\n  - {name: linh, tenant: acme, token_sha256: t0ken-linh}\n", encoding="utf-8")
    with pytest.raises(AuthError, match="never the token itself"):
        load_auth(config)
    token = new_token()
    config.write_text(
        f"principals:\n  - {{name: linh, tenant: acme, token_sha256: {hash_token(token).upper()}}}\n", encoding="utf-8"
    )
    assert Authenticator(load_auth(config)).by_token(token) == Principal(name="linh", tenant="acme")
    assert token not in config.read_text(encoding="utf-8")


def test_no_configuration_lets_nobody_in(monkeypatch) -> None:
    monkeypatch.delenv("EXTRACTION_REVIEW_AUTH", raising=False)
    assert Authenticator(load_auth()).from_header("Bearer anything") is None


def test_naming_someone_else_on_the_command_line_needs_an_administrator(monkeypatch) -> None:
    from extraction_assets.lib.review import auth

    monkeypatch.setattr(auth, "os_user", lambda: "ops")
    assert cli_actor("ops", AuthConfig()) == ("ops", None), "naming oneself is no impersonation"
    with pytest.raises(AuthError, match="only an administrator"):
        cli_actor("dana", AuthConfig())
    assert cli_actor("dana", AuthConfig(cli_administrators=["ops"])) == ("dana", "entered by administrator ops")


def test_docs_hold_the_served_openapi_description() -> None:
    """docs/openapi.json is the description the server serves (regenerate it when the API changes)."""
    regenerate = "python -m extraction_assets.web.openapi > docs/openapi.json"
    assert json.loads(DOCS.read_text(encoding="utf-8")) == json.loads(json.dumps(openapi_document())), regenerate


def test_a_reviewer_added_while_the_server_runs_signs_in_at_once(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    from extraction_assets.lib.review.auth import add_reviewer
    from extraction_assets.lib.settings import DEFAULT_PROMPTS
    from extraction_assets.web.review_app import create_server_app
    from tests.review_seed import seed

    path, reviewers = tmp_path / "w.duckdb", tmp_path / "review-auth.yaml"
    seed(path)
    linh = add_reviewer(reviewers, "linh", "acme")
    auth = Authenticator.from_file(reviewers)
    app = create_server_app(path, ["acme"], DEFAULT_PROMPTS, auth, any_tenant=True)
    client = TestClient(app, base_url="http://127.0.0.1")
    assert client.get("/", auth=("linh", linh)).status_code == 200
    ana = add_reviewer(reviewers, "ana", "acme")  # while it runs
    gus = add_reviewer(reviewers, "gus", "globex")  # a tenant it did not serve yet
    assert client.get("/", auth=("ana", ana)).status_code == 200
    globex = client.get("/", auth=("gus", gus))
    assert globex.status_code == 200 and "tenant globex" in globex.text
    assert client.get("/", auth=("linh", linh)).status_code == 200
    replaced = add_reviewer(reviewers, "linh", "acme")  # a new token for linh: the old one stops working
    assert client.get("/", auth=("linh", linh)).status_code == 401
    assert client.get("/", auth=("linh", replaced)).status_code == 200
    reviewers.write_text("principals: [oops", encoding="utf-8")  # a broken file keeps who could sign in
    assert client.get("/", auth=("ana", ana)).status_code == 200 and auth.problem
