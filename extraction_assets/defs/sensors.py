"""Sensors at the edges: the prompt files are the partitions. A new prompt file becomes a partition (and is
extracted); a removed one retires its partition. Derived assets follow their upstream by automation conditions
(see `automation.py`)."""

from pathlib import Path

import dagster as dg

from extraction_assets.defs.jobs import extract_job
from extraction_assets.defs.partitions import extraction_keys, partition_key_of, schema_versions
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.lib.schemas import discover_schemas


@dg.sensor(job=extract_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING)
def schema_version_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    """Adding `prompts/<schema>/<version>.md` adds partition `<schema>@<version>` and extracts it; removing the file
    removes the partition key (its results stay in the warehouse, no run is started). A file that exists but does
    not parse keeps its partition: fixing the file must not lose it."""
    found, errors = discover_schemas(pipeline.prompts_path)
    for path, error in errors.items():
        context.log.warning(f"prompt file skipped: {path}: {error}")
    on_disk = set(found) | {partition_key_of(Path(path)) for path in errors}
    known = set(context.instance.get_dynamic_partitions(schema_versions.name or ""))
    new_keys = sorted(set(found) - known)
    gone_keys = sorted(known - on_disk)
    if not new_keys and not gone_keys:
        return dg.SensorResult(skip_reason=f"no new or removed prompt files ({len(known)} schema versions)")
    requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    if new_keys:
        requests.append(schema_versions.build_add_request(new_keys))
    if gone_keys:
        context.log.info(f"retiring {gone_keys}: their prompt files are gone (their results stay in the warehouse)")
        requests.append(schema_versions.build_delete_request(gone_keys))
    return dg.SensorResult(
        dynamic_partitions_requests=requests,
        run_requests=[
            dg.RunRequest(partition_key=part, run_key=f"new-schema:{part}")
            for key in new_keys
            for part in extraction_keys(key)
        ],
    )
