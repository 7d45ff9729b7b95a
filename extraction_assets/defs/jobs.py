"""Jobs: a pass (ingest, then every schema version's extraction and review queue, in one run), ingest alone, and
extraction alone (for backfills of versions, one run for all of them).

With shards (EXTRACTION_SHARDS > 1) a pass is an ingest run followed by one run per shard (their parallelism is
the point of sharding): extract_job runs one shard of a version and review_job rebuilds the version's review queue
from every shard (the automation sensor also does that after each shard's run).
"""

from pathlib import Path

import dagster as dg

from extraction_assets.defs.partitions import (
    SHARDS,
    extraction_partitions,
    partition_ranges,
    range_name,
    range_tags,
    schema_versions,
    usable_versions,
)

ingest_job = dg.define_asset_job(
    "ingest_job",
    selection=dg.AssetSelection.groups("ingest"),
    description="Read the inbox and scrub new documents.",
)

pass_job = dg.define_asset_job(
    "pass_job",
    selection=dg.AssetSelection.groups("ingest", "extraction", "review"),
    partitions_def=schema_versions,
    description="One pass in one run: read and scrub the inbox, then extract, check and queue for review under "
    "every schema version of the run (each version with its own metadata and check results).",
)

extract_job = dg.define_asset_job(
    "extract_job",
    selection=dg.AssetSelection.groups("extraction", "review")
    if SHARDS == 1
    else dg.AssetSelection.groups("extraction"),
    partitions_def=extraction_partitions,
    description="Extract, ground and queue for review under schema versions; a backfill of many is one run."
    if SHARDS == 1
    else "Extract and ground one shard of one schema version; backfill it over versions and shards.",
)

review_job = dg.define_asset_job(
    "review_job",
    selection=dg.AssetSelection.groups("review"),
    partitions_def=schema_versions,
    description="Rebuild the review queue of one schema version from the items of every shard.",
)

JOBS = [ingest_job, pass_job, extract_job] if SHARDS == 1 else [ingest_job, extract_job, review_job]


def pass_requests(
    instance: dg.DagsterInstance, prompts_dir: Path, run_key: str, tags: dict[str, str] | None = None
) -> list[dg.RunRequest]:
    """The run of a pass over every usable schema version the instance knows (one per contiguous range of them:
    usually one), or an ingest run where there is none yet or where shards follow by automation."""
    keys = usable_versions(instance, prompts_dir)
    if SHARDS > 1 or not keys:
        return [dg.RunRequest(run_key=run_key, job_name=ingest_job.name, tags=tags or {})]
    return [
        dg.RunRequest(
            run_key=f"{run_key}:{range_name(span)}", job_name=pass_job.name, tags={**range_tags(span), **(tags or {})}
        )
        for span in partition_ranges(instance, keys)
    ]
