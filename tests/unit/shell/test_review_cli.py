"""`extraction-assets review ...`: JSON for scripts, exit codes, tenant scope, Label Studio files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from extraction_assets.cli import main
from extraction_assets.commands.review import EXIT_IMPORT_FAILURES, EXIT_INVALID, EXIT_NOT_FOUND, EXIT_STALE
from extraction_assets.lib.review import auth
from tests.review_seed import HOSTILE, ITEMS, SCHEMA, seed


@pytest.fixture
def review(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch):
    """Run `review <args>` for tenant acme and return (exit code, parsed JSON output)."""
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    monkeypatch.setenv("USER", "forged-by-env")  # anyone can set $USER: the operating-system user is recorded
    monkeypatch.setattr(auth, "os_user", lambda: "cli-user")

    def run(*args: str, tenant: str = "acme", as_json: bool = True) -> tuple[int, object]:
        extra = ["--json"] if as_json else []
        code = main(["review", *args, "--tenant", tenant, "--warehouse", str(path), *extra])
        out = capsys.readouterr().out
        return code, json.loads(out) if as_json else out

    run.ids = ids  # type: ignore[attr-defined]
    return run


def test_list_show_accept_history(review) -> None:
    ids = review.ids
    code, rows = review("list", "--reason", "below_threshold")
    assert code == 0 and [r["item_id"] for r in rows] == [ids["acme:decision"], ids["acme:risk"]]
    code, detail = review("show", ids["acme:risk"][:8])
    [evidence] = detail["evidence"]
    assert code == 0 and evidence["quote"] == ITEMS[1][2]
    assert evidence["after"].startswith(" " + HOSTILE[:8]), "the quote is shown with the text around it"
    assert detail["item"]["item_id"] == ids["acme:risk"]
    code, result = review("accept", ids["acme:risk"], "--note", "ok")
    assert code == 0 and result["changed"] and result["after"]["updated_by"] == "cli-user"
    code, again = review("accept", ids["acme:risk"])
    assert code == 0 and again["changed"] is False
    code, entries = review("history", ids["acme:risk"])
    assert [(e["actor"], e["action"], e["note"]) for e in entries] == [("cli-user", "accept", "ok")]
    code, rows = review("list")
    assert ids["acme:risk"] not in [r["item_id"] for r in rows]


def test_correct_with_values_and_status(review) -> None:
    item = review.ids["acme:decision"]
    code, result = review(
        "correct", item, "--value", '{"owner_name": "Sam"}', "--normalized-value", '"sam"', "--status", "rejected"
    )
    assert code == 0
    assert (result["after"]["value"], result["after"]["normalized_value"], result["after"]["status"]) == (
        {"owner_name": "Sam"},
        "sam",
        "rejected",
    )
    code, error = review("correct", item, "--value", "{broken")
    assert code == EXIT_INVALID and "not valid JSON" in error["error"]
    code, error = review("correct", review.ids["acme:risk"], "--value", '{"severity": "doom"}')
    assert code == EXIT_INVALID and "is not one of" in error["error"]


def test_another_tenant_cannot_see_or_change_an_item(review) -> None:
    foreign = review.ids["globex:commitment"]
    for command in (["show", foreign], ["accept", foreign], ["history", foreign], ["reject", foreign[:8]]):
        code, error = review(*command)
        assert code == EXIT_NOT_FOUND, command
        assert "not found in tenant 'acme'" in error["error"]
    code, rows = review("list", tenant="globex")
    assert [r["status"] for r in rows] == ["needs_review"], "globex's item was left alone"


def test_human_output_does_not_interpret_document_markup(review) -> None:
    code, out = review("show", review.ids["acme:risk"], as_json=False)
    assert code == 0
    assert "[bold]markup[/bold]" in out, "document text is printed as text, never as rich markup"
    assert HOSTILE[:20] in out


def test_rerun_preview(review) -> None:
    review("accept", review.ids["acme:risk"])
    code, preview = review("rerun-preview", "--schema", SCHEMA)
    assert code == 0
    assert (preview["would_overwrite"], preview["need_confirmation"]) == (2, 1)
    assert preview["message"].endswith("1 need confirmation (accepted, rejected or corrected by a person)")


def test_label_studio_export_and_import_files(review, tmp_path: Path) -> None:
    out = tmp_path / "ls" / "tasks.json"
    code, written = review("export", "--out", str(out))
    tasks = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and written["tasks"] == len(tasks) == 2
    assert "<Labels" in Path(written["label_config"]).read_text(encoding="utf-8")
    tasks[0]["annotations"] = [
        {"id": 1, "result": [{"from_name": "decision", "type": "choices", "value": {"choices": ["accepted"]}}]}
    ]
    tasks[1]["annotations"] = [
        {"id": 2, "result": [{"from_name": "value", "type": "textarea", "value": {"text": ["{nope"]}}]}
    ]
    annotated = tmp_path / "annotated.json"
    annotated.write_text(json.dumps(tasks), encoding="utf-8")
    code, report = review("import", str(annotated))
    assert code == EXIT_IMPORT_FAILURES
    assert report["applied"] == [tasks[0]["data"]["item_id"]] and len(report["failed"]) == 1
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    code, error = review("import", str(broken))
    assert code == EXIT_INVALID and "not a Label Studio JSON export" in error["error"]


def test_list_reads_on_an_80_column_terminal(review, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out = review("list", "--status", "any", as_json=False)
    lines = out.splitlines()
    assert code == 0 and max(len(line) for line in lines) <= 80
    assert any("December?" in line for line in lines), "titles wrap between words, not inside them"
    assert sum("below_threshold" in line for line in lines) == 2


def test_an_unknown_tenant_is_an_error(review) -> None:
    for command in (["list"], ["show", review.ids["acme:risk"]]):
        code, out = review(*command, tenant="acne")
        assert code == EXIT_INVALID and "unknown tenant 'acne'" in out["error"]
        assert "acme" not in out["error"] and "globex" not in out["error"]  # no other tenant is named


def test_an_unknown_rule_is_an_error_naming_the_rules(review) -> None:
    from extraction_assets.commands.review import ANY_STATUS
    from extraction_assets.lib import review as review_lib

    code, out = review("list", "--reason", "bogus")
    assert code == EXIT_INVALID and "unknown rule 'bogus'" in out["error"] and "below_threshold" in out["error"]
    assert ANY_STATUS == review_lib.ANY_STATUS, "the parser spells the library's 'any status' the same way"


def test_only_an_administrator_records_a_change_under_another_name(review, tmp_path: Path, monkeypatch) -> None:
    item = review.ids["acme:risk"]
    code, refused = review("accept", item, "--by", "the-ceo")
    assert code == EXIT_INVALID and "only an administrator" in refused["error"]
    config = tmp_path / "review-auth.yaml"
    config.write_text("cli_administrators: [cli-user]\n", encoding="utf-8")
    monkeypatch.setenv(auth.AUTH_ENV, str(config))
    code, result = review("accept", item, "--by", "dana", "--note", "on the phone")
    assert code == 0 and result["audit"]["actor"] == "dana"
    assert result["audit"]["note"] == "on the phone; entered by administrator cli-user"


def test_the_operating_system_user_is_the_process_owner_not_user() -> None:
    import os
    import pwd

    assert auth.os_user() == pwd.getpwuid(os.geteuid()).pw_name
    assert auth.cli_actor(None, auth.AuthConfig()) == (auth.os_user(), None)


def test_a_token_is_printed_once_and_only_its_hash_is_configured(review) -> None:
    code, entry = review("token", "--name", "linh")
    assert code == 0 and entry["token_sha256"] == auth.hash_token(entry["token"])
    config = auth.AuthConfig.model_validate({"principals": [{k: entry[k] for k in ("name", "tenant", "token_sha256")}]})
    assert auth.Authenticator(config).by_token(entry["token"]) == auth.Principal(name="linh", tenant="acme")


def test_the_review_commands_that_read_do_not_load_the_extraction_stack() -> None:
    """A reviewer's command starts as a fresh process, often while a run writes: its imports are its start-up time.
    The prompt files' YAML and the schemas load only for the commands that change items."""
    import subprocess
    import sys

    probe = (
        "import sys\nimport extraction_assets.commands.review_handlers\n"
        "print(sorted(n for n in sys.modules if n.startswith(('extraction_assets.lib.extraction', "
        "'extraction_assets.lib.llm', 'extraction_assets.lib.heuristics', 'openai', 'instructor', "
        "'extraction_assets.lib.schemas', 'yaml', 'xml.sax'))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_each_command_opens_the_warehouse_once(review, monkeypatch) -> None:
    """The tenant is checked on the command's own connection: while a run writes, every open waits for a gap
    between the run's transactions, so a second one doubled the wait."""
    from extraction_assets.commands import review_handlers

    opened: list[bool] = []
    real = review_handlers.open_warehouse

    def counted(path, read_only=False, wait_seconds=0.0):
        opened.append(read_only)
        return real(path, read_only=read_only, wait_seconds=wait_seconds)

    monkeypatch.setattr(review_handlers, "open_warehouse", counted)
    for command in (["list"], ["show", review.ids["acme:risk"]], ["history", review.ids["acme:risk"]]):
        opened.clear()
        code, _ = review(*command)
        assert code == 0 and opened == [True], command
    opened.clear()
    code, _ = review("accept", review.ids["acme:risk"])
    assert code == 0 and opened == [False]


def test_a_reviewer_is_set_up_in_one_command_and_can_sign_in(review, tmp_path: Path, monkeypatch) -> None:
    """`review add-reviewer` writes the token's hash (the file readable by its owner only) and says how to sign in."""
    import stat

    target = tmp_path / "auth" / "review-auth.yaml"
    monkeypatch.setenv(auth.AUTH_ENV, str(target))
    code, said = review("add-reviewer", "--name", "linh")
    assert code == 0 and said["file"] == str(target) and said["tenant"] == "acme"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and said["token"] not in target.read_text()
    signed = auth.Authenticator(auth.load_auth()).by_token(said["token"])
    assert signed == auth.Principal(name="linh", tenant="acme")
    code, _ = review("add-reviewer", "--name", "linh")  # a new token replaces the old one
    assert code == 0 and auth.Authenticator(auth.load_auth()).by_token(said["token"]) is None
    assert [p.name for p in auth.load_auth().principals] == ["linh"]
    code, text = review("add-reviewer", "--name", "ana", as_json=False)
    assert "extraction-assets review serve" in str(text) and "sign in: user ana" in str(text)


def test_several_items_or_a_group_in_one_decision_and_a_stale_version_refused(review) -> None:
    ids = review.ids
    code, result = review("reject", ids["acme:risk"], ids["acme:decision"][:8], "--note", "noise")
    assert code == 0 and result["decision_id"] and len(result["results"]) == 2
    assert {r["audit"]["decision_id"] for r in result["results"]} == {result["decision_id"]}
    code, groups = review("list", "--groups", tenant="globex")
    [group] = groups
    assert code == 0 and (group["size"], group["queued"]) == (1, 1)
    code, result = review("accept", "--group", group["group_id"][:8], tenant="globex")
    assert code == 0 and result["group_id"] == group["group_id"] and len(result["results"]) == 1
    code, error = review("accept", ids["acme:commitment"], "--group", group["group_id"])
    assert code == EXIT_INVALID and "not both" in error["error"]
    code, detail = review("show", ids["acme:commitment"])
    version = detail["version"]
    code, _ = review("accept", ids["acme:commitment"], "--version", version)
    assert code == 0
    code, error = review("reject", ids["acme:commitment"], "--version", version)
    assert code == EXIT_STALE and "changed since" in error["error"]
