"""Schedules: a regular pass over the inbox, and a nightly pass over every schema version (retries failed
documents). Each is one run (with shards, one run per shard of the nightly pass)."""

import dagster as dg

from extraction_assets.defs.jobs import extract_job, ingest_job, pass_job, pass_requests
from extraction_assets.defs.partitions import (
    SHARDS,
    extraction_keys,
    partition_ranges,
    range_name,
    range_tags,
    usable_versions,
)
from extraction_assets.defs.resources import PipelineResource


def _stamp(context: dg.ScheduleEvaluationContext) -> str:
    return context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else "manual"


@dg.schedule(
    job=pass_job if SHARDS == 1 else ingest_job,
    cron_schedule="*/15 * * * *",
    name="ingest_every_15_minutes",
    description="Every 15 minutes, one run of a pass: new inbox files are read and scrubbed, then extracted and "
    "queued under every schema version. Stopped by default, like every schedule: start it where the inbox fills "
    "up on its own (the inbox sensor does the same within seconds).",
)
def ingest_schedule(
    context: dg.ScheduleEvaluationContext, pipeline: PipelineResource
) -> list[dg.RunRequest] | dg.SkipReason:
    requests = pass_requests(context.instance, pipeline.prompts_path, f"every-15-minutes-{_stamp(context)}")
    if SHARDS == 1 and requests[0].job_name != pass_job.name:
        return dg.SkipReason("no schema version yet (the schema_version_sensor adds one per prompt file)")
    return requests


@dg.schedule(
    job=extract_job,
    cron_schedule="0 2 * * *",
    name="nightly_extract_all_versions",
    description="At 02:00, every schema version in one run: pending and previously failed documents are "
    "(re)processed. Stopped by default: start it where a model endpoint's failures should be retried overnight.",
)
def nightly_extract_schedule(context: dg.ScheduleEvaluationContext, pipeline: PipelineResource) -> list[dg.RunRequest]:
    stamp = _stamp(context)
    keys = usable_versions(context.instance, pipeline.prompts_path)  # a broken prompt file's run fails alone
    if SHARDS == 1:
        return [
            dg.RunRequest(run_key=f"nightly-{stamp}:{range_name(span)}", tags=range_tags(span))
            for span in partition_ranges(context.instance, keys)
        ]
    return [
        dg.RunRequest(partition_key=part, run_key=f"nightly-{stamp}:{part}")
        for key in keys
        for part in extraction_keys(key)
    ]
