"""No empty runs: after everything is done, nothing starts by itself, and a run with nothing to do says so without
replacing the last real run's figures."""

from __future__ import annotations

import logging
import tempfile

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.lib.settings import Settings
from extraction_assets.runner import run_pipeline

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


def test_a_run_with_nothing_to_do_keeps_the_partition_totals_and_leaves_run_figures_alone(settings: Settings) -> None:
    instance = dg.DagsterInstance.ephemeral()
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
