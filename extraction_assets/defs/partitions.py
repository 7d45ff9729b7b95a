"""Extraction is partitioned by schema version: one partition per prompt file (`pulse@v1`).

Partitions come from prompt files only: the schema_version_sensor adds a partition for a new file and
retires the partition of a file that is gone, and a run of a key without a prompt file (one added by hand
in the launch dialog) is refused before anything is written.
"""

from pathlib import Path

import dagster as dg

from extraction_assets.lib.schemas import SchemaError, SchemaVersion, load_schema

schema_versions = dg.DynamicPartitionsDefinition(name="schema_versions")

POOL = "duckdb"  # DuckDB allows one writer per file: every writing asset and check shares this pool


def prompt_file(prompts_dir: Path, key: str) -> Path:
    """Where the prompt file of partition `schema@version` lives."""
    name, _, version = key.partition("@")
    return prompts_dir / name / f"{version}.md"


def partition_key_of(path: Path) -> str:
    """The partition a prompt file stands for (`prompts/pulse/v1.md` -> `pulse@v1`)."""
    return f"{path.parent.name}@{path.stem}"


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
