"""Sensors at the edges: a new prompt file becomes a partition (and is extracted). Derived assets follow
their upstream by automation conditions (see `automation.py`)."""

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
