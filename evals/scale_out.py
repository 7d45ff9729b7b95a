"""The fan-out on one machine: worker processes extracting shards at once into a DuckLake catalog on PostgreSQL,
with Dagster's storage on PostgreSQL too. Shared by the scale-out test and the `scale_out` benchmark.

`python -m evals.scale_out ingest|extract|queue... [--shards 0,1] [--versions pulse@v1,...]` is one worker: it runs
those parts of `runner.run_pipeline` against the environment it is given (warehouse, shards, DAGSTER_HOME).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evals.postgres_server import PostgresServer
from extraction_assets.defs.partitions import MODEL_POOL
from extraction_assets.lib.settings import PROJECT_DIR

POSTGRES_INSTANCE = PROJECT_DIR / "extraction_assets" / "instance" / "dagster.postgres.yaml"
# what a table's rows are compared on: its key (timestamps and run-time figures differ between runs by design)
COMPARED_COLUMNS = {
    "raw_documents": "doc_id, tenant_id, source_uri, kind, text",
    "scrubbed_documents": "doc_id, text, scrubber_version",
    "extraction_status": "doc_id, schema_version, status, items_stored, items_dropped",
    "extracted_items": "item_id, doc_id, schema_version, item_type, value, title, confidence, status, extracted_by",
    "evidence": "evidence_id, item_id, char_start, char_end, quote, match_kind",
    "review_queue": "item_id, schema_version, reasons, evidence_quote, priority",
    "dead_letters": "dead_letter_id, stage, reason",
    "document_applicability": "doc_id, schema_version, taken, reason",
    "document_routing": "doc_id, schema_version, outcome, weighted_confidence",
    "inbox_files": "source_uri, size",
}
VERSIONED = (
    "extraction_status",
    "extracted_items",
    "evidence",
    "review_queue",
    "document_applicability",
    "document_routing",
)


@dataclass(frozen=True)
class FanOut:
    """Where a fan-out writes: the environment every worker process gets."""

    env: dict[str, str]

    @property
    def warehouse(self) -> str:
        return self.env["EXTRACTION_WAREHOUSE"]

    def worker(self, *stages: str, shards: Sequence[int] = (), versions: Sequence[str] = ()) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [sys.executable, "-m", "evals.scale_out", *worker_arguments(stages, shards, versions)],
            env=self.env,
            cwd=PROJECT_DIR,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )

    def run(self, *stages: str, shards: Sequence[int] = (), versions: Sequence[str] = ()) -> None:
        finish([self.worker(*stages, shards=shards, versions=versions)])


def worker_arguments(stages: Sequence[str], shards: Sequence[int] = (), versions: Sequence[str] = ()) -> list[str]:
    """A worker's command line after `python -m evals.scale_out` (see `main`)."""
    arguments = list(stages)
    if shards:
        arguments += ["--shards", ",".join(str(s) for s in shards)]
    if versions:
        arguments += ["--versions", ",".join(versions)]
    return arguments


class Worker(Protocol):
    """What `finish` needs of a worker process (a `subprocess.Popen` with its output piped, or alike)."""

    args: Any
    returncode: int | None

    def communicate(self) -> tuple[bytes | None, object]: ...


def finish(workers: Sequence[Worker]) -> None:
    """Wait for every worker; a failed one fails with its output."""
    failed = []
    for worker in workers:
        output, _ = worker.communicate()
        if worker.returncode != 0:
            said = (output or b"").decode(errors="replace")[-4000:]
            failed.append(f"{worker.args!s} exited {worker.returncode}:\n{said}")
    if failed:
        raise RuntimeError("\n\n".join(failed))


def fan_out(
    server: PostgresServer,
    folder: Path,
    catalog_db: str,
    dagster_db: str,
    shards: int,
    inbox: Path,
    prompts: Path,
) -> FanOut:
    """The environment of workers writing a DuckLake catalog (database `catalog_db`) with data under `folder`, their
    Dagster instance on database `dagster_db` (the project's dagster.postgres.yaml)."""
    home = folder / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(POSTGRES_INSTANCE, home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "DAGSTER_PG_URL": server.url(dagster_db),
        "EXTRACTION_WAREHOUSE": f"ducklake:postgres:{server.conninfo(catalog_db)}",
        "EXTRACTION_DATA_PATH": str(folder / "lake_data"),
        "EXTRACTION_SHARDS": str(shards),
        "EXTRACTION_INBOX": str(inbox),
        "EXTRACTION_PROMPTS": str(prompts),
        "PYTHONPATH": os.pathsep.join([str(PROJECT_DIR), os.environ.get("PYTHONPATH", "")]),
    }
    # the model endpoint's pool gets its limit before runs start (runs creating it at once race in Dagster 1.13), as
    # `dagster instance concurrency set` would, without starting a process for it
    from dagster_postgres import PostgresEventLogStorage

    PostgresEventLogStorage(server.url(dagster_db)).set_concurrency_slots(MODEL_POOL, shards)
    return FanOut(env=env)


def file_run(folder: Path, inbox: Path, prompts: Path) -> FanOut:
    """The default path for comparison: one DuckDB file under `folder`, Dagster on its local storage, one shard."""
    home = folder / "dagster_home"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(POSTGRES_INSTANCE.with_name("dagster.yaml"), home / "dagster.yaml")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EXTRACTION_WAREHOUSE": str(folder / "warehouse.duckdb"),
        "EXTRACTION_SHARDS": "1",
        "EXTRACTION_INBOX": str(inbox),
        "EXTRACTION_PROMPTS": str(prompts),
        "PYTHONPATH": os.pathsep.join([str(PROJECT_DIR), os.environ.get("PYTHONPATH", "")]),
    }
    return FanOut(env=env)


def snapshot(warehouse: str | Path, versions: Sequence[str] = ()) -> dict[str, list[tuple[object, ...]]]:
    """Every compared table's rows, sorted: two warehouses hold the same results exactly when these are equal.
    With `versions`, only the tables of extraction results, and only those schema versions' rows."""
    from extraction_assets.lib.warehouse import open_warehouse

    tables = [t for t in COMPARED_COLUMNS if t in VERSIONED] if versions else list(COMPARED_COLUMNS)
    where = " WHERE schema_version IN (SELECT unnest(?))" if versions else ""
    with open_warehouse(warehouse, read_only=True) as con:
        return {
            table: con.execute(
                f"SELECT {COMPARED_COLUMNS[table]} FROM {table}{where} ORDER BY ALL",
                [list(versions)] if versions else [],
            ).fetchall()
            for table in tables
        }


def duplicate_keys(warehouse: str | Path) -> dict[str, int]:
    """Rows beyond the first per key, by table (a DuckLake enforces no key: this must stay empty)."""
    from extraction_assets.lib.warehouse import open_warehouse
    from extraction_assets.lib.warehouse.ddl import KEYS

    with open_warehouse(warehouse, read_only=True) as con:
        counts = {
            table: int(con.execute(f"SELECT count(*) - count(DISTINCT ({', '.join(key)})) FROM {table}").fetchone()[0])  # type: ignore[index]
            for table, key in KEYS.items()
            if key
        }
    return {table: n for table, n in counts.items() if n}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.scale_out", description=__doc__)
    parser.add_argument("stages", nargs="+", choices=["ingest", "extract", "queue"], help="the parts to run")
    parser.add_argument("--shards", default="", help="comma-separated shard numbers (default: every shard)")
    parser.add_argument("--versions", default="", help="comma-separated schema versions (default: every one)")
    args = parser.parse_args(argv)
    shards = [int(s) for s in args.shards.split(",") if s]
    if "extract" in args.stages and os.environ.get("EXTRACTION_WAREHOUSE", "").startswith("ducklake:"):
        from extraction_assets.lib.parallel import start_shard_pool

        # the other shards' processes import while this one does (`runner.shard_pool` takes them)
        start_shard_pool(len(shards) or int(os.environ.get("EXTRACTION_SHARDS") or 1), "extraction_assets.runner")

    from extraction_assets.lib.settings import Settings
    from extraction_assets.runner import open_instance, run_pipeline

    results = run_pipeline(
        Settings.from_env(),
        schema_keys=[v for v in args.versions.split(",") if v] or None,
        instance=open_instance(),  # its connections kept (`instance.storage.keep_connections`)
        stages=tuple(args.stages),
        shards=shards or None,
    )
    failed = [r for r in results if not r.success or r.failed_checks]
    for result in failed:
        print(f"{result.name}: success={result.success} failed_checks={result.failed_checks} {result.skipped or ''}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
