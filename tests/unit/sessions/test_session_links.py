"""A tenant's live session folder under attack: real symbolic links to another tenant's session, to a file outside the
sessions folder, a tenant folder that is a link, a folder swapped for a link between listing and reading, and a
session that names a prompt file by path. None of it may reach the tenant's documents, items or prompts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extraction_assets.lib.extraction import build_extractor
from extraction_assets.lib.sessions import HeuristicLight, SessionEnv, session_files, sync_session, sync_sessions
from extraction_assets.lib.settings import ModelSettings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from tests.session_seed import TURNS, append, turn, whole_session, with_objectives

SECRET = "这是兰亭的机密：毛利率31%。"  # what only the tenant lanting said


@pytest.fixture
def folder(tmp_path: Path, prompts: Path) -> tuple[SessionEnv, Path, Path]:
    """Two tenants' sessions: lanting's completed interview (with its secret) and evil's own."""
    with_objectives(prompts)
    sessions = tmp_path / "sessions"
    whole_session(sessions / "lanting" / "s-001.jsonl")
    append(sessions / "lanting" / "s-001.jsonl", turn("t7", "受访者", SECRET))
    append(sessions / "evil" / "own.jsonl", turn(*TURNS[0]), turn(*TURNS[1]))
    env = SessionEnv(
        sessions_dir=sessions, prompts_dir=prompts, extractor=build_extractor(ModelSettings()), light=HeuristicLight()
    )
    return env, sessions, tmp_path / "w.duckdb"


def _connect(warehouse: Path):
    return lambda: open_warehouse(warehouse)


def _rows(warehouse: Path, sql: str) -> list[dict]:
    with open_warehouse(warehouse) as con:
        return rows_as_dicts(con, sql)


def _texts_outside_lanting(warehouse: Path) -> list[str]:
    return [r["text"] for r in _rows(warehouse, "SELECT text FROM raw_documents WHERE tenant_id <> 'lanting'")]


def test_links_out_of_a_tenant_are_never_read_into_it(folder) -> None:
    env, sessions, warehouse = folder
    outside = sessions.parent / "outside.jsonl"
    append(outside, turn("t1", "受访者", "a file outside the sessions folder"))
    evil = sessions / "evil"
    (evil / "steal.jsonl").symlink_to(sessions / "lanting" / "s-001.jsonl")  # another tenant's session
    (evil / "relative.jsonl").symlink_to("../lanting/s-001.jsonl")
    (evil / "outside.jsonl").symlink_to(outside)  # a file outside the sessions folder
    (sessions / "mirror").symlink_to(sessions / "lanting")  # a tenant folder that is a link
    (evil / "alias.jsonl").symlink_to("own.jsonl")  # inside its own folder: read, as in the inbox

    reports = {f"{r.tenant_id}/{r.session_id}": r for r in sync_sessions(_connect(warehouse), env)}

    texts = _texts_outside_lanting(warehouse)
    assert texts and not any(SECRET in t or "outside the sessions" in t for t in texts)
    sessions_read = {(r["tenant_id"], r["session_id"]) for r in _rows(warehouse, "SELECT * FROM sessions")}
    assert sessions_read == {("lanting", "s-001"), ("evil", "own"), ("evil", "alias")}
    letters = {r["source_uri"]: r["reason"] for r in _rows(warehouse, "SELECT * FROM dead_letters")}
    for name in ("evil/steal.jsonl", "evil/relative.jsonl", "evil/outside.jsonl", "mirror"):
        assert letters[name] == "session: link outside the tenant folder", name
    refused = sorted(key for key, r in reports.items() if r.status == "unreadable")
    assert refused == ["_no_tenant/mirror", "evil/outside", "evil/relative", "evil/steal"]
    assert not _rows(warehouse, "SELECT * FROM extracted_items WHERE tenant_id NOT IN ('lanting', 'evil')")


def test_a_folder_swapped_for_a_link_after_the_listing_is_not_followed(folder) -> None:
    """The listing saw evil/own.jsonl as evil's own file; before it is read, evil becomes a link to lanting's folder
    holding an own.jsonl of lanting's."""
    env, sessions, warehouse = folder
    [entry] = [e for e in session_files(sessions) if e.rel == "evil/own.jsonl"]
    shutil.copy(sessions / "lanting" / "s-001.jsonl", sessions / "lanting" / "own.jsonl")
    shutil.rmtree(sessions / "evil")
    (sessions / "evil").symlink_to("lanting")
    report = sync_session(_connect(warehouse), env, entry, None)
    assert report.status == "unreadable" and "no longer a folder" in (report.error or "")
    assert _texts_outside_lanting(warehouse) == []


@pytest.mark.parametrize(
    "named",
    [
        "../sessions/evil/mine@v1",  # the tenant's own prompt file, by a relative path
        "interview/../../sessions/evil/mine@v1",
        "mine@v1",  # a well-formed key with no prompt file
    ],
)
def test_a_session_names_a_schema_version_of_the_prompts_folder_never_a_path(folder, named: str) -> None:
    env, sessions, warehouse = folder
    mine = sessions / "evil" / "mine" / "v1.md"  # written by the tenant, inside its own session folder
    mine.parent.mkdir(parents=True)
    interview = (env.prompts_dir / "interview" / "v1.md").read_text(encoding="utf-8")
    mine.write_text(interview.replace("schema: interview", "schema: mine"), encoding="utf-8")
    append(sessions / "evil" / "own.jsonl", {"schema_version": named, "status": "completed"})

    reports = {f"{r.tenant_id}/{r.session_id}": r for r in sync_sessions(_connect(warehouse), env)}

    assert reports["evil/own"].status == "unreadable"
    assert "schema version" in (reports["evil/own"].error or "")
    assert not _rows(warehouse, "SELECT * FROM extracted_items WHERE schema_version LIKE '%mine%'")
    [letter] = _rows(warehouse, "SELECT reason FROM dead_letters WHERE source_uri = 'evil/own.jsonl'")
    assert "schema version" in letter["reason"]
    assert reports["lanting/s-001"].final_items, "the other tenant's session is extracted as before"
