"""Mail as it arrives: a sensor watches the inbox's mail files and, when one appears
or an mbox grows, runs ingest, scrubbing and extraction of each mail schema version (one that reads e-mail only,
such as `email@v1`). Schemas that read e-mail among other kinds follow the new documents by automation
(`automation.py`), as they follow any ingest.

The cursor (`lib/readers/mail_watch.py`) advances past a file only when its runs succeeded and stored every
message in full. The failure rules, in this pipeline's terms: a failed classification is a dead letter
with its reason and the cursor advances; a failed module extraction leaves the document `partial` (the pack's
record is kept, the document is extracted again), so the file is given back and asked for again next run, and
its records, keyed by Message-ID, are replaced rather than added.
"""

import time
from typing import TYPE_CHECKING

import dagster as dg

from extraction_assets.defs.partitions import (
    SHARDS,
    extraction_keys,
    extraction_partitions,
    partition_ranges,
    range_name,
    range_tags,
    schema_versions,
)
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.lib.prompt_files import discover_schemas

if TYPE_CHECKING:  # the readers load when the sensor ticks, not with the code location
    from extraction_assets.lib.readers.mail_watch import Batch

BATCH_TAG = "extraction_assets/mail_batch"
MAIL_KIND = "email"
TICK_SECONDS = 2
# runs wait in the daemon's queue for the one DuckDB writer: new mail goes ahead of queued automation runs
PRIORITY = {"dagster/priority": "10"}

live_mail_job = dg.define_asset_job(
    "live_mail_job",
    # with shards the review queue (one partition per version) follows each shard's run by automation
    selection=dg.AssetSelection.groups("ingest", "extraction", "review")
    if SHARDS == 1
    else dg.AssetSelection.groups("ingest", "extraction"),
    partitions_def=schema_versions if SHARDS == 1 else extraction_partitions,
    description="New mail: read and scrub the inbox's new files, then extract them under the mail schema versions "
    "(one run for all of them; with shards, one run per shard).",
)


def _batch_complete(instance: dg.DagsterInstance, key: str, batch: "Batch", now: float) -> bool | None:
    """None while the batch's runs are not all finished; then whether all succeeded and none left a document
    to retry (`documents_partial` in the extraction's metadata). Runs that never appeared count as failed."""
    found = instance.get_runs(filters=dg.RunsFilter(tags={BATCH_TAG: key}))
    if batch.lost(len(found), now):
        return False
    if len(found) < batch.runs or not all(run.is_finished for run in found):
        return None
    if any(run.status != dg.DagsterRunStatus.SUCCESS for run in found):
        return False
    for run in found:
        for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            materialization = entry.asset_materialization
            partial = materialization.metadata.get("documents_partial") if materialization else None
            if partial is not None and partial.value:
                return False
    return True


@dg.sensor(
    job=live_mail_job,
    minimum_interval_seconds=TICK_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="New .eml files and grown .mbox files -> one run for the schema versions that read e-mail only. Off "
    "by default: turn it on where mail should be extracted within seconds of arriving.",
)
def mail_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    """Every few seconds: settle the batches that finished, then ask for runs for the mail that is new."""
    from extraction_assets.lib.readers import MailCursor, mail_stamps  # the readers load when the sensor ticks

    cursor = MailCursor.parse(context.cursor)
    now = time.time()
    for key, batch in list(cursor.in_flight.items()):
        complete = _batch_complete(context.instance, key, batch, now)
        if complete is not None:
            cursor.settle(key, complete, now)
            if not complete:
                context.log.warning(f"mail batch {key} left work undone: {sorted(batch.files)} will be asked for again")
    stamps = mail_stamps(pipeline.inbox_path)
    cursor.forget_missing(stamps)
    new = cursor.changed(stamps, now)
    found, _ = discover_schemas(pipeline.prompts_path)
    keys = sorted(key for key, schema in found.items() if set(schema.document_kinds) == {MAIL_KIND})
    if not new or not keys:
        waiting = f", {len(cursor.in_flight)} batches running" if cursor.in_flight else ""
        reason = "no schema version reads e-mail only" if new else f"no new mail ({len(stamps)} mail files{waiting})"
        return dg.SensorResult(skip_reason=reason, cursor=cursor.dump())
    known = set(context.instance.get_dynamic_partitions(schema_versions.name or ""))
    missing = [key for key in keys if key not in known]
    # one run over the mail versions (their ranges among the known ones); a run per partition where some are only
    # being added, or with shards
    targets: list[tuple[str, str | None, dict[str, str]]] = (
        [(range_name(span), None, range_tags(span)) for span in partition_ranges(context.instance, keys)]
        if SHARDS == 1 and not missing
        else [(str(part), part, {}) for key in keys for part in extraction_keys(key)]
    )
    batch_key = cursor.request(new, runs=len(targets), now=now)
    context.log.info(f"new mail in {sorted(new)}: batch {batch_key}, runs for {keys}")
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(
                run_key=f"{batch_key}:{name}", partition_key=partition, tags={BATCH_TAG: batch_key, **PRIORITY, **tags}
            )
            for name, partition, tags in targets
        ],
        dynamic_partitions_requests=[schema_versions.build_add_request(missing)] if missing else [],
        cursor=cursor.dump(),
    )
