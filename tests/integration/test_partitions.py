"""Partitions come from prompt files only: a key without one is refused before anything is written, and the
sensor retires the partition of a removed prompt file (its results stay)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.runner import run_pipeline
from tests.dagster_results import materializable, run_requests, sensor_result
from tests.one_row import one_row

PARTITIONS = "schema_versions"
TABLES_BY_SCHEMA = ("extracted_items", "extraction_status", "document_applicability", "review_queue")


def _rows_of(settings: Settings, key: str) -> dict[str, int]:
    with open_warehouse(settings.warehouse) as con:
        return {
            t: one_row(con.execute(f"SELECT count(*) FROM {t} WHERE schema_version = ?", [key]))[0]
            for t in TABLES_BY_SCHEMA
        }


def _sensor(instance: dg.DagsterInstance, settings: Settings) -> dg.SensorResult:
    pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(settings.prompts_dir))
    return sensor_result(
        schema_version_sensor(dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline}))
    )


def test_a_partition_without_a_prompt_file_is_refused_before_anything_is_written(settings: Settings) -> None:
    instance = dg.DagsterInstance.ephemeral()
    run_pipeline(settings, schema_keys=["pulse@v1"], instance=instance)
    instance.add_dynamic_partitions(PARTITIONS, ["pulse@v3"])  # as the launch dialog's "add partition" does
    defs = build_definitions(settings)
    for selection in (["extracted_items", "grounded_evidence", "review_queue"], ["review_queue"]):
        result = dg.materialize(
            materializable(defs),
            instance=instance,
            resources=defs.resources,
            selection=selection,
            partition_key="pulse@v3",
            raise_on_error=False,
        )
        assert not result.success
        failure = result.get_step_failure_events()[0].step_failure_data
        assert "FileNotFoundError" not in ((failure.error.cls_name or "") if failure.error else "")
        assert failure.user_failure_data is not None
        message = failure.user_failure_data.description or ""
        assert "'pulse@v3' has no prompt file" in message and "nothing was written" in message
        assert not result.get_asset_materialization_events()
    assert _rows_of(settings, "pulse@v3") == dict.fromkeys(TABLES_BY_SCHEMA, 0)
    assert _rows_of(settings, "pulse@v1")["extracted_items"] > 0


def test_the_sensor_retires_the_partition_of_a_removed_prompt_file_and_keeps_its_results(settings: Settings) -> None:
    instance = dg.DagsterInstance.ephemeral()
    run_pipeline(settings, instance=instance)
    items_before = _rows_of(settings, "email@v1")["extracted_items"]
    assert items_before > 0
    instance.add_dynamic_partitions(PARTITIONS, ["pulse@v3"])
    (settings.prompts_dir / "email" / "v1.md").unlink()

    result = _sensor(instance, settings)
    assert not result.run_requests
    deletes = [r for r in result.dynamic_partitions_requests or [] if isinstance(r, dg.DeleteDynamicPartitionsRequest)]
    assert [r.partition_keys for r in deletes] == [["email@v1", "pulse@v3"]]
    assert not [r for r in result.dynamic_partitions_requests or [] if isinstance(r, dg.AddDynamicPartitionsRequest)]
    assert _rows_of(settings, "email@v1")["extracted_items"] == items_before  # still queryable


def test_a_prompt_file_that_does_not_parse_keeps_its_partition(settings: Settings, prompts: Path) -> None:
    """...and gets a run of its own, which fails naming the file (`test_hostile_prompt_files.py`)."""
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(PARTITIONS, sorted(discover_schemas(prompts)[0]))
    (prompts / "pulse" / "v1.md").write_text("---\nnot: [valid\n", encoding="utf-8")
    result = _sensor(instance, settings)
    assert not result.dynamic_partitions_requests
    assert [request.partition_key for request in run_requests(result)] == ["pulse@v1"]


def test_a_new_challenger_prompt_file_also_asks_for_its_comparison(settings: Settings, prompts: Path) -> None:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(PARTITIONS, sorted(discover_schemas(prompts)[0]))
    v1 = (prompts / "receipt" / "v1.md").read_text(encoding="utf-8")
    (prompts / "receipt" / "v2.md").write_text(v1.replace("version: v1", "version: v2\nchallenger: true"), "utf-8")
    (prompts / "pulse" / "v2.md").write_text(
        (prompts / "pulse" / "v1.md").read_text(encoding="utf-8").replace("version: v1", "version: v2"), "utf-8"
    )
    result = _sensor(instance, settings)
    jobs = sorted((r.job_name, r.partition_key) for r in run_requests(result))
    assert jobs == [("challenger_job", "receipt@v2"), ("extract_job", None)], "one extraction run, one comparison"
