"""Sensors at the edges: the prompt files are the partitions, and the inbox is where documents land. A new prompt
file becomes a partition (and is extracted); a removed one retires its partition. A new or changed inbox file
starts a pass (`inbox_sensor`, off by default): one run that ingests, then extracts and queues under every version.
Derived assets also follow their upstream by automation conditions (see `automation.py`), for what a person
materializes by hand."""

import hashlib
import json
from pathlib import Path

import dagster as dg

from extraction_assets.defs.evaluation.challenger import challenger_job
from extraction_assets.defs.jobs import JOBS, extract_job, pass_requests
from extraction_assets.defs.partitions import (
    SHARDS,
    extraction_keys,
    range_name,
    range_tags,
    schema_versions,
)
from extraction_assets.defs.resources import PipelineResource
from extraction_assets.lib.prompt_files import discover_schemas, partition_key_of


@dg.sensor(
    jobs=[extract_job, challenger_job],
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="A new prompt file -> its schema-version partition and one run extracting it (a challenger version: "
    "also its challenger_job run, up to its comparison with the current version); a removed one -> its partition "
    "retired (its results stay); a file that cannot be used -> a run of its partition alone that fails naming the "
    "file and line, and a run again once it is fixed. On by default: it is how prompt files become partitions.",
)
def schema_version_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    """Adding `prompts/<schema>/<version>.md` adds partition `<schema>@<version>` and extracts it; removing the file
    removes the partition key (its results stay in the warehouse, no run is started). A file that exists but does
    not parse keeps its partition (fixing the file must not lose it) or gets one, and its partition a run of its own
    that fails with the file's error, once per error (the cursor keeps each broken file's error digest): so the
    partition shows why in the UI, and no other version's run carries it. Fixed, it is extracted."""
    found, errors = discover_schemas(pipeline.prompts_path)
    broken = {partition_key_of(Path(path)): error for path, error in errors.items()}
    for error in broken.values():
        context.log.warning(f"prompt file skipped: {error}")
    was_broken: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    now_broken = {key: hashlib.sha256(error.encode()).hexdigest()[:16] for key, error in broken.items()}
    known = set(context.instance.get_dynamic_partitions(schema_versions.name or ""))
    new_keys = sorted(set(found) - known)
    gone_keys = sorted(known - set(found) - set(broken))
    failing = sorted(key for key, digest in now_broken.items() if was_broken.get(key) != digest)
    fixed = sorted(key for key in set(found) & known if key in was_broken)
    if not (new_keys or gone_keys or failing or fixed):
        return dg.SensorResult(
            skip_reason=f"no new or removed prompt files ({len(known)} schema versions"
            + (f", {len(broken)} that cannot be used, unchanged)" if broken else ")"),
            cursor=json.dumps(now_broken, sort_keys=True),
        )
    requests: list[dg.AddDynamicPartitionsRequest | dg.DeleteDynamicPartitionsRequest] = []
    if added := new_keys + sorted(set(failing) - known):  # the new usable ones first: their range holds no broken one
        requests.append(schema_versions.build_add_request(added))
    if gone_keys:
        context.log.info(f"retiring {gone_keys}: their prompt files are gone (their results stay in the warehouse)")
        requests.append(schema_versions.build_delete_request(gone_keys))
    # the new keys are added in this order, after the known ones: one range, one run (with shards, a run per shard)
    runs = (
        [
            dg.RunRequest(
                run_key=f"new-schema:{range_name(new_keys)}", tags=range_tags(new_keys), job_name=extract_job.name
            )
        ]
        if new_keys and SHARDS == 1
        else [
            dg.RunRequest(partition_key=part, run_key=f"new-schema:{part}", job_name=extract_job.name)
            for key in new_keys
            for part in extraction_keys(key)
        ]
    )
    # alone: a version whose file cannot be used fails its run, and must not fail another version's
    runs += [
        dg.RunRequest(
            partition_key=part, run_key=f"prompt-file-error:{part}:{now_broken[key]}", job_name=extract_job.name
        )
        for key in failing
        for part in extraction_keys(key)
    ]
    runs += [
        dg.RunRequest(
            partition_key=part,
            run_key=f"prompt-file-fixed:{part}:{found[key].content_sha256[:16]}",
            job_name=extract_job.name,
        )
        for key in fixed
        for part in extraction_keys(key)
    ]
    runs += [  # a challenger's comparison with its current version follows by itself
        dg.RunRequest(job_name=challenger_job.name, partition_key=key, run_key=f"challenger:{key}")
        for key in new_keys
        if found[key].challenger
    ]
    return dg.SensorResult(
        dynamic_partitions_requests=requests, run_requests=runs, cursor=json.dumps(now_broken, sort_keys=True)
    )


INBOX_TICK_SECONDS = 5
# a run waits in the daemon's queue for the one DuckDB writer: a file that landed goes ahead of queued automation runs
INBOX_PRIORITY = {"dagster/priority": "5"}


@dg.sensor(
    jobs=JOBS,
    minimum_interval_seconds=INBOX_TICK_SECONDS,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="A new, changed or removed inbox file -> one run of a pass: ingest, then every schema version's "
    "extraction and review queue (with shards, an ingest run that the shards' runs follow). Off by default: the "
    "15-minute schedule picks files up anyway; turn it on where new files should be read within seconds.",
)
def inbox_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    """Every few seconds, one `stat` per inbox file (nothing is read): when the inbox differs from the last tick's,
    ingest reads what is new (an unchanged file is not read again). The first tick after the sensor starts asks for
    an ingest too, for what landed while it was off."""
    from extraction_assets.lib.readers import inbox_stamps, stamps_digest  # the readers load when the sensor ticks

    stamps = inbox_stamps(pipeline.inbox_path)
    digest = stamps_digest(stamps)
    if digest == context.cursor:
        return dg.SensorResult(skip_reason=f"no new or changed inbox files ({len(stamps)} files)")
    context.log.info(f"the inbox changed ({len(stamps)} files): ingest requested")
    return dg.SensorResult(
        run_requests=pass_requests(context.instance, pipeline.prompts_path, f"inbox:{digest}", INBOX_PRIORITY),
        cursor=digest,
    )
