"""No empty runs: after everything is done, nothing starts by itself, and a run with nothing to do says so without
replacing the last real run's figures."""

from __future__ import annotations

import logging
import tempfile
from pathlib import Path

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.runner import AUDIT_STEP, run_pipeline

PULSE_STEP = "extract pulse@v1"


def _items_metadata(results: list, step: str = PULSE_STEP) -> dict:
    return next(r for r in results if r.name == step).metadata["extracted_items"]


def test_after_a_full_run_neither_sensor_starts_a_run(settings: Settings) -> None:
    """What `make ui` finds after `make demo`: the same instance, every partition already materialized."""
    defs = build_definitions(settings)
    with tempfile.TemporaryDirectory() as home:
        instance = dg.DagsterInstance.local_temp(home)
        run_pipeline(settings, instance=instance)
        pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(settings.prompts_dir))
        tick = schema_version_sensor(dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline}))
        assert not tick.run_requests and not tick.dynamic_partitions_requests
        assert tick.skip_reason and "no new or removed prompt files" in (tick.skip_reason.skip_message or "")
        automation = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        assert automation.total_requested == 0


def test_a_run_with_nothing_to_do_keeps_the_partition_totals_and_leaves_run_figures_alone(
    settings: Settings, tmp_path: Path
) -> None:
    """With a kept instance (what the UI shows) every partition is run, and an idle run says so."""
    (home := tmp_path / "home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(home))
    first = _items_metadata(run_pipeline(settings, instance=instance))
    idle = _items_metadata(run_pipeline(settings, instance=instance))
    assert first["items_stored"] > 0 and "run" not in first
    assert idle["run"] == "nothing to do"
    assert idle["documents_processed"] == 0
    assert idle["dagster/row_count"] == first["dagster/row_count"]
    assert idle["needs_review_items"] == first["needs_review_items"]
    for per_run in ("items_stored", "items_proposed", "model_calls", "extract_seconds", "outcomes"):
        assert per_run not in idle, per_run


def _warnings(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    return [e.user_message for e in instance.all_logs(run_id) if e.level == logging.WARNING]


def test_unreadable_files_are_warned_about_once(settings: Settings) -> None:
    defs = build_definitions(settings)
    instance = dg.DagsterInstance.ephemeral()
    runs = [
        dg.materialize(
            list(defs.assets or []), instance=instance, resources=defs.resources, selection=["raw_documents"]
        )
        for _ in range(2)
    ]
    first, second = (_warnings(instance, run.run_id) for run in runs)
    assert any("unreadable" in w for w in first)
    assert not any("unreadable" in w for w in second), "already in dead_letters: no new warning"
    (settings.inbox / "acme" / "broken-later.txt").write_bytes(b"\xff\xfe\x00 not utf-8 \x81")
    third = dg.materialize(
        list(defs.assets or []), instance=instance, resources=defs.resources, selection=["raw_documents"]
    )
    assert [w for w in _warnings(instance, third.run_id) if "unreadable" in w and "broken-later" in w]


def _by_name(results: list, name: str):
    return next(r for r in results if r.name == name)


def _extraction_runs(instance: dg.DagsterInstance) -> list[str]:
    return [
        r.tags.get("dagster/partition", "")
        for r in instance.get_runs()
        if r.tags.get("extraction_assets/step", "").startswith("extract ")
    ]


def test_without_a_kept_instance_a_current_partition_is_not_run_again(settings: Settings) -> None:
    """Nothing keeps the runs (no DAGSTER_HOME): a partition with nothing new to route or extract and its queue in
    step gets no run at all; the audit log is checked all the same; a new document runs what it concerns again."""
    instance = dg.DagsterInstance.ephemeral()
    first = run_pipeline(settings, instance=instance)
    versions = [r.name for r in first if r.name.startswith("extract ")]
    assert versions and not any(r.current for r in first)
    runs_before = len(_extraction_runs(instance))
    again = run_pipeline(settings, instance=instance)
    assert [r.name for r in again if r.current] == versions
    assert all(r.success for r in again)
    assert len(_extraction_runs(instance)) == runs_before, "a current partition started a run"
    audit = next(r for r in again if r.name == "check audit_log")
    assert audit.success and not audit.failed_checks and audit.step_seconds
    (settings.inbox / "acme" / "pulses" / "2026-12-01-new.md").write_text(
        "Team check-in. Dana: I will send the vendor contract to legal by Friday.\n", encoding="utf-8"
    )
    third = run_pipeline(settings, instance=instance)
    ran = [r.name for r in third if r.name.startswith("extract ") and not r.current]
    assert PULSE_STEP in ran, "the new check-in is pulse@v1's to route and extract"
    assert all(r.success and not r.failed_checks for r in third)
    assert "extraction_invariants" in _by_name(third, PULSE_STEP).step_seconds
    # support_ticket@v1 reads notes too: its run routes the check-in away, stores nothing, so materializes nothing
    routed_away = _by_name(third, "extract support_ticket@v1")
    assert "extracted_items" not in routed_away.metadata and "review_queue" not in routed_away.metadata
    assert list(routed_away.step_seconds) == ["extracted_items_and_evidence"], "no checks, no queue after it"
    assert sum(AUDIT_STEP in r.step_seconds for r in third) == 1, "the audit log is checked once all the same"


def test_a_queue_out_of_step_with_its_items_runs_its_partition_again(settings: Settings) -> None:
    """A run killed between extraction and the queue's rebuild leaves the queue behind: that partition is not
    current, so the next run rebuilds it."""
    instance = dg.DagsterInstance.ephemeral()
    run_pipeline(settings, instance=instance)
    with open_warehouse(settings.warehouse) as con:
        queued = con.execute("SELECT count(*) FROM review_queue WHERE schema_version = 'pulse@v1'").fetchone()[0]
        assert queued > 0
        con.execute("DELETE FROM review_queue WHERE schema_version = 'pulse@v1'")
    again = run_pipeline(settings, instance=instance)
    pulse = next(r for r in again if r.name == PULSE_STEP)
    assert not pulse.current and pulse.success
    assert [r.name for r in again if r.current] and all(r.name != PULSE_STEP for r in again if r.current)
    with open_warehouse(settings.warehouse, read_only=True) as con:
        rebuilt = con.execute("SELECT count(*) FROM review_queue WHERE schema_version = 'pulse@v1'").fetchone()[0]
    assert rebuilt == queued
