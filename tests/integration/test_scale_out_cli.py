"""`EXTRACTION_SHARDS=4 extraction-assets run` itself, into DuckLake on a real PostgreSQL server and into a DuckDB
file: the sharded runner's results equal one shard's.

Needs PostgreSQL's server binaries (CI installs Debian's `postgresql`) and the `scale` extra; skips otherwise.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evals.postgres_server import PostgresServer
from evals.scale_out import PROJECT_DIR, snapshot
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

pytestmark = [pytest.mark.long(60), NEEDS_POSTGRES]


def _cli_run(env: dict[str, str], inbox: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "extraction_assets.cli", "run", "--inbox", str(inbox)],
        env=env,
        cwd=PROJECT_DIR,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def test_the_command_line_with_four_shards_into_the_lake_or_a_file_matches_one_shard(
    postgres: PostgresServer, tmp_path: Path, inbox: Path
) -> None:
    """The sharded runner: an ingest run, a run per shard, a queue run per version; into DuckLake on PostgreSQL
    with Dagster's storage there, and into a DuckDB file."""
    expected = reference(tmp_path, inbox)
    fanned = lake(postgres, tmp_path / "lake", "cli", inbox)
    output = _cli_run(fanned.env, inbox)
    assert "FAILED" not in output and "SKIPPED" not in output
    assert_same_rows(snapshot(fanned.warehouse), expected, "the lake")
    versions = len(discover_schemas(DEFAULT_PROMPTS)[0])
    assert dagster_runs(postgres, "cli_dagster").get("SUCCESS", 0) == 1 + versions * SHARDS + versions

    file = tmp_path / "sharded.duckdb"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    _cli_run({**env, "EXTRACTION_SHARDS": str(SHARDS), "EXTRACTION_WAREHOUSE": str(file)}, inbox)
    assert_same_rows(snapshot(file), expected, "the sharded file")
