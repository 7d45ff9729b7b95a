"""Beyond one machine, on one machine: a real PostgreSQL server holds a DuckLake catalog and Dagster's storage, and
worker processes extract 4 shards of the bundled sample at once, or two versions' backfills at once. The results
must be those of a run into a single DuckDB file.

Needs PostgreSQL's server binaries (CI installs Debian's `postgresql`) and the `scale` extra; skips otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evals.postgres_server import PostgresServer
from evals.scale_out import PROJECT_DIR, duplicate_keys, finish, snapshot
from extraction_assets.lib.schemas import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from tests.integration.scale_out_support import (
    NEEDS_POSTGRES,
    SHARDS,
    assert_same_rows,
    dagster_runs,
    lake,
    reference,
)

pytestmark = [pytest.mark.long(75), NEEDS_POSTGRES]


def test_sample_inbox_in_four_parallel_shards_matches_the_duckdb_file(
    postgres: PostgresServer, tmp_path: Path, inbox: Path
) -> None:
    expected = reference(tmp_path, inbox)
    fanned = lake(postgres, tmp_path, "sample", inbox)
    fanned.run("ingest")
    finish([fanned.worker("extract", shards=[shard]) for shard in range(SHARDS)])
    fanned.run("queue")
    assert_same_rows(snapshot(fanned.warehouse), expected, "the lake")
    assert duplicate_keys(fanned.warehouse) == {}
    versions = len(discover_schemas(DEFAULT_PROMPTS)[0])
    runs = dagster_runs(postgres, "sample_dagster")  # Dagster's own storage is PostgreSQL
    assert runs.get("SUCCESS", 0) == 1 + versions * SHARDS + versions, runs


def test_two_backfills_of_different_versions_at_once_do_not_conflict(
    postgres: PostgresServer, tmp_path: Path, inbox: Path
) -> None:
    """Backfill pulse@v1 and contract@v1 (4 shard runs each) at the same time; one of contract's runs goes through
    `dagster asset materialize` with the multiprocess executor (docs/scale_out/multiprocess.yaml)."""
    versions = ["contract@v1", "pulse@v1"]
    expected = reference(tmp_path, inbox, versions)
    fanned = lake(postgres, tmp_path, "versions", inbox)
    fanned.run("ingest", versions=versions)  # adds both partitions to the instance before the backfills start
    cli = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "dagster"),  # the venv's
            "asset",
            "materialize",
            "-m",
            "extraction_assets.definitions",
            "--select",
            "group:extraction",
            "--partition",
            "contract@v1|0",
            "-c",
            str(PROJECT_DIR / "docs" / "scale_out" / "multiprocess.yaml"),
        ],
        env=fanned.env,
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    workers = [fanned.worker("extract", shards=[shard], versions=["pulse@v1"]) for shard in range(SHARDS)]
    workers += [fanned.worker("extract", shards=[shard], versions=["contract@v1"]) for shard in range(1, SHARDS)]
    finish([*workers, cli])
    fanned.run("queue", versions=versions)
    assert_same_rows(snapshot(fanned.warehouse, versions), expected, "the lake")
    assert duplicate_keys(fanned.warehouse) == {}
