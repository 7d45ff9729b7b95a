"""No empty runs: after everything is done, nothing starts by itself, and a run with nothing to do says so without
replacing the last real run's figures."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX, Settings
from extraction_assets.lib.warehouse import give_back, held_warehouse, open_warehouse
from extraction_assets.lib.warehouse import held as held_module
from extraction_assets.runner import StepResult, run_pipeline
from tests.dagster_results import materializable, sensor_result
from tests.one_row import one_row

PULSE_STEP = "extract pulse@v1"


@dataclass(frozen=True)
class Looked:
    """What the two sensors ask for when they look at an instance: the prompt-file sensor's tick, the automation's
    requests."""

    schema_tick: dg.SensorResult
    automation_requested: int


def _sensors_look(settings: Settings, instance: dg.DagsterInstance) -> Looked:
    """One look of each sensor at `instance`, launching nothing."""
    pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(settings.prompts_dir))
    tick = schema_version_sensor(dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline}))
    automation = dg.evaluate_automation_conditions(defs=build_definitions(settings), instance=instance)
    return Looked(sensor_result(tick), automation.total_requested)


@dataclass(frozen=True)
class TwoPasses:
    """A pass on the sample, then a pass with nothing new, on a kept instance (what the UI shows)."""

    settings: Settings
    instance: dg.DagsterInstance
    first: list[StepResult]
    after_first: Looked  # what the sensors asked for between the two passes
    again: list[StepResult]
    done: Path  # a copy of the warehouse after the two passes: every version extracted, every queue built


@pytest.fixture(scope="module")
def two_passes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwoPasses]:
    """Made once for the tests that read the two passes' results and runs, and what the sensors asked for between
    them; the file's last test then materializes on the kept instance (a person's clicks after the passes)."""
    tmp = tmp_path_factory.mktemp("two-passes")
    shutil.copytree(SAMPLE_INBOX, tmp / "inbox", ignore=shutil.ignore_patterns("README.md"))
    shutil.copytree(DEFAULT_PROMPTS, tmp / "prompts")
    settings = Settings(warehouse=tmp / "warehouse.duckdb", inbox=tmp / "inbox", prompts_dir=tmp / "prompts")
    (home := tmp / "home").mkdir()
    instance = dg.DagsterInstance.local_temp(str(home))
    first = run_pipeline(settings, instance=instance)
    after_first = _sensors_look(settings, instance)
    again = run_pipeline(settings, instance=instance)
    shutil.copy(settings.warehouse, done := tmp / "done.duckdb")
    yield TwoPasses(settings, instance, first, after_first, again, done)
    instance.dispose()


def _items_metadata(results: list, step: str = PULSE_STEP) -> dict:
    return next(r for r in results if r.name == step).metadata["extracted_items"]


def test_after_a_full_run_neither_sensor_starts_a_run(two_passes: TwoPasses) -> None:
    """What `make ui` finds after `make demo`: the same instance, every partition already materialized (the sensors
    looked after the first pass, before the second)."""
    tick = two_passes.after_first.schema_tick
    assert not tick.run_requests and not tick.dynamic_partitions_requests
    assert tick.skip_reason and "no new or removed prompt files" in (tick.skip_reason.skip_message or "")
    assert two_passes.after_first.automation_requested == 0


def test_a_run_with_nothing_to_do_keeps_the_partition_totals_and_leaves_run_figures_alone(
    two_passes: TwoPasses,
) -> None:
    """With a kept instance (what the UI shows) every partition is run, and an idle run says so."""
    first = _items_metadata(two_passes.first)
    idle = _items_metadata(two_passes.again)
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
            materializable(defs, checks=False), instance=instance, resources=defs.resources, selection=["raw_documents"]
        )
        for _ in range(2)
    ]
    first, second = (_warnings(instance, run.run_id) for run in runs)
    assert any("unreadable" in w for w in first)
    assert not any("unreadable" in w for w in second), "already in dead_letters: no new warning"
    (settings.inbox / "acme" / "broken-later.txt").write_bytes(b"\xff\xfe\x00 not utf-8 \x81")
    third = dg.materialize(
        materializable(defs, checks=False), instance=instance, resources=defs.resources, selection=["raw_documents"]
    )
    assert [w for w in _warnings(instance, third.run_id) if "unreadable" in w and "broken-later" in w]


def _runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    return list(reversed(instance.get_runs()))


def test_a_pass_is_one_run_for_ingest_and_every_version_idle_or_not(two_passes: TwoPasses) -> None:
    """One Dagster run per pass, each version with its own materialization and its own check results in it; a pass
    with nothing new is one run too, and says so per version."""
    instance, first, again = two_passes.instance, two_passes.first, two_passes.again
    versions = [r.name for r in first if r.name.startswith("extract ")]
    assert len(versions) >= 6 and all(r.success for r in first)
    assert len({r.run_id for r in first}) == 1 and len({r.run_id for r in again}) == 1
    assert [run.run_id for run in _runs(instance)] == [first[0].run_id, again[0].run_id]  # a run each, no other
    assert all(r.success and not r.failed_checks for r in again)
    assert {r.metadata["extracted_items"]["run"] for r in again if r.name in versions} == {"nothing to do"}
    run = _runs(instance)[-1]
    materialized = {
        (e.asset_key.to_user_string(), e.partition)
        for e in (entry.asset_materialization for entry in instance.all_logs(run.run_id))
        if e is not None
    }
    keys = [name.removeprefix("extract ") for name in versions]
    for asset in ("extracted_items", "grounded_evidence", "review_queue"):
        assert {(asset, key) for key in keys} <= materialized, asset
    evaluations = [
        entry.dagster_event.asset_check_evaluation_data
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        if entry.dagster_event is not None
    ]
    per_version = {(e.check_name, e.partition) for e in evaluations if e.partition}
    assert {("quotes_match_source", key) for key in keys} <= per_version
    assert sum(e.check_name == "audit_log_intact" for e in evaluations) == 1


def test_a_queue_out_of_step_with_its_items_is_rebuilt_by_the_next_pass(
    two_passes: TwoPasses, settings: Settings
) -> None:
    """A run killed between extraction and the queue's rebuild leaves the queue behind: the next pass rebuilds it.
    On a copy of the warehouse the two passes left (the same sample, every version done), with an instance of its
    own."""
    shutil.copy(two_passes.done, settings.warehouse)
    instance = dg.DagsterInstance.ephemeral()
    with open_warehouse(settings.warehouse) as con:
        queued = one_row(con.execute("SELECT count(*) FROM review_queue WHERE schema_version = 'pulse@v1'"))[0]
        assert queued > 0
        con.execute("DELETE FROM review_queue WHERE schema_version = 'pulse@v1'")
    again = run_pipeline(settings, instance=instance)
    pulse = next(r for r in again if r.name == PULSE_STEP)
    assert pulse.success and pulse.metadata["review_queue"]["dagster/row_count"] == queued
    with open_warehouse(settings.warehouse, read_only=True) as con:
        rebuilt = one_row(con.execute("SELECT count(*) FROM review_queue WHERE schema_version = 'pulse@v1'"))[0]
    assert rebuilt == queued


def test_a_watchs_passes_keep_the_warehouse_open_between_them_and_a_plain_pass_gives_it_back(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A watch's pass (`keep_held`) leaves the file held: the next pass finds it open and warm, and the close with
    its checkpoint comes once the holder is idle, not at the end of each pass. A plain pass gives it back."""
    monkeypatch.setattr(held_module, "IDLE_S", 60.0)  # a loaded machine's gap between two passes is not what is tested
    instance = dg.DagsterInstance.ephemeral()
    held = held_warehouse(settings.warehouse)
    try:
        for _ in range(2):
            assert all(r.success for r in run_pipeline(settings, instance=instance, keep_held=True))
            assert held.is_open
        assert held.opened == 1, "two passes, one open of the file"
        assert all(r.success for r in run_pipeline(settings, instance=instance))
        assert not held.is_open and held.opened == 1
    finally:
        give_back(settings.warehouse)


def test_a_manual_materialization_that_changes_nothing_is_followed_by_nothing(two_passes: TwoPasses) -> None:
    """What a person does in the UI after a pass: materializing ingest or one version's extraction again, with
    nothing new, keeps their data versions, so automation asks for nothing; a real change is still followed. On the
    two passes' kept instance, after every test that reads its runs (the file's last: it adds runs and a file)."""
    settings, instance = two_passes.settings, two_passes.instance
    defs = build_definitions(settings)
    everything = materializable(defs)
    extraction = dg.AssetSelection.groups("extraction")

    def materialize(selection: dg.AssetSelection, partition: str | None = None) -> None:
        dg.materialize(
            everything, instance=instance, resources=defs.resources, selection=selection, partition_key=partition
        )

    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    materialize(dg.AssetSelection.groups("ingest"))
    materialize(extraction, "pulse@v1")
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    assert tick.total_requested == 0

    shutil.copy(
        SAMPLE_INBOX / "acme" / "pulses" / "2026-11-23-dana.json", settings.inbox / "acme" / "pulses" / "new.json"
    )
    text = (settings.inbox / "acme" / "pulses" / "new.json").read_text(encoding="utf-8")
    (settings.inbox / "acme" / "pulses" / "new.json").write_text(
        text.replace("2026-11-23", "2026-12-01"), encoding="utf-8"
    )
    materialize(dg.AssetSelection.groups("ingest"))
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    assert "pulse@v1" in tick.get_requested_partitions(dg.AssetKey("extracted_items"))
    # this test launches none of what a tick requests: a tick later those requests are no longer new
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    materialize(extraction, "pulse@v1")
    tick = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=tick.cursor)
    assert tick.get_requested_partitions(dg.AssetKey("review_queue")) == {"pulse@v1"}
