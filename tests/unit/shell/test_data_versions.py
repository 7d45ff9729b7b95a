"""A run that changed nothing keeps each partition's data version: read for every partition at once, the same as
the latest materialization of each, one at a time, says."""

import dagster as dg
import pytest
from dagster._core.definitions.data_version import DATA_VERSION_TAG

from extraction_assets.defs.data_versions import latest_versions

PARTS = dg.StaticPartitionsDefinition(["a", "b", "c", "d"])


@dg.asset(partitions_def=PARTS, config_schema={"version": str})
def versioned(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    return dg.MaterializeResult(data_version=dg.DataVersion(context.op_execution_context.op_config["version"]))


@dg.asset
def whole() -> dg.MaterializeResult:
    return dg.MaterializeResult(data_version=dg.DataVersion("w1"))


def _one_at_a_time(instance: dg.DagsterInstance, key: str, partition: str | None) -> str | None:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(key), asset_partitions=None if partition is None else [partition]),
        limit=1,
    ).records
    materialization = records[0].asset_materialization if records else None
    return (materialization.tags or {}).get(DATA_VERSION_TAG) if materialization else None


def _run(instance: dg.DagsterInstance, partition: str, version: str) -> None:
    config = {"ops": {"versioned": {"config": {"version": version}}}}
    assert dg.materialize([versioned], instance=instance, partition_key=partition, run_config=config).success


@pytest.mark.parametrize("kept", [True, False])
def test_each_partitions_latest_version_is_read_for_all_at_once(kept: bool) -> None:
    with dg.DagsterInstance.ephemeral() as instance:
        assert latest_versions(instance, "versioned", ["a", "b"]) == [None, None]
        for partition, version in (("a", "v1"), ("b", "v1"), ("a", "v2"), ("c", "v3"), ("a", "v1")):
            _run(instance, partition, version)
        if not kept:  # a materialization reported without a version: the partition's latest has none
            instance.report_runless_asset_event(dg.AssetMaterialization("versioned", partition="b"))
        asked = ["a", "b", "c", "d"]
        found = latest_versions(instance, "versioned", asked)
        assert found == [_one_at_a_time(instance, "versioned", p) for p in asked]
        assert found == ["v1", "v1" if kept else None, "v3", None]
        assert latest_versions(instance, "whole", None) == [None]
        assert dg.materialize([whole], instance=instance).success
        assert latest_versions(instance, "whole", None) == [_one_at_a_time(instance, "whole", None)] == ["w1"]
