"""One worker per partition of a warehouse: a second process waits its turn and says whom it waits for; lock files
are the owner's only."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from extraction_assets.lib.warehouse import one_worker

HOLD = (
    "import sys, time\n"
    "from extraction_assets.lib.warehouse import one_worker\n"
    "with one_worker(sys.argv[1], 'pulse@v1', print):\n"
    "    print('in', flush=True)\n"
    "    time.sleep(float(sys.argv[2]))\n"
)


def test_a_second_worker_waits_for_the_first_and_says_whom(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "w.duckdb")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, warehouse, "1.5"], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "in"
    heard: list[str] = []
    started = time.monotonic()
    with one_worker(warehouse, "pulse@v1", heard.append):
        waited = time.monotonic() - started
    holder.wait(timeout=30)
    assert waited > 0.5, "the turn came only when the first worker was done"
    assert heard == [f"waiting for process {holder.pid} to finish extracting pulse@v1"]
    lock = tmp_path / "w.duckdb.extracting-pulse@v1.lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


def test_workers_of_different_partitions_do_not_wait_for_each_other(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "w.duckdb")
    heard: list[str] = []
    with one_worker(warehouse, "pulse@v1", heard.append), one_worker(warehouse, "pulse@v1|2", heard.append):
        pass
    assert heard == []
    assert (tmp_path / "w.duckdb.extracting-pulse@v1_2.lock").exists()


def test_the_lock_file_names_the_last_holder_alone(tmp_path: Path) -> None:
    warehouse = str(tmp_path / "w.duckdb")
    lock = tmp_path / "w.duckdb.extracting-pulse@v1.lock"
    lock.write_text("process 99999999 of an earlier, longer name")
    lock.chmod(0o600)
    with one_worker(warehouse, "pulse@v1", print):
        assert lock.read_text().strip() == f"process {os.getpid()}"
