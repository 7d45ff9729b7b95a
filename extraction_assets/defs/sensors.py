"""Sensors: a new prompt file becomes a partition (and is extracted); new documents re-trigger extraction."""

import dagster as dg

from extraction_assets.defs.jobs import extract_job
from extraction_assets.defs.partitions import schema_versions
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.lib.schemas import discover_schemas


@dg.sensor(job=extract_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def schema_version_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    """Adding `prompts/<schema>/<version>.md` adds partition `<schema>@<version>` and extracts it."""
    found, errors = discover_schemas(pipeline.prompts_path)
    for path, error in errors.items():
        context.log.warning(f"prompt file skipped: {path}: {error}")
    known = set(context.instance.get_dynamic_partitions(schema_versions.name or ""))
    new_keys = sorted(set(found) - known)
    if not new_keys:
        return dg.SensorResult(skip_reason="no new schema versions")
    return dg.SensorResult(
        dynamic_partitions_requests=[schema_versions.build_add_request(new_keys)],
        run_requests=[dg.RunRequest(partition_key=key, run_key=f"new-schema:{key}") for key in new_keys],
    )


@dg.sensor(job=extract_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def extract_after_ingest_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult:
    """New scrubbed documents: extract every known schema version (already-processed documents are skipped)."""
    latest = context.instance.fetch_materializations(dg.AssetKey("scrubbed_documents"), limit=1).records
    if not latest or str(latest[0].storage_id) == context.cursor:
        return dg.SensorResult(skip_reason="no new scrubbed documents")
    event_id = latest[0].storage_id
    keys = sorted(context.instance.get_dynamic_partitions(schema_versions.name or ""))
    return dg.SensorResult(
        run_requests=[dg.RunRequest(partition_key=key, run_key=f"ingest-{event_id}:{key}") for key in keys],
        cursor=str(event_id),
    )
