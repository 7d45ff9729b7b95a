"""Extraction is partitioned by schema version: one partition per prompt file (`pulse@v1`), and, with
`EXTRACTION_SHARDS` = N > 1, by shard as well (`pulse@v1|0` ... `pulse@v1|N-1`, a hash of doc_id or of
tenant and Message-ID), so a backfill of one version is N runs that can run at once. With N = 1 (the default)
the keys are the schema versions alone.

Partitions come from prompt files only: the schema_version_sensor adds a partition for a new file and
retires the partition of a file that is gone, and a run of a key without a prompt file (one added by hand
in the launch dialog) is refused before anything is written.
"""

import warnings
from collections.abc import Sequence
from pathlib import Path

import dagster as dg

from extraction_assets.lib.prompt_files import discover_schemas, load_schema, prompt_file
from extraction_assets.lib.schemas import SchemaError, SchemaVersion
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import ALL_DOCUMENTS, Shard, is_lake

schema_versions = dg.DynamicPartitionsDefinition(name="schema_versions")

_SETTINGS = Settings.from_env()  # read when the code location loads: the partitions are part of its definitions
SHARDS = _SETTINGS.shards


def extraction_partitions_for(shards: int) -> dg.PartitionsDefinition:
    """Schema versions alone for one shard (today's keys), else schema version x shard."""
    if shards == 1:
        return schema_versions
    return dg.MultiPartitionsDefinition(
        {"schema_version": schema_versions, "shard": dg.StaticPartitionsDefinition([str(i) for i in range(shards)])}
    )


extraction_partitions = extraction_partitions_for(SHARDS)
# the review queue is one partition per schema version, built from every shard's items (a beta class in 1.13)
warnings.filterwarnings("ignore", message="Class `MultiToSingleDimensionPartitionMapping` is currently in beta")
EVERY_SHARD = (
    None if SHARDS == 1 else dg.MultiToSingleDimensionPartitionMapping(partition_dimension_name="schema_version")
)


def extraction_partition(key: str, shards: int = SHARDS) -> tuple[str, Shard]:
    """The schema version and the shard of an extraction partition key."""
    if isinstance(key, dg.MultiPartitionKey):
        dimensions = key.keys_by_dimension
        return dimensions["schema_version"], Shard(int(dimensions["shard"]), shards)
    if shards > 1:  # a run over many partitions lists their keys as strings, `schema_version|shard`
        schema_version, _, shard = key.rpartition("|")
        return schema_version, Shard(int(shard), shards)
    return key, ALL_DOCUMENTS


# One run serves every schema version of a pass (Dagster's single-run backfill policy): each version keeps its own
# materialization metadata and check results (`add_asset_metadata`, per-partition check evaluations). With shards,
# each shard of a version is a run of its own: their parallelism is the point of sharding.
warnings.filterwarnings("ignore", message="Parameter `backfill_policy` of function `asset` is currently in beta")
BACKFILL = dg.BackfillPolicy.single_run() if SHARDS == 1 else dg.BackfillPolicy.multi_run(1)
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def usable_versions(instance: dg.DagsterInstance, prompts_dir: Path) -> list[str]:
    """The instance's schema versions whose prompt file loads, in its order. The step of a run that holds a version
    whose file cannot be used fails, which records no version of the run and holds back every queue in it: passes and
    nightly runs leave such a version out (the schema_version_sensor's run of it alone shows why)."""
    found, _ = discover_schemas(prompts_dir)
    return [key for key in instance.get_dynamic_partitions(schema_versions.name or "") if key in found]


def partition_ranges(instance: dg.DagsterInstance, keys: Sequence[str]) -> list[list[str]]:
    """The fewest contiguous runs of the instance's schema-version partitions (in their order) covering `keys`, each
    the keys it spans: one Dagster run per range. Usually one: the versions of a pass are every version."""
    wanted = set(keys)
    ranges: list[list[str]] = [[]]
    for key in instance.get_dynamic_partitions(schema_versions.name or ""):
        if key in wanted:
            ranges[-1].append(key)
        elif ranges[-1]:
            ranges.append([])
    return [span for span in ranges if span]


def range_tags(span: Sequence[str]) -> dict[str, str]:
    """The tags that make a run cover the partitions of `span` (its first to its last key)."""
    return {RANGE_START: span[0], RANGE_END: span[-1]}


def range_name(span: Sequence[str]) -> str:
    """A range as run keys name it: `first..last`."""
    return f"{span[0]}..{span[-1]}"


def extraction_keys(schema_key: str) -> list[str]:
    """The extraction partitions of one schema version: the version itself, or one per shard."""
    if SHARDS == 1:
        return [schema_key]
    return [dg.MultiPartitionKey({"schema_version": schema_key, "shard": str(i)}) for i in range(SHARDS)]


# A DuckDB file allows one writer: every asset and check that touches it shares pool `duckdb` (limit 1). A DuckLake
# catalog takes many writers, so there only the model-bound extraction is limited, by the endpoint's pool.
LAKE = is_lake(_SETTINGS.warehouse)
MODEL_POOL = "model_endpoint"
POOL = None if LAKE else "duckdb"
EXTRACTION_POOL = MODEL_POOL if LAKE else "duckdb"


def schema_for_partition(prompts_dir: Path, key: str) -> SchemaVersion:
    """The schema version of a partition; a key without a usable prompt file fails the step with what to do."""
    try:
        return load_schema(prompts_dir, key)
    except FileNotFoundError:
        raise dg.Failure(
            description=(
                f"partition {key!r} has no prompt file ({prompt_file(prompts_dir, key)}): partitions come from "
                "prompt files only. Add the file (the schema_version_sensor then adds and extracts its partition) "
                "or pick an existing partition; nothing was written."
            ),
            allow_retries=False,
        ) from None
    except (SchemaError, OSError) as exc:
        raise dg.Failure(
            description=f"partition {key!r}: its prompt file cannot be used ({exc}); nothing was written.",
            allow_retries=False,
        ) from exc
