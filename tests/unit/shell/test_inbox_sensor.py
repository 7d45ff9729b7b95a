"""The inbox sensor: a landed, changed or removed file asks for one ingest; an unchanged inbox skips."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import inbox_sensor
from extraction_assets.lib.readers import inbox_stamps, stamps_digest
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from tests.dagster_results import run_requests, sensor_result


def _tick(inbox: Path, cursor: str | None, instance: dg.DagsterInstance | None = None) -> dg.SensorResult:
    pipeline = PipelineResource(inbox=str(inbox), prompts_dir=str(DEFAULT_PROMPTS))
    context = dg.build_sensor_context(
        cursor=cursor, resources={"pipeline": pipeline}, instance=instance or dg.DagsterInstance.ephemeral()
    )
    return sensor_result(inbox_sensor(context))


def test_stamps_cover_the_tenants_files_only_and_change_with_them(tmp_path: Path) -> None:
    (tmp_path / "acme" / "notes").mkdir(parents=True)
    note = tmp_path / "acme" / "notes" / "a.md"
    note.write_text("hello")
    (tmp_path / "acme" / ".hidden.md").write_text("not ingested")
    (tmp_path / "README.md").write_text("the inbox root is not a tenant")
    stamps = inbox_stamps(tmp_path)
    assert list(stamps) == ["acme/notes/a.md"] and stamps["acme/notes/a.md"][0] == 5
    before = stamps_digest(stamps)
    os.utime(note, ns=(0, 123))
    assert stamps_digest(inbox_stamps(tmp_path)) != before


def test_a_new_or_changed_file_asks_for_one_ingest_and_an_unchanged_inbox_skips(tmp_path: Path) -> None:
    (tmp_path / "acme" / "notes").mkdir(parents=True)
    (tmp_path / "acme" / "notes" / "a.md").write_text("first")
    first = _tick(tmp_path, None)  # the sensor just started: what landed while it was off is ingested
    assert len(first.run_requests or []) == 1 and first.cursor
    idle = _tick(tmp_path, first.cursor)
    assert not idle.run_requests and idle.skip_reason
    assert idle.skip_reason.skip_message == "no new or changed inbox files (1 files)"
    (tmp_path / "acme" / "notes" / "b.md").write_text("landed")
    landed = _tick(tmp_path, first.cursor)
    assert len(landed.run_requests or []) == 1 and landed.cursor != first.cursor
    assert run_requests(landed)[0].run_key != run_requests(first)[0].run_key


def test_a_landed_file_asks_for_one_run_of_a_pass_over_every_version(tmp_path: Path) -> None:
    """Ingest and every schema version in one run: the range of the instance's version partitions."""
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "a.md").write_text("first")
    instance = dg.DagsterInstance.ephemeral()
    assert [r.job_name for r in _tick(tmp_path, None, instance).run_requests or []] == ["ingest_job"]  # no version yet
    instance.add_dynamic_partitions("schema_versions", ["email@v1", "pulse@v1", "receipt@v1"])
    [request] = _tick(tmp_path, None, instance).run_requests or []
    assert request.job_name == "pass_job"
    assert request.tags["dagster/asset_partition_range_start"] == "email@v1"
    assert request.tags["dagster/asset_partition_range_end"] == "receipt@v1"
