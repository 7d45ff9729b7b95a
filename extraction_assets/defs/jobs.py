"""Jobs: ingest (unpartitioned) and extract (one run per schema-version partition, for backfills).

With shards (EXTRACTION_SHARDS > 1) extract_job runs one shard of a version and review_job rebuilds the version's
review queue from every shard (the automation sensor also does that after each shard's run).
"""

import dagster as dg

from extraction_assets.defs.partitions import SHARDS, extraction_partitions, schema_versions

ingest_job = dg.define_asset_job(
    "ingest_job",
    selection=dg.AssetSelection.groups("ingest"),
    description="Read the inbox and scrub new documents.",
)

extract_job = dg.define_asset_job(
    "extract_job",
    selection=dg.AssetSelection.groups("extraction", "review")
    if SHARDS == 1
    else dg.AssetSelection.groups("extraction"),
    partitions_def=extraction_partitions,
    description="Extract, ground and queue for review under one schema version; backfill it over versions."
    if SHARDS == 1
    else "Extract and ground one shard of one schema version; backfill it over versions and shards.",
)

review_job = dg.define_asset_job(
    "review_job",
    selection=dg.AssetSelection.groups("review"),
    partitions_def=schema_versions,
    description="Rebuild the review queue of one schema version from the items of every shard.",
)

JOBS = [ingest_job, extract_job] if SHARDS == 1 else [ingest_job, extract_job, review_job]
