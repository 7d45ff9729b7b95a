"""Beyond one machine, on one machine: a real PostgreSQL server holds a DuckLake catalog and Dagster's storage, and
worker processes extract 4 shards of every version of the bundled sample at once, one shard through Dagster's own
command line. The results must be those of a run into a single DuckDB file.

Needs PostgreSQL's server binaries (CI installs Debian's `postgresql`) and the `scale` extra; skips otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evals.postgres_server import PostgresServer
from evals.scale_out import PROJECT_DIR, duplicate_keys, finish, snapshot
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from tests.integration.scale_out_support import (
    NEEDS_POSTGRES,
    SHARDS,
    assert_same_rows,
    dagster_runs,
    lake,
    reference,
)

pytestmark = [pytest.mark.long(45), NEEDS_POSTGRES]


CLI_VERSION = "contract@v1"  # its shard 0 goes through `dagster asset materialize`, not a worker


def test_every_versions_four_shards_at_once_one_through_the_dagster_cli_match_the_duckdb_file(
    postgres: PostgresServer, tmp_path: Path, inbox: Path
) -> None:
    """Every version's backfill at once: 4 workers run the shards of all versions but one, 3 more that version's
    shards 1-3, and its shard 0 goes through `dagster asset materialize` with the multiprocess executor
    (docs/scale_out/multiprocess.yaml). Nothing conflicts: the lake holds the rows of one run into a DuckDB file."""
    expected = reference(tmp_path, inbox)
    fanned = lake(postgres, tmp_path, "sample", inbox)
    fanned.run("ingest")  # adds every version's partitions to the instance before the backfills start
    versions = sorted(discover_schemas(DEFAULT_PROMPTS)[0])
    assert CLI_VERSION in versions and len(versions) > 1
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
            f"{CLI_VERSION}|0",
            "-c",
            str(PROJECT_DIR / "docs" / "scale_out" / "multiprocess.yaml"),
        ],
        env=fanned.env,
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    others = [version for version in versions if version != CLI_VERSION]
    workers = [fanned.worker("extract", shards=[shard], versions=others) for shard in range(SHARDS)]
    workers += [fanned.worker("extract", shards=[shard], versions=[CLI_VERSION]) for shard in range(1, SHARDS)]
    finish([*workers, cli])
    fanned.run("queue")
    assert_same_rows(snapshot(fanned.warehouse), expected, "the lake")
    assert duplicate_keys(fanned.warehouse) == {}
    runs = dagster_runs(postgres, "sample_dagster")  # Dagster's own storage is PostgreSQL
    assert runs.get("SUCCESS", 0) == 1 + len(versions) * SHARDS + len(versions), runs
