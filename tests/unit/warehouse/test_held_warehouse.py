"""A run holds the warehouse file open between batches, and gives it back whenever another process waits for it."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.defs.resources import WarehouseResource
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import HeldWarehouse, give_back, held_warehouse, open_warehouse, transaction
from extraction_assets.lib.warehouse import held as held_module
from extraction_assets.lib.warehouse.held import IDLE_S
from extraction_assets.lib.warehouse.lock_wait import open_duckdb_file, readers_file
from tests.one_row import one_row
from tests.waiting import wait_until

OPEN_ONCE = """
import sys
from pathlib import Path
from extraction_assets.lib.warehouse.lock_wait import open_duckdb_file
con = open_duckdb_file(Path(sys.argv[1]), read_only=sys.argv[2] == "read", wait_seconds=8, on_wait=lambda _: None)
print(con.execute("SELECT count(*) FROM raw_documents").fetchone()[0], flush=True)
"""


@pytest.fixture
def held(tmp_path: Path) -> Iterator[HeldWarehouse]:
    holder = HeldWarehouse(tmp_path / "w.duckdb")
    yield holder
    holder.close()


def _someone_waits(path: Path) -> int:
    """What a waiting process holds: a shared lock on the readers file (closing the handle lets it go)."""
    handle = os.open(readers_file(path), os.O_RDWR | os.O_CREAT)
    fcntl.flock(handle, fcntl.LOCK_SH)
    return handle


def test_batches_share_one_open_file_and_their_writes_commit(held: HeldWarehouse) -> None:
    for n in range(10):
        with held.lease() as con:
            con.execute(
                "INSERT INTO dead_letters (dead_letter_id, stage, tenant_id, source_uri, reason, detail, first_seen_at)"
                " VALUES (?, 'read', 't', 'f', 'test', '{}', now())",
                [str(n)],
            )
    assert held.opened == 1
    held.close()
    assert not held.is_open
    with open_warehouse(held.path, read_only=True) as con:  # a read-only open fails while this process holds it
        assert one_row(con.execute("SELECT count(*) FROM dead_letters"))[0] == 10


QUEUE_COLUMNS = (  # the queue's first columns: the rows below fill those
    "item_id, tenant_id, doc_id, schema_version, item_type, title, confidence, reasons, evidence_quote, source_uri, "
    "priority, queued_at"
)


def test_a_key_deleted_in_one_batch_can_be_written_again_in_the_next(held: HeldWarehouse) -> None:
    """The review queue's rebuild deletes and rewrites rows an earlier batch of the run deleted: an open snapshot
    left on the held connection (a pending result of opening it) made that a duplicate key."""
    rows = "SELECT 'q' || i, 't', 'd', 'pulse@v1', 'risk', 'x', 0.5, '[]', NULL, 'f', 1.0, now() FROM range(50) t(i)"
    with open_warehouse(held.path):  # an existing warehouse: opening it only reads its DDL stamp
        pass
    with held.lease() as con:
        con.execute(f"INSERT INTO review_queue ({QUEUE_COLUMNS}) {rows}")
    with held.lease() as con, transaction(con):
        con.execute("DELETE FROM review_queue WHERE item_id = 'q5'")
    with held.lease() as con, transaction(con):
        con.execute("DELETE FROM review_queue WHERE schema_version = 'pulse@v1'")
        con.execute(f"INSERT INTO review_queue ({QUEUE_COLUMNS}) {rows}")
        assert con.execute("SELECT count(*) FROM review_queue").fetchall() == [(50,)]


def test_the_file_is_given_back_after_the_lease_when_someone_waits(held: HeldWarehouse) -> None:
    with held.lease():
        waiting = _someone_waits(held.path)
        assert held.is_open, "never given back in the middle of a batch"
    try:
        assert not held.is_open
    finally:
        os.close(waiting)
    with held.lease():
        pass
    assert held.opened == 2


def test_between_leases_the_watcher_gives_the_file_back_to_a_process_that_starts_waiting(held: HeldWarehouse) -> None:
    with held.lease():
        pass
    assert held.is_open
    waiting = _someone_waits(held.path)
    try:
        wait_until("given back well before the idle limit", lambda: not held.is_open, IDLE_S / 4, every=0.01)
    finally:
        os.close(waiting)


def test_an_idle_holder_gives_the_file_back(held: HeldWarehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(held_module, "IDLE_S", 0.3)
    with held.lease():
        pass
    assert held.is_open
    wait_until("the file given back", lambda: not held.is_open, 2, every=0.01)


def test_a_pinned_holder_keeps_the_file_between_batches_however_long_they_take(
    held: HeldWarehouse, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a run is in progress the gaps between its batches (its workers computing) close nothing: a close
    checkpoints, and the next batch would open the file cold. Once the run is done, the idle rule applies again."""
    monkeypatch.setattr(held_module, "IDLE_S", 0.2)
    with held.pinned():
        with held.lease():
            pass
        time.sleep(0.6)
        assert held.is_open and held.opened == 1
        waiting = _someone_waits(held.path)
        try:
            wait_until("given back to a process that waits, pinned or not", lambda: not held.is_open, 2, every=0.01)
        finally:
            os.close(waiting)
        with held.lease():
            pass
    wait_until("given back once idle after the run", lambda: not held.is_open, 2, every=0.01)


@pytest.mark.parametrize("mode", ["read", "write"])
def test_another_process_gets_in_while_a_run_holds_the_file_batch_after_batch(held: HeldWarehouse, mode: str) -> None:
    """The run never idles long enough to give the file back on its own: only the other process's saying that it
    waits (a reader's or a writer's alike) lets it in."""
    with held.lease():
        pass
    other = subprocess.Popen([sys.executable, "-c", OPEN_ONCE, str(held.path), mode], stdout=subprocess.PIPE, text=True)
    while other.poll() is None:  # a run's batches, back to back, the whole time the other process is waiting
        with held.lease() as con:
            con.execute("SELECT 1")
        time.sleep(0.005)
    assert other.returncode == 0, "it got in before its wait ran out"
    assert other.stdout is not None and other.stdout.read().strip() == "0"
    assert held.opened >= 2, "the run opened the file again after it"


def test_every_run_of_a_process_shares_one_held_file_and_a_plain_open_borrows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "w.duckdb"
    monkeypatch.setattr(held_module, "IDLE_S", 60.0)  # a loaded machine's gap between two runs is not what is tested

    @dg.asset
    def two_batches(warehouse: WarehouseResource) -> None:
        for _ in range(2):
            with warehouse.connect(read_only=True) as con:
                con.execute("SELECT count(*) FROM raw_documents")

    resources = {"warehouse": WarehouseResource(path=str(path))}
    for _ in range(3):
        assert dg.materialize([two_batches], resources=resources).success
    held = held_warehouse(path)
    assert held.opened == 1 and held.is_open, "three runs, six batches, one open"
    with open_warehouse(path, read_only=True) as con:  # a read-only open of a file this process holds would fail
        assert con.execute("SELECT count(*) FROM raw_documents").fetchall() == [(0,)]
    give_back(path)
    open_duckdb_file(path, read_only=True, wait_seconds=0.5).close()  # given back: anyone may open it


def test_the_runner_gives_the_file_back_when_it_is_done(settings: Settings) -> None:
    from extraction_assets.runner import run_pipeline

    assert all(step.success for step in run_pipeline(settings, schema_keys=["pulse@v1"]))
    assert not held_warehouse(settings.warehouse).is_open


def test_a_pass_never_closes_the_file_while_it_runs_however_short_the_idle_time(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner pins the file for the whole pass (`runner._holding`): between steps, between versions and while
    Dagster stores its events, no idle rule closes and checkpoints it, even one that would close it at once; the pass
    opens it once, and gives it back at its end."""
    from extraction_assets.runner import run_pipeline

    monkeypatch.setattr(held_module, "IDLE_S", 0.0)
    monkeypatch.setattr(held_module, "WATCH_S", 0.001)
    held = held_warehouse(settings.warehouse)
    before = held.opened
    assert all(step.success for step in run_pipeline(settings, schema_keys=["pulse@v1", "email@v1"]))
    assert held.opened == before + 1, "opened once for the pass: never closed and opened again during it"
    assert not held.is_open


def test_a_step_keeps_the_file_open_between_its_batches_whoever_launched_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run from the UI or a sensor has no runner pinning its pass: each step's work pins the file itself
    (`WarehouseResource.pinned`), so a batch that comes more than the idle time after the last (a slow model) finds
    it open and warm; after the step, the idle rule applies again."""
    monkeypatch.setattr(held_module, "IDLE_S", 0.2)
    warehouse = WarehouseResource(path=str(tmp_path / "w.duckdb"))
    held = held_warehouse(warehouse.path)
    try:
        with warehouse.pinned():
            with warehouse.connect() as con:
                con.execute("SELECT 1")
            time.sleep(0.6)
            assert held.is_open and held.opened == 1
        wait_until("given back once idle after the step", lambda: not held.is_open, 2, every=0.01)
    finally:
        give_back(warehouse.path)
    with WarehouseResource(path="ducklake:sqlite:" + str(tmp_path / "lake.sqlite")).pinned():
        pass  # a DuckLake catalog is never held: nothing to pin
