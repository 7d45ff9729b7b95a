"""Scrubbing is CPU-bound pure Python: batches are scrubbed in worker processes, one per core, while the caller
loads the next batch and stores the finished ones (its single writer). Results come back in the batches' order,
and at most one batch per worker plus one queued is in flight, so memory stays flat in the size of the inbox.

The workers run at a lower scheduling priority (`WORKER_NICENESS` by default, `EXTRACTION_WORKER_NICENESS`): a run
is background work, and a reviewer's command or the review page on the same cores should not wait for the CPU
behind it. On cores nobody else wants the workers run as fast as before; the step's own process, which holds the
warehouse's lock while it writes, keeps its priority. Beside other CPU-bound work they get almost none (a tenth of
a busy process's share at 10): where runs are the machine's main work, 0 keeps them level with it."""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

from extraction_assets.lib.models import Document
from extraction_assets.lib.pii.batch import ScrubBatch, scrub_batch
from extraction_assets.lib.pii.policy import PiiPolicy

WORKER_NICENESS = 10  # added to the run's own niceness (Unix `nice`; 19 is the lowest priority)


PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies


def _end_with_parent(parent: int) -> None:
    """Have the kernel end this worker when the run that started it dies, however it dies (SIGKILL, the
    out-of-memory killer): a worker holds both ends of its task queue, so it would otherwise wait on it for good.
    Linux only; elsewhere the worker ends when its queue breaks, as before."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # no libc prctl (not Linux)
        return
    if os.getppid() != parent:  # the parent died before the request was made: nobody will signal
        os._exit(1)


def _start_worker(parent: int, niceness: int) -> None:
    """Each worker's first acts: end with its run, and yield the CPU to interactive work."""
    _end_with_parent(parent)
    if niceness:
        os.nice(niceness)


def background_pool(workers: int, niceness: int = WORKER_NICENESS) -> ProcessPoolExecutor:
    """Spawned worker processes (the caller's threads and open files are not copied into them) `niceness` below
    the caller's priority, ended by the kernel if the run dies."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker,
        initargs=(os.getpid(), niceness),
    )


def scrub_workers(documents: int, batch_size: int) -> int:
    """Worker processes worth starting: one per usable core, none for work of a single batch (a worker costs
    about a second to start and import the detectors)."""
    if documents <= batch_size:
        return 1
    return min(len(os.sched_getaffinity(0)), -(-documents // batch_size))


def scrub_in_workers(
    batches: Iterable[Sequence[Document]],
    policy: PiiPolicy,
    vault_key: bytes | None,
    workers: int,
    niceness: int = WORKER_NICENESS,
) -> Iterator[ScrubBatch]:
    """`scrub_batch` of each batch in `workers` background processes, yielded in order. One batch more than the
    workers is submitted: a worker that finishes takes the queued one at once instead of waiting while the caller
    stores a result and loads the next batch."""
    with background_pool(workers, niceness) as pool:
        in_flight: deque[Future[ScrubBatch]] = deque()
        for docs in batches:
            in_flight.append(pool.submit(scrub_batch, docs, policy, vault_key))
            if len(in_flight) > workers:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
