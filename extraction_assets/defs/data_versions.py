"""Data versions: Dagster's name for "which data this materialization holds". A run that changed nothing keeps the
version its partitions already had, so what follows an asset by automation (`automation.py`: on a new data version,
not on any new materialization) does not run again for nothing; a run that wrote something gets a new version.

A step's output has one data version for every partition it materializes (Dagster 1.13), so a run of many
partitions keeps their version only when they all had the same one (the last pass made them all).
"""

from collections.abc import Sequence

import dagster as dg
from dagster._core.definitions.data_version import DATA_VERSION_TAG


def data_version(
    context: dg.AssetExecutionContext, asset_key: str, partitions: Sequence[str] | None, changed: bool
) -> dg.DataVersion:
    """This run's data version of `asset_key` (unpartitioned: `partitions` None): the one it had if the run changed
    nothing, else the run's id."""
    if not changed:
        kept = set(latest_versions(context.instance, asset_key, partitions))
        if len(kept) == 1 and (version := kept.pop()) is not None:
            return dg.DataVersion(version)
    return dg.DataVersion(context.run_id)


def latest_versions(instance: dg.DagsterInstance, asset_key: str, partitions: Sequence[str] | None) -> list[str | None]:
    """The data version of the latest materialization of `asset_key`, of each partition (unpartitioned: `partitions`
    None, one): for every partition at once, as Dagster reads them for its own data versions (the tag indexed per
    event), one read instead of one a partition, each of which decoded a whole materialization with its metadata."""
    key = dg.AssetKey(asset_key)
    if not partitions:
        records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=1).records
        materialization = records[0].asset_materialization if records else None
        return [(materialization.tags or {}).get(DATA_VERSION_TAG) if materialization else None]
    tags = instance.event_log_storage.get_latest_tags_by_partition(
        key, dg.DagsterEventType.ASSET_MATERIALIZATION, [DATA_VERSION_TAG], asset_partitions=list(partitions)
    )
    return [tags.get(partition, {}).get(DATA_VERSION_TAG) for partition in partitions]
