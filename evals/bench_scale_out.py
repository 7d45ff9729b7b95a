"""Scale-out: the bench inbox extracted by 1, 2 and 4 shards at once into a DuckLake catalog on PostgreSQL
(Dagster's storage on PostgreSQL too), against the default single DuckDB file.

Each configuration starts from an empty warehouse: one ingest run, then the extraction of every shard (the runner
extracts a lake's shards at once, the first in its own process and each other one in a process of its own: the figure
that scales), then the review queues. Rows are those extraction writes (items, evidence, status rows). Each lake is
then compared with the file, table by table and row for row (the scale-out test does it on a third of the inbox,
with a shard killed mid-write).
BENCH_SCALE_OUT_DOCUMENTS sets the inbox size (default: the throughput bench's whole inbox, 2,109 documents).
"""

from __future__ import annotations

import os
import resource
import tempfile
import time
from pathlib import Path

from evals.bench_inbox import build_inbox, evalsets_dir, source_files
from evals.bench_throughput import TENANTS
from evals.postgres_server import PostgresServer, create_database, running_postgres, unavailable_reason
from evals.scale_out import FanOut, duplicate_keys, fan_out, file_run, snapshot
from extraction_assets.lib.settings import DEFAULT_PROMPTS

Figures = dict[str, float | int | str]
SHARD_COUNTS = (1, 2, 4)


def _extraction_rows(run: FanOut) -> int:
    from extraction_assets.lib.warehouse import open_warehouse

    with open_warehouse(run.warehouse, read_only=True) as con:
        return sum(
            int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index,misc]
            for t in ("extracted_items", "evidence", "extraction_status")
        )


def _children_cpu_s() -> float:
    """CPU of this process's finished children and the descendants they waited for (the runs and their workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _measure(run: FanOut, shards: int, name: str, documents: int, server: PostgresServer) -> Figures:
    started = time.perf_counter()
    run.run("ingest")
    ingested = time.perf_counter()
    cpu_before = _children_cpu_s() + server.cpu_seconds()
    run.run("extract", shards=list(range(shards)))  # the runner extracts a lake's shards at once
    extracted = time.perf_counter()
    extract_cpu_s = _children_cpu_s() + server.cpu_seconds() - cpu_before
    run.run("queue")
    done = time.perf_counter()
    rows = _extraction_rows(run)
    extract_s = extracted - ingested
    return {
        f"{name}_ingest_s": round(ingested - started, 2),
        f"{name}_extract_s": round(extract_s, 2),
        f"{name}_extract_cpu_s": round(extract_cpu_s, 2),
        f"{name}_extract_cores_busy": round(extract_cpu_s / extract_s, 2),
        f"{name}_queue_s": round(done - extracted, 2),
        f"{name}_wall_s": round(done - started, 2),
        f"{name}_extract_rows": rows,
        f"{name}_extract_rows_per_s": round(rows / extract_s, 1),
        f"{name}_extract_docs_per_s": round(documents / extract_s, 2),
    }


def _tables_equal(got: dict[str, list[tuple[object, ...]]], expected: dict[str, list[tuple[object, ...]]]) -> str:
    """`n/n` when the lake holds the file's rows in every compared table (`evals.scale_out.COMPARED_COLUMNS`)."""
    equal = sum(got[table] == rows for table, rows in expected.items())
    return f"{equal}/{len(expected)}"


def bench_scale_out() -> Figures:
    reason = unavailable_reason()
    if reason:
        return {"skipped": 1, "measured_on": reason}
    if not (evalsets_dir() / "sroie" / "dev.jsonl").exists():
        return {"skipped": 1, "measured_on": f"no eval data at {evalsets_dir()}"}
    documents = int(os.environ.get("BENCH_SCALE_OUT_DOCUMENTS") or TENANTS * len(source_files()))
    figures: Figures = {"documents": documents}
    with tempfile.TemporaryDirectory() as tmp, running_postgres() as server:
        root = Path(tmp)
        inbox = root / "inbox"
        build_inbox(inbox, documents)
        file = file_run(root / "file", inbox, DEFAULT_PROMPTS)
        figures |= _measure(file, 1, "duckdb_file", documents, server)
        expected = snapshot(file.warehouse)
        for shards in SHARD_COUNTS:
            name = f"lake_{shards}_shards"
            for database in (f"{name}_catalog", f"{name}_dagster"):
                create_database(server, database)
            run = fan_out(server, root / name, f"{name}_catalog", f"{name}_dagster", shards, inbox, DEFAULT_PROMPTS)
            figures |= _measure(run, shards, name, documents, server)
            figures[f"{name}_tables_equal_to_file"] = _tables_equal(snapshot(run.warehouse), expected)
            figures[f"{name}_duplicate_keys"] = sum(duplicate_keys(run.warehouse).values())
        base = float(figures["lake_1_shards_extract_s"])
        for shards in SHARD_COUNTS[1:]:
            figures[f"speedup_lake_{shards}_shards_over_1"] = round(
                base / float(figures[f"lake_{shards}_shards_extract_s"]), 2
            )
        figures["ratio_lake_1_shard_over_duckdb_file"] = round(base / figures["duckdb_file_extract_s"], 2)  # type: ignore[operator]
        cores = os.cpu_count() or 1
        for shards in SHARD_COUNTS:
            # However well the shards share the machine, they cannot finish before their CPU divided by its cores.
            floor_s = float(figures[f"lake_{shards}_shards_extract_cpu_s"]) / cores
            figures[f"lake_{shards}_shards_floor_over_duckdb_file"] = round(
                floor_s / float(figures["duckdb_file_extract_s"]), 2
            )
    figures["measured_on"] = (
        f"bench inbox of {documents} documents, every schema version, offline heuristics; {os.cpu_count()} cores; "
        "each configuration from an empty warehouse, one process per shard (the first the runner's own), PostgreSQL "
        "on 127.0.0.1; "
        "tables equal to the file = compared tables whose rows (key and results) equal the DuckDB file's; "
        "extract CPU = the extraction's processes and their workers, with the PostgreSQL server's during it; "
        "floor = that CPU spread over every core, over the file's extract seconds (no sharding on this machine "
        "can beat it)"
    )
    return figures
