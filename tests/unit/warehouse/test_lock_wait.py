"""A warehouse another process holds: writers and readers wait with backoff, then say plainly that it is busy."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from extraction_assets.cli import main
from extraction_assets.commands.common import EXIT_BUSY
from extraction_assets.lib.warehouse import WarehouseBusy, open_warehouse
from extraction_assets.lib.warehouse.lock_wait import let_readers_in, open_duckdb_file, readers_file
from extraction_assets.web.review_app import create_review_app
from tests.review_seed import seed
from tests.waiting import wait_until

HOLD = """
import duckdb, sys, time
while True:
    try:
        con = duckdb.connect(sys.argv[1])
        break
    except duckdb.IOException:
        time.sleep(0.01)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    seed(path)
    return path


def _hold(path: Path, seconds: float) -> subprocess.Popen[str]:
    """Another process that holds the DuckDB file's write lock for `seconds`."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.fixture
def held(warehouse: Path) -> Iterator[subprocess.Popen[str]]:
    holder = _hold(warehouse, 60)
    yield holder
    holder.kill()
    holder.wait()


def test_a_connection_waits_until_the_other_process_lets_go_and_says_so_once(warehouse: Path) -> None:
    holder = _hold(warehouse, 1.0)
    heard: list[str] = []
    started = time.monotonic()
    con = open_duckdb_file(warehouse, read_only=True, wait_seconds=30, on_wait=heard.append)
    waited = time.monotonic() - started
    con.close()
    holder.wait()
    assert 0.3 < waited < 10
    assert len(heard) == 1 and f"locked by process {holder.pid}" in heard[0]


def test_a_lock_kept_past_the_wait_is_a_plain_busy_error_naming_the_holder(warehouse: Path, held) -> None:
    started = time.monotonic()
    with pytest.raises(WarehouseBusy, match=rf"locked by process {held.pid} .* try again"):
        open_warehouse(warehouse, read_only=True, wait_seconds=0.5).__enter__()
    assert time.monotonic() - started < 5


def test_a_lock_error_that_is_not_a_lock_is_raised_at_once(tmp_path: Path) -> None:
    (tmp_path / "not-a-db.duckdb").write_text("plain text, not a database")
    with pytest.raises(Exception) as raised:
        open_duckdb_file(tmp_path / "not-a-db.duckdb", wait_seconds=30)
    assert not isinstance(raised.value, WarehouseBusy)


def test_review_list_while_a_run_keeps_the_lock_says_busy_without_a_traceback(
    warehouse: Path, held, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("extraction_assets.commands.review_handlers.READER_WAIT_S", 0.5)
    code = main(["review", "list", "--tenant", "acme", "--warehouse", str(warehouse)])
    out = capsys.readouterr()
    assert code == EXIT_BUSY
    assert "busy:" in out.out and f"process {held.pid}" in out.out.replace("\n", " ")
    assert "Traceback" not in out.out + out.err


def test_review_list_during_short_write_transactions_waits_and_answers(
    warehouse: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stop = threading.Event()

    def writer() -> None:  # a run's rhythm: short batch transactions, the lock let go between them
        while not stop.is_set():
            holder = _hold(warehouse, 0.3)
            holder.wait()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        codes = [main(["review", "list", "--tenant", "acme", "--warehouse", str(warehouse)]) for _ in range(3)]
    finally:
        stop.set()
        thread.join()
    assert codes == [0, 0, 0]
    assert "busy" not in capsys.readouterr().out


def test_the_review_page_answers_503_with_a_reason_while_the_lock_is_kept(
    warehouse: Path, held, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("extraction_assets.web.review_app.READER_WAIT_S", 0.5)
    from extraction_assets.lib.settings import DEFAULT_PROMPTS
    from tests.review_seed import review_auth, signed_in

    app = create_review_app(warehouse, "acme", DEFAULT_PROMPTS, review_auth())
    client = signed_in(TestClient(app, base_url="http://127.0.0.1"), "linh")
    response = client.get("/")
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert "busy:" in response.text and f"process {held.pid}" in response.text


WRITER_RHYTHM = """
import sys, time
from pathlib import Path
from extraction_assets.lib.warehouse.lock_wait import open_duckdb_file
path, until, yield_s = Path(sys.argv[1]), time.monotonic() + float(sys.argv[2]), float(sys.argv[3])
closed = path.with_suffix(".closed")
print("writing", flush=True)
while time.monotonic() < until:  # a run's rhythm at its tightest: the next transaction opens as the last closes
    con = open_duckdb_file(path, yield_s=yield_s)
    time.sleep(0.3)
    con.close()
    with closed.open("a") as tally:  # one mark per transaction closed: how long a reader waited, in transactions
        tally.write(".")
"""


def transactions_a_reader_waits(warehouse: Path, yield_s: float) -> list[int]:
    """For six reads against a writer whose transactions leave no gap: how many write transactions closed while each
    read waited. Counted in transactions, not seconds, so a loaded machine slows both sides alike."""
    closed = warehouse.with_suffix(".closed")
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER_RHYTHM, str(warehouse), "30", str(yield_s)], stdout=subprocess.PIPE, text=True
    )
    waited = []
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        wait_until("the writer's first transaction closed", closed.exists, 30)  # in its rhythm, however loaded
        for _ in range(6):
            time.sleep(0.5)  # a reader's process starting: the writer is back in its rhythm
            before = closed.stat().st_size if closed.exists() else 0
            open_duckdb_file(warehouse, read_only=True, wait_seconds=10, on_wait=lambda _: None).close()
            waited.append(closed.stat().st_size - before)
    finally:
        writer.kill()
        writer.wait()
    return waited


def test_a_waiting_reader_gets_in_between_two_write_transactions_that_leave_no_gap(warehouse: Path) -> None:
    """Without the writer's yield a reader got in only by luck, when a retry fell into the few milliseconds between
    two transactions (seconds per read); with it, after at most the transaction in progress and one more."""
    waited = transactions_a_reader_waits(warehouse, yield_s=2.0)
    assert max(waited) <= 2, waited


def test_a_writer_lets_a_waiting_reader_in_first_and_never_waits_past_its_bound(warehouse: Path) -> None:
    assert let_readers_in(warehouse) < 0.05, "no reader has ever waited: no wait"
    handle = os.open(readers_file(warehouse), os.O_RDWR | os.O_CREAT)
    fcntl.flock(handle, fcntl.LOCK_SH)  # a reader waiting for the file
    release = threading.Timer(0.4, os.close, [handle])
    release.start()
    waited = let_readers_in(warehouse, longest=5)
    release.join()
    assert 0.3 < waited < 2
    other = os.open(readers_file(warehouse), os.O_RDWR)
    fcntl.flock(other, fcntl.LOCK_SH)  # a reader that never gets in (this process holds the file, say)
    try:
        assert 0.3 <= let_readers_in(warehouse, longest=0.3) < 1.5
    finally:
        os.close(other)


STUCK_READER = (
    "import fcntl, os, sys, time\n"
    "handle = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(handle, fcntl.LOCK_SH)\n"  # waits for the warehouse, then never takes it (Ctrl-Z)
    "print('waiting', flush=True)\n"
    "time.sleep(60)\n"
)


def test_a_reader_that_waits_and_never_takes_the_file_costs_a_bounded_time_and_is_named(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A `review list` suspended while it waits held the readers lock for good: every later batch of a run gave the
    file back and waited for it. Past its bound it is named once and no longer waited for."""
    from extraction_assets.lib.warehouse import lock_wait

    monkeypatch.setattr(lock_wait, "STUCK_AFTER_S", 0.5)
    stuck = subprocess.Popen([sys.executable, "-c", STUCK_READER, str(readers_file(warehouse))], stdout=subprocess.PIPE)
    try:
        assert stuck.stdout is not None and stuck.stdout.readline().strip() == b"waiting"
        assert lock_wait.others_wait(warehouse), "a reader that has just begun to wait is let in"
        time.sleep(0.6)
        with caplog.at_level("WARNING", logger="extraction_assets.warehouse"):
            assert not lock_wait.others_wait(warehouse)
            assert not lock_wait.others_wait(warehouse)
        assert [r.getMessage() for r in caplog.records] == [
            f"process {stuck.pid} has waited for the warehouse for over 0.5 s without taking it (suspended?): "
            "not giving the file back to it any more while it waits"
        ]
        assert let_readers_in(warehouse, longest=5) < 0.1
    finally:
        stuck.kill()
        stuck.wait()
    assert not lock_wait.others_wait(warehouse)
