"""The instance in `DAGSTER_HOME`, its storage created by one process at a time.

Dagster creates its SQLite tables when an instance first opens a fresh `DAGSTER_HOME`; two processes doing it at
once crash ("table run_tags already exists") and the second one's run never happens. An exclusive file lock
around the first open makes the creation happen once; later opens find the tables and pass straight through.

The pools get their limit then too: the daemon's run queue limits only pools it knows a limit of, and with a
per-run limit no step ever claims a slot (which would set it), so on a fresh home every run queued before the first
pass of the queue would start at once. `make ui` and `extraction-assets ui` open the home this way before the
daemon starts.

A fresh home also says that automation is on: the UI reads a flag of the pre-sensor asset daemon, unset (so "off")
on a new instance, and shows "Auto-materialize off: automation condition evaluation is paused" on every job page,
while the automation sensor (what evaluates conditions in Dagster 1.13) runs regardless. The flag is set once, to
what is true; a person who switches it in the UI keeps their choice.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
from dagster._daemon.asset_daemon import _PRE_SENSOR_ASSET_DAEMON_PAUSED_KEY

from extraction_assets.defs.partitions import EXTRACTION_POOL
from extraction_assets.instance.ephemeral import ephemeral_instance
from extraction_assets.lib.private_files import open_private

INIT_LOCK = ".extraction-assets-init.lock"
AUTOMATION_PAUSED = _PRE_SENSOR_ASSET_DAEMON_PAUSED_KEY  # what the UI's "Auto-materialize on/off" shows


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` (created if missing); the kernel drops it when the process dies, even by SIGKILL."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with os.fdopen(open_private(path), "r+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def open_instance() -> dg.DagsterInstance:
    """The instance in DAGSTER_HOME when set (the UI then shows these runs), its storage keeping its connections
    (`keep_connections`), else a throwaway one (`ephemeral.ephemeral_instance`)."""
    home = os.environ.get("DAGSTER_HOME")
    if not home:
        return ephemeral_instance()
    with file_lock(Path(home) / INIT_LOCK):
        instance = dg.DagsterInstance.get()
        instance.get_runs(limit=1)  # every storage the runner uses is created (or migrated) inside the lock
        instance.all_instigator_state()
        storage = instance.event_log_storage
        if storage.supports_global_concurrency_limits and EXTRACTION_POOL not in storage.get_concurrency_keys():
            storage.initialize_concurrency_limit_to_default(EXTRACTION_POOL)  # the default limit of dagster.yaml
        cursors = instance.daemon_cursor_storage
        if cursors.get_cursor_values({AUTOMATION_PAUSED}).get(AUTOMATION_PAUSED) is None:
            cursors.set_cursor_values({AUTOMATION_PAUSED: "false"})
    keep_connections(instance)
    return instance


def keep_connections(instance: dg.DagsterInstance) -> None:
    """Have the instance's storage keep its database connections open for the process's life.

    Dagster's PostgreSQL storage opens a connection per query by default, and a run writes thousands of events: each
    new connection is a server process forked and authenticated on the cores the runs share (a shard process of a
    DuckLake pass paid more CPU for it than for its extraction). This keeps one connection per storage (a few more
    while threads log at once), recycled hourly, without a statement timeout, as Dagster's webserver does for
    itself. A no-op on the local (SQLite) storage.
    """
    instance.optimize_for_webserver(statement_timeout=0, pool_recycle=3600, max_overflow=4)
