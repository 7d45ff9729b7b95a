"""How much of the machine DuckDB may take in one process: a memory limit and a thread count, fitted to the machine
unless the settings give them (`EXTRACTION_DUCKDB_MEMORY_MB`, `EXTRACTION_DUCKDB_THREADS`).

Without a limit DuckDB may take 80% of the machine's memory for its buffer pool, and it keeps the blocks it has
read: a run's memory then grew with the warehouse (466 MB of a 1.1 GB peak at 32 k documents were DuckDB's). The
pipeline's statements work on a batch at a time or stream whole tables, so a bounded pool costs re-reads of cold
blocks from the page cache, not memory; what does not fit spills to the temporary folder beside the file. The
limit is 128 MB: a batch's reads fetch its rows alone (`documents.by_rowid`) and the whole-table checks scan a range
of row ids at a time, so what DuckDB cannot evict stayed under 66 MB between statements of a 32 k-document run (the
transient blocks of the tables appended to until the next checkpoint, up to 47 MB, and the key indexes, up to 25 MB,
which grow with the warehouse); before, a batch read decoded every row between its first and last, and two versions
ran out of 128 MB at 32 k documents.

Memory DuckDB frees goes back to its allocator (jemalloc), which kept it in per-thread caches: a run's process held
about 150 MB more than DuckDB and Python used. The allocator is flushed after any task that allocated more than
`ALLOCATOR_FLUSH_MB` and purged by its background thread. That flush runs on DuckDB's worker threads only: with one
thread (this machine's fitted count) DuckDB works on the caller's thread, and what it frees stays with the allocator
until its decay (about two seconds; 37 MB over what DuckDB held at the peak of a 2 k-document pass, 62 MB at 32 k).
DuckDB's next allocations reuse those pages first, so they do not raise the peak: returning them at once (the limit
set again to its value, which purges the allocator) as each lease ended, at most once a second, left the peaks at
2 k, 8 k and 32 k documents as they were for about 1% more CPU, and is not done.

Its threads: the run's worker processes take the cores while DuckDB works in the run's own process, so it gets half
of them (at least one)."""

from __future__ import annotations

import os
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb

DEFAULT_MEMORY_MB = 128  # a full run of 32 k documents passes with it; the buffer pool is most of it
ALLOCATOR_FLUSH_MB = 8  # DuckDB's default 128 MB: freed memory stayed in the process
SMALL_MACHINE_SHARE = 8  # on a machine with less than 1 GB, an eighth of it


def _machine_mb() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return None


def fitted_memory_mb() -> int:
    machine = _machine_mb()
    return DEFAULT_MEMORY_MB if machine is None else max(64, min(DEFAULT_MEMORY_MB, machine // SMALL_MACHINE_SHARE))


def fitted_threads() -> int:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // 2)


@cache
def engine_config() -> dict[str, str | bool | int | float | list[str]]:
    """DuckDB's configuration for every database this process opens (a file or an attached lake)."""
    from extraction_assets.lib.settings import Settings

    settings = Settings.from_env()
    memory = settings.duckdb_memory_mb or fitted_memory_mb()
    threads = settings.duckdb_threads or fitted_threads()
    return {"memory_limit": f"{memory}MB", "threads": str(threads)}


def limit_engine(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """`con`'s database held to `engine_config`, set on the open database (settings of the whole database in this
    process): given to `connect` instead, they would refuse any other connection to the same file in this process
    opened without them (DuckDB: 'a different configuration than existing connections'), a plain
    `duckdb.connect(file)` of a script or a test beside a held warehouse. About 0.1 ms."""
    config = engine_config()
    con.execute(
        f"SET memory_limit = '{config['memory_limit']}'; SET threads = {int(str(config['threads']))}; "
        f"SET allocator_flush_threshold = '{ALLOCATOR_FLUSH_MB}MB'; SET allocator_background_threads = true"
    )
    return con
