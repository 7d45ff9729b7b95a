"""A rotation of waiting readers must not starve a run (issue: a new review process every 4 s, each suspended while
it waited and replaced before it was named, made a run ten times slower with no message).

Real processes: a writer holding the warehouse file as a run does (pinned, batch after batch, a pause between
batches while its workers compute), and a new waiting reader every ROTATE_S, each holding what a suspended review
process holds and killed when the next one comes. The writer must finish its batches at most a bounded share slower
than its own work, and name the readers that waited without taking the file."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.lib.warehouse.held import YIELD_GRACE_S, YIELD_SHARE
from extraction_assets.lib.warehouse.lock_wait import STUCK_AFTER_S, readers_file

BATCHES = 100
PAUSE_S = 0.06  # between two batches: the run's workers computing
ROTATE_S = 2.0  # a new reader this often (4 s in the attack): each is gone before it has waited STUCK_AFTER_S

WRITER = f"""
import json, logging, sys, time
from pathlib import Path
from extraction_assets.lib.warehouse import held_warehouse
from extraction_assets.lib.warehouse import lock_wait

logging.basicConfig(level=logging.WARNING, format="%(message)s")
waited = []
real = lock_wait.let_readers_in
def timed(*args, **kwargs):
    started = time.monotonic()
    try:
        return real(*args, **kwargs)
    finally:
        waited.append(time.monotonic() - started)
lock_wait.let_readers_in = timed
held = held_warehouse(Path(sys.argv[1]))
print("writing", flush=True)
started = time.monotonic()
done = 0
with held.pinned():
    while done < {BATCHES} and time.monotonic() - started < 120:
        with held.lease() as con:
            con.execute(  # named columns: the table gains columns
                "INSERT INTO inbox_files (source_uri, tenant_id, size, mtime_ns, read_at) VALUES (?, 't', 1, 1, now())",
                [str(done)],
            )
        done += 1
        time.sleep({PAUSE_S})
print(json.dumps({{"batches": done, "seconds": time.monotonic() - started, "waited": sum(waited)}}), flush=True)
"""

# What a `review list` suspended while it waits (Ctrl-Z) holds, as the kernel sees it: the readers file's shared lock,
# taken by `lock_wait.open_duckdb_file` when it finds the warehouse locked, and never a turn at the file.
SUSPENDED_READER = (
    "import fcntl, os, sys, time\n"
    "handle = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
    "fcntl.flock(handle, fcntl.LOCK_SH)\n"
    "print('waiting', flush=True)\n"
    "time.sleep(600)\n"
)


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="reads the kernel's lock table (Linux)")
def test_a_rotation_of_suspended_readers_costs_a_run_a_bounded_share_and_each_is_named(tmp_path: Path) -> None:
    assert ROTATE_S < STUCK_AFTER_S
    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse):
        pass
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(warehouse)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    readers: list[subprocess.Popen[str]] = []
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        while writer.poll() is None:
            reader = subprocess.Popen(
                [sys.executable, "-c", SUSPENDED_READER, str(readers_file(warehouse))],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert reader.stdout is not None and reader.stdout.readline().strip() == "waiting"
            for old in readers[-1:]:  # the previous one goes as the next one comes: none waits STUCK_AFTER_S
                old.kill()
                old.wait()
            readers.append(reader)
            deadline = time.monotonic() + ROTATE_S
            while writer.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
        out, err = writer.communicate(timeout=30)
    finally:
        for process in [writer, *readers]:
            process.kill()
            process.wait()
    figures = json.loads(out.strip().splitlines()[-1])
    print(f"rotation of waiting readers: {figures}, {len(readers)} readers")  # the figure, shown with -s
    # the writer's own work: its batches and pauses, as long as the machine makes them (not BATCHES * PAUSE_S: on a
    # loaded machine each commit alone may take a tenth of a second)
    work = figures["seconds"] - figures["waited"]
    assert figures["batches"] == BATCHES, figures  # before: a wait after every batch, 20 times the run's own work
    assert figures["seconds"] < 2 * work + 5, figures
    assert figures["waited"] < YIELD_SHARE * figures["seconds"] + YIELD_GRACE_S + 1.5, figures
    named = [r.pid for r in readers if f"process {r.pid} did not take the warehouse" in err]
    assert named and named[0] == readers[0].pid, err  # each wait is named: the first reader at least
