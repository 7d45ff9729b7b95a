"""Beyond one machine, on one machine: a real PostgreSQL server holds DuckLake catalogs and Dagster's storage, and
the bundled sample is extracted in shards: by worker processes, 4 shards of every version at once, one shard through
Dagster's own command line; and by `EXTRACTION_SHARDS=4 extraction-assets run` itself, into the lake (one version:
the workers shard every one) and into a DuckDB file (every version). The results must be those of a run into a
single DuckDB file, made once for the file's tests (as the server is: each test writes databases of its own on it).

Needs PostgreSQL's server binaries (CI installs Debian's `postgresql`) and the `scale` extra; skips otherwise.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evals.postgres_server import PostgresServer
from evals.scale_out import PROJECT_DIR, VERSIONED, duplicate_keys, finish, snapshot
from extraction_assets.instance import open_instance
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX
from tests.integration.scale_out_support import (
    NEEDS_POSTGRES,
    SHARDS,
    Rows,
    assert_same_rows,
    dagster_runs,
    lake,
    reference,
    workers,
)

pytestmark = [pytest.mark.long(100), NEEDS_POSTGRES]


CLI_VERSION = "contract@v1"  # its shard 0 goes through `dagster asset materialize`, not a worker
# the version `extraction-assets run` shards into the lake: the runner's steps are the same for every version (the
# workers above shard every one into a lake); the sample's most documents, in every shard
LAKE_VERSION = "pulse@v1"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample, one copy for the file's tests (they only read it)."""
    target = tmp_path_factory.mktemp("sample") / "inbox"
    shutil.copytree(SAMPLE_INBOX, target, ignore=shutil.ignore_patterns("README.md"))
    return target


@pytest.fixture(scope="module")
def reference_file(tmp_path_factory: pytest.TempPathFactory, sample: Path) -> Path:
    """One run of the sample into one DuckDB file."""
    folder = tmp_path_factory.mktemp("reference")
    reference(folder, sample)
    return folder / "reference.duckdb"


@pytest.fixture(scope="module")
def expected(reference_file: Path) -> Rows:
    """The sample's rows after one run into one DuckDB file: what every sharded run must give."""
    return snapshot(reference_file)


def test_every_versions_four_shards_at_once_one_through_the_dagster_cli_match_the_duckdb_file(
    postgres: PostgresServer, tmp_path: Path, sample: Path, expected: Rows
) -> None:
    """Every version's backfill at once: 4 workers, a shard each, run every version's shard but one, which goes
    through `dagster asset materialize` with the multiprocess executor (docs/scale_out/multiprocess.yaml) at the same
    time. Nothing conflicts: the lake holds the rows of one run into a DuckDB file."""
    fanned = lake(postgres, tmp_path, "sample", sample)
    with workers(fanned, tmp_path / "workers") as fan:
        fan.run("ingest")  # adds every version's partitions to the instance before the backfills start
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
        started = [fan.start("extract", shards=[0], versions=others)]
        started += [fan.start("extract", shards=[shard], versions=versions) for shard in range(1, SHARDS)]
        finish([*started, cli])
        fan.run("queue")
    assert_same_rows(snapshot(fanned.warehouse), expected, "the lake")
    assert duplicate_keys(fanned.warehouse) == {}
    runs = dagster_runs(postgres, "sample_dagster")  # Dagster's own storage is PostgreSQL
    # the ingest; a run per worker, each over its versions (a range of them: one run); the CLI's; one queue run for
    # every version
    assert runs.get("SUCCESS", 0) == 1 + len(started) + 1 + 1, runs


def _cli_run(env: dict[str, str], inbox: Path, *options: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "extraction_assets.cli", "run", "--inbox", str(inbox), *options],
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
    postgres: PostgresServer, tmp_path: Path, sample: Path, reference_file: Path, expected: Rows
) -> None:
    """The sharded runner: an ingest run, a run per shard over every version (the shards at once on the lake, the
    first in the runner's process, each other one in a process of its own), a queue run; into DuckLake on
    PostgreSQL with Dagster's storage there (one version), and into a DuckDB file (every version)."""
    fanned = lake(postgres, tmp_path / "lake", "cli", sample)
    output = _cli_run(fanned.env, sample, "--schema", LAKE_VERSION)
    assert "FAILED" not in output and "SKIPPED" not in output
    got, one = snapshot(fanned.warehouse), snapshot(fanned.warehouse, [LAKE_VERSION])
    assert {table: got[table] for table in VERSIONED} == one, "the lake holds that version's results alone"
    assert_same_rows(one, snapshot(reference_file, [LAKE_VERSION]), "the lake")
    assert_same_rows(got, {t: rows for t, rows in expected.items() if t not in VERSIONED}, "the lake")
    assert dagster_runs(postgres, "cli_dagster").get("SUCCESS", 0) == 1 + SHARDS + 1

    file = tmp_path / "sharded.duckdb"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    _cli_run({**env, "EXTRACTION_SHARDS": str(SHARDS), "EXTRACTION_WAREHOUSE": str(file)}, sample)
    assert_same_rows(snapshot(file), expected, "the sharded file")


def test_the_command_lines_instance_keeps_its_postgresql_connections(
    postgres: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run writes thousands of events: the command line's instance on PostgreSQL asks them over connections it
    keeps, not one new connection (a forked server process) per query."""
    import psycopg2

    fanned = lake(postgres, tmp_path, "kept", tmp_path)
    for variable in ("DAGSTER_HOME", "DAGSTER_PG_URL"):
        monkeypatch.setenv(variable, fanned.env[variable])
    instance = open_instance()
    instance.get_runs(limit=1)  # each storage (runs, events) opens its connection
    instance.get_dynamic_partitions("schema_versions")
    watcher = psycopg2.connect(postgres.conninfo("kept_dagster"))
    try:
        with watcher.cursor() as cursor:
            cursor.execute("SELECT now()")
            [(before,)] = cursor.fetchall()
            for _ in range(20):
                instance.get_runs(limit=1)
                instance.get_dynamic_partitions("schema_versions")
            cursor.execute(
                "SELECT backend_start FROM pg_stat_activity WHERE datname = 'kept_dagster' AND pid <> pg_backend_pid()"
            )
            started = [row[0] for row in cursor.fetchall()]
    finally:
        watcher.close()
        instance.dispose()
    assert started and all(when < before for when in started), (before, started)
