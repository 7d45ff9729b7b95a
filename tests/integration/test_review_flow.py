"""End to end through the real assets: people's work survives re-runs unless confirmed; the audit check."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from extraction_assets.cli import main
from extraction_assets.commands.review import EXIT_NEEDS_CONFIRMATION
from extraction_assets.lib.review import Change, corrections
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from extraction_assets.runner import rerun_partition, run_pipeline

PULSE = "pulse@v1"
TENANT = "acme"
AUDIT_CHECK = "review_queue:audit_log_intact"


def _items(settings: Settings, tenant: str | None = None) -> dict[str, dict]:
    with open_warehouse(settings.warehouse) as con:
        rows = rows_as_dicts(
            con,
            """SELECT item_id, tenant_id, schema_version, status, extracted_by, value, updated_by, updated_at
               FROM extracted_items WHERE CAST(? AS VARCHAR) IS NULL OR tenant_id = ?""",
            [tenant, tenant],
        )
    return {r["item_id"]: r for r in rows}


def _status_rows(settings: Settings, tenant: str) -> list[tuple]:
    with open_warehouse(settings.warehouse) as con:
        return con.execute(
            "SELECT doc_id, attempts, updated_at FROM extraction_status WHERE tenant_id = ? AND schema_version = ? "
            "ORDER BY doc_id",
            [tenant, PULSE],
        ).fetchall()


@pytest.fixture
def reviewed(settings: Settings) -> tuple[Settings, dg.DagsterInstance, list[str]]:
    """The sample inbox extracted, then three of acme's items decided by people."""
    instance = dg.DagsterInstance.ephemeral()
    assert all(step.success for step in run_pipeline(settings, schema_keys=[PULSE], instance=instance))
    with open_warehouse(settings.warehouse) as con:
        queued = [
            r[0]
            for r in con.execute(
                "SELECT item_id FROM review_queue WHERE tenant_id = ? AND schema_version = ? ORDER BY 1",
                [TENANT, PULSE],
            ).fetchall()
        ]
        corrections.accept(con, TENANT, queued[0], "ana")
        corrections.reject(con, TENANT, queued[1], "ben")
        corrections.apply_change(con, TENANT, queued[2], Change(value={"owner_name": "Linh"}), "cho", "correct")
    return settings, instance, queued[:3]


def test_rerun_refuses_without_confirmation_keeps_on_request_and_overwrites_when_confirmed(
    reviewed, capsys: pytest.CaptureFixture[str], monkeypatch
) -> None:
    settings, instance, decided = reviewed
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    before = _items(settings)
    other_tenant_status = _status_rows(settings, "saigon-foods")
    acme_status = _status_rows(settings, TENANT)

    # 409-style: asked to re-run over people's work without --confirm, nothing changes
    code = main(
        ["review", "rerun", "--schema", PULSE, "--tenant", TENANT, "--warehouse", str(settings.warehouse), "--json"]
    )
    refusal = json.loads(capsys.readouterr().out)
    assert code == EXIT_NEEDS_CONFIRMATION
    assert refusal["refused"] and refusal["need_confirmation"] == 3
    assert "3 need confirmation" in refusal["message"] and "--confirm" in refusal["message"]
    assert _items(settings) == before and _status_rows(settings, TENANT) == acme_status

    # re-run keeping people's items: every acme document re-extracted, the three decisions untouched
    kept = rerun_partition(settings, PULSE, tenant_id=TENANT, instance=instance)
    meta = kept.metadata["extracted_items"]
    assert kept.success and not kept.failed_checks
    assert meta["documents_processed"] == len(acme_status) and meta["forced"] is True
    assert meta["kept_needing_confirmation"] == 3 and meta["overwritten_with_confirmation"] == 0
    after_keep = _items(settings)
    for item_id in decided:
        assert after_keep[item_id] == before[item_id]
    assert len(after_keep) == len(before), "a forced re-run of the same version adds no items"
    assert _status_rows(settings, "saigon-foods") == other_tenant_status, "another tenant's documents untouched"
    assert {a for _, a, _ in _status_rows(settings, TENANT)} == {attempts + 1 for _, attempts, _ in acme_status}

    # confirmed: the machine's results replace the decisions; the audit trail of them stays
    confirmed = rerun_partition(settings, PULSE, tenant_id=TENANT, confirm_overwrite=True, instance=instance)
    assert confirmed.metadata["extracted_items"]["overwritten_with_confirmation"] == 3
    after_confirm = _items(settings)
    for item_id in decided:
        assert after_confirm[item_id]["extracted_by"] == "heuristic"
        assert after_confirm[item_id]["status"] in ("draft", "needs_review")
        assert after_confirm[item_id]["updated_by"] is None
    with open_warehouse(settings.warehouse) as con:
        assert con.execute("SELECT count(*) FROM audit_log").fetchone() == (3,)
        queue = {r[0] for r in con.execute("SELECT item_id FROM review_queue").fetchall()}
    assert set(decided) <= queue, "overwritten items are back in the queue"


def test_a_new_schema_version_leaves_the_old_results_and_decisions_in_place(reviewed) -> None:
    settings, instance, decided = reviewed
    v1 = _items(settings)
    v2 = (settings.prompts_dir / "pulse" / "v1.md").read_text(encoding="utf-8").replace("version: v1", "version: v2")
    (settings.prompts_dir / "pulse" / "v2.md").write_text(v2, encoding="utf-8")
    steps = run_pipeline(settings, schema_keys=["pulse@v2"], instance=instance)
    assert all(s.success for s in steps)
    both = _items(settings)
    assert {k: v for k, v in both.items() if v["schema_version"] == PULSE} == v1
    assert sum(v["schema_version"] == "pulse@v2" for v in both.values()) == len(v1)
    assert all(both[i]["extracted_by"] == "human" for i in decided)


def test_the_audit_check_passes_then_fails_when_a_row_is_tampered_with(reviewed) -> None:
    settings, instance, decided = reviewed
    first = run_pipeline(settings, schema_keys=[PULSE], instance=instance)
    assert all(AUDIT_CHECK not in s.failed_checks for s in first)
    with open_warehouse(settings.warehouse) as con:
        assert con.execute("SELECT row_count FROM audit_log_heads").fetchall() == [(3,)]
        con.execute("UPDATE audit_log SET actor = 'someone else' WHERE item_id = ?", [decided[0]])
    second = run_pipeline(settings, schema_keys=[PULSE], instance=instance)
    assert any(AUDIT_CHECK in s.failed_checks for s in second)


def test_a_run_checks_the_audit_log_once_for_every_version(reviewed, tmp_path) -> None:
    """The log is one chain for every version: a run of several versions checks it once (the queue's step)."""
    settings, instance, _ = reviewed
    (home := tmp_path / "home").mkdir()
    kept = dg.DagsterInstance.local_temp(str(home))
    for chosen, where in (([PULSE, "email@v1"], kept), (["email@v1", PULSE, "receipt@v1"], instance)):
        steps = run_pipeline(settings, schema_keys=chosen, instance=where)
        assert all(s.success and not s.failed_checks for s in steps)
        [run_id] = {s.run_id for s in steps}
        assert run_id is not None
        checked = [
            e
            for e in where.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
            if e.dagster_event is not None
            and e.dagster_event.asset_check_evaluation_data.check_name == "audit_log_intact"
        ]
        assert len(checked) == 1
