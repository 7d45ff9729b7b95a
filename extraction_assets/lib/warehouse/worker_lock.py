"""One worker per partition of a warehouse at a time, whoever launches it: a run from the UI, the command line, a
sensor or a schedule. Each run's extraction of a partition holds an exclusive `flock` on a file beside the
warehouse while it routes, reads what is pending and extracts it; a second run waits its turn, says whom it waits
for, and then finds nothing left to do. The kernel drops the lock with its process, so a killed run never blocks
the next one. Lock files are readable by their owner only (they name a process)."""

from __future__ import annotations

import fcntl
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from extraction_assets.lib.private_files import open_private
from extraction_assets.lib.warehouse.backend import beside_warehouse

_UNSAFE = re.compile(r"[^\w@.-]")
HOLDER_BYTES = 64  # the holder's name, padded to this width: written over the last one, never truncated


@contextmanager
def exclusive_turn(path: Path, on_wait: Callable[[str], None], waiting: str) -> Iterator[None]:
    """Hold an exclusive lock on `path` for the body, writing this process into it; a process that finds it taken
    tells `on_wait` once whom it waits for (`waiting` says for what, after the holder) and sleeps until its turn.

    The name is written over the last holder's at a fixed width: truncating the file first cost 4 to 8 ms of a
    journaled file system's time per turn (a pass takes a turn per schema version), writing in place 0.02 ms."""
    handle = open_private(path)
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(handle, HOLDER_BYTES, 0).decode(errors="replace").strip() or "another process"
            on_wait(f"waiting for {holder} {waiting}")
            fcntl.flock(handle, fcntl.LOCK_EX)
        os.pwrite(handle, f"process {os.getpid()}".ljust(HOLDER_BYTES).encode(), 0)
        yield
    finally:
        os.close(handle)  # closing drops the lock


@contextmanager
def one_worker(warehouse: str, partition: str, on_wait: Callable[[str], None]) -> Iterator[None]:
    """Hold the partition's worker lock for the body; `on_wait` hears once whom this process waits for. Where no
    local file can sit beside the warehouse (a lake in object storage), the body runs unguarded."""
    path = beside_warehouse(warehouse, f".extracting-{_UNSAFE.sub('_', partition)}.lock")
    if path is None:
        yield
        return
    with exclusive_turn(path, on_wait, f"to finish extracting {partition}"):
        yield
