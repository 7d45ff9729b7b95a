"""Jobs: ingest (unpartitioned) and extract (one run per schema-version partition, for backfills)."""

import dagster as dg

from extraction_assets.defs.partitions import schema_versions

ingest_job = dg.define_asset_job(
    "ingest_job",
    selection=dg.AssetSelection.groups("ingest"),
    description="Read the inbox and scrub new documents.",
)

extract_job = dg.define_asset_job(
    "extract_job",
    selection=dg.AssetSelection.groups("extraction", "review"),
    partitions_def=schema_versions,
    description="Extract, ground and queue for review under one schema version; backfill it over versions.",
)
