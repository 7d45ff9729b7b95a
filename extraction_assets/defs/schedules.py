"""Schedules: regular ingest, and a nightly pass over every schema version (retries failed documents)."""

import dagster as dg

from extraction_assets.defs.jobs import extract_job, ingest_job
from extraction_assets.defs.partitions import extraction_keys, schema_versions

ingest_schedule = dg.ScheduleDefinition(
    name="ingest_every_15_minutes",
    job=ingest_job,
    cron_schedule="*/15 * * * *",
    description="Pick up new inbox files; the extraction sensor follows with the new documents.",
)


@dg.schedule(job=extract_job, cron_schedule="0 2 * * *", name="nightly_extract_all_versions")
def nightly_extract_schedule(context: dg.ScheduleEvaluationContext):
    """One run per schema version (and shard): pending and previously failed documents are (re)processed."""
    stamp = context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else "manual"
    for key in sorted(context.instance.get_dynamic_partitions(schema_versions.name or "")):
        for part in extraction_keys(key):
            yield dg.RunRequest(partition_key=part, run_key=f"nightly-{stamp}:{part}")
