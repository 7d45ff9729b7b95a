"""A challenger version through the real assets: one command from its prompt file to the side-by-side comparison on
the reviewers' decisions and the dev sets, only disagreements queued, and an audited promotion the Dagster UI shows."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from evals.bench_inbox import evalsets_dir
from extraction_assets.cli import main
from extraction_assets.lib.review import corrections
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.runner import run_challenger, run_pipeline
from tests.conftest import with_front_matter
from tests.one_row import one_row

PULSE = "pulse@v1"
TENANT = "acme"


@pytest.fixture
def reviewed(settings: Settings) -> Settings:
    """The sample extracted under pulse@v1, two of acme's queued items decided, then a challenger pulse@v2 that keeps
    at most three items a document."""
    assert all(step.success for step in run_pipeline(settings, schema_keys=[PULSE]))
    with open_warehouse(settings.warehouse) as con:
        queued = [
            r[0]
            for r in con.execute(
                "SELECT item_id FROM review_queue WHERE tenant_id = ? ORDER BY priority DESC, item_id", [TENANT]
            ).fetchall()
        ]
        corrections.accept(con, TENANT, queued[0], "ana")
        corrections.reject(con, TENANT, queued[1], "ana")
    v1 = (settings.prompts_dir / "pulse" / "v1.md").read_text(encoding="utf-8")
    v2 = v1.replace("version: v1", "version: v2").replace("max_items: 10", "max_items: 3")
    (settings.prompts_dir / "pulse" / "v2.md").write_text(with_front_matter(v2, "challenger: true\n"), encoding="utf-8")
    return settings


def test_one_command_from_prompt_file_to_comparison_then_an_audited_promotion(
    reviewed: Settings, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = reviewed
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    monkeypatch.setenv("EXTRACTION_INBOX", str(settings.inbox))
    where = ["--warehouse", str(settings.warehouse), "--prompts", str(settings.prompts_dir)]
    code = main(["challenger", "pulse@v2", "--limit", "3", "--json", *where])
    shown = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert code == 0 and shown["success"] and shown["challengers"] == 1
    comparison = shown["pulse@v2/comparison"]
    assert "#### reviewed:acme" in comparison
    if (
        evalsets_dir() / "qmsum_meetings"
    ).is_dir():  # the public dev sets sit beside the project where they are installed
        assert "#### qmsum_meetings" in comparison
    assert "pulse@v1 (" in comparison and "pulse@v2 (" in comparison, "both versions side by side"
    assert shown["pulse@v2/disagreements_queued"] > 0
    with open_warehouse(settings.warehouse) as con:
        rules = dict(
            con.execute(
                "SELECT q.schema_version, list(DISTINCT split_part(r.reason, ':', 1) ORDER BY 1) FROM review_queue q, "
                "unnest(CAST(q.reasons AS VARCHAR[])) AS r(reason) GROUP BY 1"
            ).fetchall()
        )
        doubtful = one_row(
            con.execute(
                "SELECT count(*) FROM extracted_items WHERE schema_version = 'pulse@v2' AND status = 'needs_review'"
            )
        )[0]
    # v2 keeps fewer items a document: v1's others are queued as disagreements; v2's own doubts are not queued
    assert "challenger_disagrees" in rules["pulse@v1"] and doubtful > 0
    assert rules.get("pulse@v2", ["challenger_disagrees"]) == ["challenger_disagrees"]

    instance = dg.DagsterInstance.ephemeral()
    code = main(["challenger", "pulse@v2", "--promote", "--note", "fewer, better items", "--json", *where])
    promoted = json.loads(capsys.readouterr().out.strip().splitlines()[-1])["promoted"]
    assert code == 0 and (promoted["promoted"], promoted["superseded"]) == ("pulse@v2", ["pulse@v1"])
    shown_in_ui = run_challenger(settings, None, instance=instance)  # what the UI shows after a promotion
    event = instance.get_latest_materialization_event(dg.AssetKey("challenger_comparison"))
    assert shown_in_ui.success and event is not None
    assert event.asset_materialization is not None
    promotions = event.asset_materialization.metadata["promotions"].value
    assert (
        isinstance(promotions, list)
        and promotions[0]["promoted"] == "pulse@v2"
        and promotions[0]["note"] == "fewer, better items"
    )
    with open_warehouse(settings.warehouse) as con:
        audit = con.execute("SELECT action, item_id, tenant_id FROM audit_log WHERE action = 'promote'").fetchall()
        v1_queue = one_row(con.execute("SELECT count(*) FROM review_queue WHERE schema_version = 'pulse@v1'"))[0]
    assert audit == [("promote", "pulse@v2", "*")] and v1_queue == 0, "the superseded version queues nothing"
    code = main(["challenger", "pulse@v2", "--promote", *where])
    assert code == 2 and "is current, not a challenger" in capsys.readouterr().out
