"""Beyond one machine, on one machine: a real PostgreSQL server holds a DuckLake catalog and Dagster's storage, and
worker processes extract 4 shards at once. The results must be those of a run into a single DuckDB file.

Needs PostgreSQL's server binaries (CI installs Debian's `postgresql`) and the `scale` extra; skips otherwise.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from evals.bench_inbox import build_inbox, evalsets_dir, source_files
from evals.bench_throughput import TENANTS
from evals.postgres_server import PostgresServer, create_database, running_postgres, unavailable_reason
from evals.scale_out import PROJECT_DIR, FanOut, duplicate_keys, fan_out, finish, snapshot
from extraction_assets.lib.schemas import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX, Settings
from extraction_assets.lib.warehouse import Shard, open_warehouse
from extraction_assets.lib.warehouse.backend import extension_folder
from extraction_assets.runner import run_pipeline

SHARDS = 4

_reason = unavailable_reason() or (
    None if extension_folder() is not None else "DuckLake extensions not installed (pip install -e '.[scale]')"
)
pytestmark = [
    pytest.mark.long(180),
    pytest.mark.skipif(_reason is not None, reason=f"scale-out test needs PostgreSQL: {_reason}"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    with running_postgres() as running:
        yield running


def _reference(folder: Path, inbox: Path) -> dict[str, list[tuple[object, ...]]]:
    """The same inbox through the default path: one DuckDB file, one run per schema version."""
    warehouse = folder / "reference.duckdb"
    results = run_pipeline(Settings(warehouse=warehouse, inbox=inbox), instance=dg.DagsterInstance.ephemeral())
    assert all(r.success and not r.failed_checks for r in results), [r.name for r in results if not r.success]
    return snapshot(warehouse)


def _fan_out(server: PostgresServer, folder: Path, name: str, inbox: Path) -> FanOut:
    for database in (f"{name}_lake", f"{name}_dagster"):
        create_database(server, database)
    return fan_out(server, folder, f"{name}_lake", f"{name}_dagster", SHARDS, inbox, DEFAULT_PROMPTS)


def _dagster_runs(server: PostgresServer, database: str) -> dict[str, int]:
    import psycopg2

    con = psycopg2.connect(server.conninfo(database))
    try:
        with con.cursor() as cursor:
            cursor.execute("SELECT status, count(*) FROM runs GROUP BY status")
            return dict(cursor.fetchall())
    finally:
        con.close()


def _sample_inbox(folder: Path) -> Path:
    inbox = folder / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox, ignore=shutil.ignore_patterns("README.md"))
    return inbox


def test_sample_inbox_in_four_parallel_shards_matches_the_duckdb_file(server: PostgresServer, tmp_path: Path) -> None:
    inbox = _sample_inbox(tmp_path)
    expected = _reference(tmp_path, inbox)
    lake = _fan_out(server, tmp_path, "sample", inbox)
    lake.run("ingest")
    finish([lake.worker("extract", shards=[shard]) for shard in range(SHARDS)])
    lake.run("queue")
    got = snapshot(lake.warehouse)
    for table, rows in expected.items():
        assert got[table] == rows, f"{table}: {len(got[table])} rows in the lake, {len(rows)} in the file"
    assert duplicate_keys(lake.warehouse) == {}
    versions = len(discover_schemas(DEFAULT_PROMPTS)[0])
    runs = _dagster_runs(server, "sample_dagster")  # Dagster's own storage is PostgreSQL
    assert runs.get("SUCCESS", 0) == 1 + versions * SHARDS + versions, runs


def _extracted_in_shard(warehouse: str, shard: Shard) -> int:
    with open_warehouse(warehouse, read_only=True) as con:
        done = [row[0] for row in con.execute("SELECT doc_id FROM extraction_status").fetchall()]
    return len(shard.take(done))


def test_whole_bench_inbox_in_four_parallel_shards_one_killed_mid_write_matches_the_duckdb_file(
    server: PostgresServer, tmp_path: Path
) -> None:
    """The throughput bench's whole inbox (every eval record in each of its tenants) in 4 shard runs at once; shard
    0 is killed with SIGKILL once it has committed a batch, then run again. Nothing is lost or doubled: the lake
    holds the rows, ids and counts of a run into one DuckDB file."""
    if not (evalsets_dir() / "sroie" / "dev.jsonl").exists():
        pytest.skip(f"the bench inbox is built from the eval sets, not found at {evalsets_dir()}")
    inbox = tmp_path / "inbox"
    build_inbox(inbox, TENANTS * len(source_files()))
    expected = _reference(tmp_path, inbox)
    lake = _fan_out(server, tmp_path, "bench", inbox)
    lake.run("ingest")
    victim = lake.worker("extract", shards=[0])
    others = [lake.worker("extract", shards=[shard]) for shard in range(1, SHARDS)]
    deadline = time.monotonic() + 600
    while _extracted_in_shard(lake.warehouse, Shard(0, SHARDS)) == 0:  # shard 0 has committed a batch: it is writing
        if victim.poll() is not None:
            said = victim.stdout.read().decode(errors="replace")[-3000:] if victim.stdout else ""
            raise AssertionError(f"shard 0 finished (exit {victim.returncode}) before it could be killed:\n{said}")
        assert time.monotonic() < deadline
        time.sleep(0.1)
    os.kill(victim.pid, signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL
    finish(others)
    written_before_rerun = _extracted_in_shard(lake.warehouse, Shard(0, SHARDS))
    lake.run("extract", shards=[0])  # the re-run: committed batches are kept, the rest is done now
    lake.run("queue")
    got = snapshot(lake.warehouse)
    for table, rows in expected.items():
        assert got[table] == rows, f"{table}: {len(got[table])} rows in the lake, {len(rows)} in the file"
    assert duplicate_keys(lake.warehouse) == {}
    assert 0 < written_before_rerun < _extracted_in_shard(lake.warehouse, Shard(0, SHARDS))


def test_two_backfills_of_different_versions_at_once_do_not_conflict(server: PostgresServer, tmp_path: Path) -> None:
    """Backfill pulse@v1 and contract@v1 (4 shard runs each) at the same time; one of contract's runs goes through
    `dagster asset materialize` with the multiprocess executor (docs/scale_out/multiprocess.yaml)."""
    inbox = _sample_inbox(tmp_path)
    versions = ["contract@v1", "pulse@v1"]
    reference = tmp_path / "reference.duckdb"
    run_pipeline(
        Settings(warehouse=reference, inbox=inbox), schema_keys=versions, instance=dg.DagsterInstance.ephemeral()
    )
    lake = _fan_out(server, tmp_path, "versions", inbox)
    lake.run("ingest", versions=versions)  # adds both partitions to the instance before the backfills start
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
        env=lake.env,
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    workers = [lake.worker("extract", shards=[shard], versions=["pulse@v1"]) for shard in range(SHARDS)]
    workers += [lake.worker("extract", shards=[shard], versions=["contract@v1"]) for shard in range(1, SHARDS)]
    finish([*workers, cli])
    lake.run("queue", versions=versions)
    expected = snapshot(reference, versions)
    got = snapshot(lake.warehouse, versions)
    for table, rows in expected.items():
        assert got[table] == rows, f"{table}: {len(got[table])} rows in the lake, {len(rows)} in the file"
    assert duplicate_keys(lake.warehouse) == {}


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
    server: PostgresServer, tmp_path: Path
) -> None:
    """`EXTRACTION_SHARDS=4 extraction-assets run` itself (the sharded runner: an ingest run, a run per shard, a
    queue run per version), into DuckLake on PostgreSQL with Dagster's storage there, and into a DuckDB file."""
    inbox = _sample_inbox(tmp_path)
    expected = _reference(tmp_path, inbox)
    lake = _fan_out(server, tmp_path / "lake", "cli", inbox)
    output = _cli_run(lake.env, inbox)
    assert "FAILED" not in output and "SKIPPED" not in output
    got = snapshot(lake.warehouse)
    for table, rows in expected.items():
        assert got[table] == rows, f"{table}: {len(got[table])} rows in the lake, {len(rows)} in the file"
    versions = len(discover_schemas(DEFAULT_PROMPTS)[0])
    assert _dagster_runs(server, "cli_dagster").get("SUCCESS", 0) == 1 + versions * SHARDS + versions

    file = tmp_path / "sharded.duckdb"
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    _cli_run({**env, "EXTRACTION_SHARDS": str(SHARDS), "EXTRACTION_WAREHOUSE": str(file)}, inbox)
    got = snapshot(file)
    for table, rows in expected.items():
        assert got[table] == rows, f"{table}: {len(got[table])} rows in the sharded file, {len(rows)} in the file"
