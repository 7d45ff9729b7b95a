"""What the scale-out tests share: whether PostgreSQL is there, the reference run into one DuckDB file, a fan-out
into a DuckLake catalog on the server (fixture `postgres`, one per test file: the files run on parallel workers, and
the tests of a file write databases of their own on it), its worker processes, and the comparison of two warehouses
row for row."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import pytest

from evals.postgres_server import PostgresServer, create_database, unavailable_reason
from evals.scale_out import FanOut, fan_out, finish, snapshot, worker_arguments
from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings
from extraction_assets.lib.warehouse.backend import extension_folder
from extraction_assets.runner import run_pipeline
from tests.integration.forked import Forked, ForkServer

SHARDS = 4
Rows = dict[str, list[tuple[object, ...]]]

_reason = unavailable_reason() or (
    None if extension_folder() is not None else "DuckLake extensions not installed (pip install -e '.[scale]')"
)
NEEDS_POSTGRES = pytest.mark.skipif(_reason is not None, reason=f"scale-out test needs PostgreSQL: {_reason}")


def reference(folder: Path, inbox: Path, versions: Sequence[str] = ()) -> Rows:
    """The same inbox through the default path: one DuckDB file, one run."""
    warehouse = folder / "reference.duckdb"
    results = run_pipeline(
        Settings(warehouse=warehouse, inbox=inbox),
        schema_keys=versions or None,
        instance=dg.DagsterInstance.ephemeral(),
    )
    assert all(r.success and not r.failed_checks for r in results), [r.name for r in results if not r.success]
    return snapshot(warehouse, versions)


def lake(server: PostgresServer, folder: Path, name: str, inbox: Path) -> FanOut:
    """Workers' environment for a DuckLake catalog and a Dagster storage of their own on `server`."""
    for database in (f"{name}_lake", f"{name}_dagster"):
        create_database(server, database)
    return fan_out(server, folder, f"{name}_lake", f"{name}_dagster", SHARDS, inbox, DEFAULT_PROMPTS)


# what a worker imports as it runs (the runner imports the steps' code, the readers, the scrubber and the
# heuristics on first use): the workers' server imports it once
WORKER_IMPORTS = (
    "extraction_assets.runner",
    "extraction_assets.instance",
    "extraction_assets.lib.parallel",
    "extraction_assets.defs.extraction.assets",
    "extraction_assets.defs.review.assets",
    "extraction_assets.lib.readers",
    "extraction_assets.lib.pii",
    "extraction_assets.lib.heuristics",
    "extraction_assets.lib.review",
    "dagster_postgres",
)


class Workers:
    """A fan-out's worker processes (`python -m evals.scale_out`, one per call), forked from a server that imported
    what they run once, with the fan-out's environment: each is a process of its own, writing the lake at once with
    the others, as a worker on another machine would, without the seconds of imports a fresh process pays."""

    def __init__(self, server: ForkServer) -> None:
        self.server = server

    def start(self, *stages: str, shards: Sequence[int] = (), versions: Sequence[str] = ()) -> Forked:
        return self.server.start(worker_arguments(stages, shards, versions))

    def run(self, *stages: str, shards: Sequence[int] = (), versions: Sequence[str] = ()) -> None:
        finish([self.start(*stages, shards=shards, versions=versions)])


@contextmanager
def workers(fanned: FanOut, folder: Path) -> Iterator[Workers]:
    """The worker processes of `fanned`, their output under `folder`; what still runs at the end is killed."""
    with ForkServer("evals.scale_out", fanned.env, folder, WORKER_IMPORTS) as server:
        yield Workers(server)


def dagster_runs(server: PostgresServer, database: str) -> dict[str, int]:
    """Runs by status in a Dagster storage on PostgreSQL."""
    import psycopg2

    con = psycopg2.connect(server.conninfo(database))
    try:
        with con.cursor() as cursor:
            cursor.execute("SELECT status, count(*) FROM runs GROUP BY status")
            return dict(cursor.fetchall())
    finally:
        con.close()


def assert_same_rows(got: Rows, expected: Rows, where: str) -> None:
    for table, rows in expected.items():
        assert got[table] == rows, f"{table}: {len(got[table])} rows in {where}, {len(rows)} in the file"
