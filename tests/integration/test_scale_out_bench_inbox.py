"""Shards that die mid-write lose nothing: a bench inbox (public documents of every kind, in three tenants) in 4
shard workers at once into DuckLake on a real PostgreSQL server, one of them killed with SIGKILL, then run again.
The lake must hold the rows of a run into one DuckDB file. The whole bench inbox is compared the same way by the
`scale_out` benchmark. A sixth of it is enough here: a shard's documents of one version are one commit at a sixth as
at a third (at most 87 of them, a commit takes 128), so the kill lands after a committed version either way.

Needs PostgreSQL's server binaries (CI installs Debian's `postgresql`), the `scale` extra and the eval sets; skips
otherwise.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from evals.bench_inbox import build_inbox, evalsets_dir, source_files
from evals.bench_throughput import TENANTS
from evals.postgres_server import PostgresServer
from evals.scale_out import duplicate_keys, finish, snapshot
from extraction_assets.lib.warehouse import Shard, open_warehouse, shard_documents
from tests.integration.scale_out_support import NEEDS_POSTGRES, SHARDS, assert_same_rows, lake, reference, workers

pytestmark = [pytest.mark.long(90), NEEDS_POSTGRES]
EVERY = 6  # one eval record in six, in each tenant: every kind of document, a sixth of the whole inbox's work


def _extracted_in_shard(warehouse: str, shard: Shard) -> int:
    with open_warehouse(warehouse, read_only=True) as con:
        done = [row[0] for row in con.execute("SELECT doc_id FROM extraction_status").fetchall()]
        return len(shard_documents(con, shard, done))


def test_a_bench_inbox_in_four_parallel_shards_one_killed_mid_write_matches_the_duckdb_file(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    """4 shard runs at once; shard 0 is killed with SIGKILL once it has committed a batch, then run again. Nothing
    is lost or doubled: the lake holds the rows, ids and counts of a run into one DuckDB file."""
    if not (evalsets_dir() / "sroie" / "dev.jsonl").exists():
        pytest.skip(f"the bench inbox is built from the eval sets, not found at {evalsets_dir()}")
    inbox = tmp_path / "inbox"
    records = source_files()[::EVERY]
    build_inbox(inbox, TENANTS * len(records), records)
    expected = reference(tmp_path, inbox)
    fanned = lake(postgres, tmp_path, "bench", inbox)
    server_cpu_before = postgres.cpu_seconds()
    with workers(fanned, tmp_path / "workers") as fan:
        fan.run("ingest")
        victim = fan.start("extract", shards=[0])
        others = [fan.start("extract", shards=[shard]) for shard in range(1, SHARDS)]
        deadline = time.monotonic() + 600
        while _extracted_in_shard(fanned.warehouse, Shard(0, SHARDS)) == 0:  # shard 0 has committed a batch: it writes
            if victim.poll() is not None:
                said = victim.said()[-3000:]
                raise AssertionError(f"shard 0 finished (exit {victim.returncode}) before it could be killed:\n{said}")
            assert time.monotonic() < deadline
            time.sleep(0.1)
        os.kill(victim.pid, signal.SIGKILL)
        assert victim.wait() == -signal.SIGKILL
        finish(others)
        written_before_rerun = _extracted_in_shard(fanned.warehouse, Shard(0, SHARDS))
        # the re-run (committed batches are kept, the rest is done now), each version's queue after its shard 0, in
        # one worker (every other shard is done)
        fan.run("extract", "queue", shards=[0])
    assert_same_rows(snapshot(fanned.warehouse), expected, "the lake")
    assert duplicate_keys(fanned.warehouse) == {}
    assert 0 < written_before_rerun < _extracted_in_shard(fanned.warehouse, Shard(0, SHARDS))
    assert postgres.cpu_seconds() > server_cpu_before  # the catalog's work is counted (the scale-out bench adds it)
