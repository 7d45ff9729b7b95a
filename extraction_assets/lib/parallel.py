"""A step's CPU-bound work (reading inbox files, scrubbing, routing and extracting) in worker processes, one per
usable core, while the step's own process reads the warehouse and writes what comes back: DuckDB allows one writer,
and every batch is still committed in one transaction by it.

The pool belongs to the process: started by the first step with work enough to pay for it (more than one batch, and
`POOL_WORTH` items where the number of workers is not set), then kept for the next steps of the run and the next
passes of a watch (a worker costs about a second to start and import what it uses), which use it for any work of
more than one batch.
Results come back in the order the work was given, and at most one batch per worker plus one more is in flight
(a worker that finishes takes the next at once), so memory stays flat in the size of the inbox.

Where the system can fork (Linux, macOS), the workers are forked from a server process the pool starts once, which
has imported the code the steps' work runs (`load_in_workers`, named by the steps): each worker starts with it
loaded instead of importing it again (two workers and a small job of each kind cost 1.0 CPU-s with their server
against 1.7 spawned, alternated three times on 2 cores). The server is started
clean (spawned, not forked from this process), so, as with spawned workers, none of this process's threads or open
files is copied into a worker. It is ended and waited for when this process exits, so the workers' CPU time is
counted in this process's children's, as a spawned worker's is.

The workers run at a lower scheduling priority (`WORKER_NICENESS` by default, `EXTRACTION_WORKER_NICENESS`): a run
is background work, and a reviewer's command or the review page on the same cores should not wait for the CPU
behind it. On cores nobody else wants the workers run as fast as before; the step's own process, which holds the
warehouse's lock while it writes, keeps its priority. Beside other CPU-bound work they get almost none (a tenth of
a busy process's share at 10): where runs are the machine's main work, 0 keeps them level with it."""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import ctypes.util
import gc
import importlib
import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.context import BaseContext
from typing import Any, TypeVar

R = TypeVar("R")
WORKER_NICENESS = 10  # added to the run's own niceness (Unix `nice`; 19 is the lowest priority)
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies
# Allocations between two young-generation passes of a worker's cyclic garbage collector (Python's default: 700).
# A worker makes millions of short-lived objects (matches, tuples, lists) that reference counting frees, and at the
# default the collector's passes took about 6% of its CPU (a pass over the bench inbox: 0.40 of 6.2 CPU-s per
# worker, 0.14 at this threshold); what they would find, objects in a reference cycle, is rare and small here.
WORKER_GC_THRESHOLD = 10_000
# Items (inbox files, documents) a step must have before it starts a pool of its own where the number of workers is
# not set. Two spawned workers cost about one CPU-second to start and feed. Quiet, on 2 cores, alternated 3 times, a
# pass of the 67-file sample / 150 / 400 / 800 files of the bench inbox took 2.3 / 2.2 / 3.5 / 5.7 CPU-s and 2.2 /
# 2.2 / 3.4 / 5.6 s in one process, 3.1 / 2.9 / 4.6 / 6.7 CPU-s and 2.6 / 2.5 / 3.7 / 4.9 s with two workers: the
# pool's wall time pays from about 500 such files. The bound stays lower, on the safe side for larger documents (more
# work a file), where a pool pays sooner.
POOL_WORTH = 256


def _end_with_parent(run: int, forked_by_server: bool) -> None:
    """Have the kernel end this worker when the run that started it dies, however it dies (SIGKILL, the
    out-of-memory killer): a worker holds both ends of its task queue, so it would otherwise wait on it for good.
    A worker forked by the pool's server is signalled when the server ends, and the server ends when the run does.
    Linux only; elsewhere the worker ends when its queue breaks, as before."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):  # no libc prctl (not Linux)
        return
    if not (_running(run) if forked_by_server else os.getppid() == run):
        os._exit(1)  # the run died before the request was made: nobody will signal


def _running(pid: int) -> bool:
    """Whether a process of this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _start_worker(run: int, niceness: int, forked_by_server: bool = False) -> None:
    """Each worker's first acts: end with its run, yield the CPU to interactive work, and collect cyclic garbage less
    often (`WORKER_GC_THRESHOLD`)."""
    _end_with_parent(run, forked_by_server)
    if niceness:
        os.nice(niceness)
    gc.set_threshold(WORKER_GC_THRESHOLD, *gc.get_threshold()[1:])


_worker_modules: set[str] = set()  # what the steps' work imports (`load_in_workers`)


def load_in_workers(*modules: str) -> None:
    """Name modules the work a step gives the pool runs: the server the workers are forked from imports them once.
    A step names them when it is imported, before any pool starts (a pool's server started before keeps what it
    had: a worker imports anything else itself, as a spawned one does)."""
    _worker_modules.update(modules)


def _workers_context() -> BaseContext:
    """Workers forked from a clean server that has imported the work's modules (`load_in_workers`) where the system
    has one; else spawned, each importing what its work needs."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(sorted(_worker_modules))  # read when the server starts
    if not _server_stopped_at_exit:
        _stop_server_at_exit()
    return context


_server_stopped_at_exit = False


def _stop_server_at_exit() -> None:
    """At this process's exit (after its pools' workers have ended), end the workers' server and wait for it: the
    server has waited for the workers, so their CPU time is counted in this process's children's, and no process of
    the run outlives it."""
    global _server_stopped_at_exit
    _server_stopped_at_exit = True

    def stop() -> None:
        from multiprocessing import forkserver

        server = getattr(forkserver, "_forkserver", None)
        with contextlib.suppress(OSError, ChildProcessError):
            getattr(server, "_stop", lambda: None)()

    atexit.register(stop)


def background_pool(workers: int, niceness: int = WORKER_NICENESS) -> ProcessPoolExecutor:
    """Worker processes `niceness` below the caller's priority, ended by the kernel if the run dies, forked from a
    clean server process or spawned (`_workers_context`): the caller's threads and open files are not copied into
    them."""
    context = _workers_context()
    return ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_start_worker,
        initargs=(os.getpid(), niceness, context.get_start_method() == "forkserver"),
    )


WORKER_PROCESSES_VARIABLE = "EXTRACTION_WORKER_PROCESSES"


def usable_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def pool_size() -> int:
    """Worker processes a pool has: `EXTRACTION_WORKER_PROCESSES` when set (0: none, every step's work in its own
    process; shard processes running at once share the cores out this way), else one per usable core, none on a
    single core."""
    from extraction_assets.lib.settings import Settings

    given = Settings.from_env().worker_processes
    if given is not None:
        return given
    cores = usable_cores()
    return cores if cores > 1 else 0


def workers_for(items: int, batch_size: int) -> int:
    """Worker processes worth using for `items` in batches of `batch_size`: up to the pool's size, none (0: the work
    runs in the step's own process) for work of a single batch, or for fewer than `POOL_WORTH` items where no pool
    runs yet and `EXTRACTION_WORKER_PROCESSES` does not ask for one."""
    if items <= batch_size or (items < POOL_WORTH and _worth_asked()):
        return 0
    return min(pool_size(), -(-items // batch_size))


def settled_at(batch_size: int) -> int:
    """Items beyond which `workers_for` answers the same whatever more there are: what a step must count of work it
    plans as it goes before it knows its workers (none without a pool: the answer is 0 whatever the work)."""
    workers = pool_size()
    if workers == 0:
        return 0
    every_worker = batch_size * workers
    return max(every_worker, POOL_WORTH) if _worth_asked() else every_worker


def _worth_asked() -> bool:
    """Whether a pool must be worth its start-up: none runs in this process yet, and the number of workers is not
    set."""
    from extraction_assets.lib.settings import Settings

    return _pool is None and Settings.from_env().worker_processes is None


_working = 0  # `in_order` calls in progress in this process
_pool: ProcessPoolExecutor | None = None
_pool_niceness: int | None = None
_pool_lock = threading.Lock()


def process_pool(niceness: int = WORKER_NICENESS) -> ProcessPoolExecutor:
    """This process's pool, one worker per usable core (started on first use, started again at another niceness or
    after a worker died)."""
    global _pool, _pool_niceness
    with _pool_lock:
        if _pool is not None and (_pool_niceness != niceness or getattr(_pool, "_broken", False)):
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None
        if _pool is None:
            _pool, _pool_niceness = background_pool(max(1, pool_size()), niceness), niceness
        return _pool


def stop_pool() -> None:
    """End this process's workers (the next step that needs them starts new ones)."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=True, cancel_futures=True)
            _pool = None


def in_order(
    work: Callable[..., R],
    jobs: Iterable[tuple[Any, ...]],
    workers: int,
    niceness: int | None = None,
) -> Iterator[R]:
    """`work(*job)` for each job: in the step's own process when `workers` is 0, else in the process's pool with at
    most `workers` + 1 jobs in flight; results in the jobs' order. The jobs are read as the workers need them (the
    caller loads the next batch while they work); stopping early cancels what has not started."""
    global _working
    if workers < 1:
        yield from (work(*job) for job in jobs)
        return
    pool = process_pool(WORKER_NICENESS if niceness is None else niceness)
    in_flight: deque[Future[R]] = deque()
    _working += 1
    try:
        for job in jobs:
            in_flight.append(pool.submit(work, *job))
            if len(in_flight) > workers:
                yield in_flight.popleft().result()
        while in_flight:
            yield in_flight.popleft().result()
    except BrokenProcessPool:
        stop_pool()
        raise
    finally:
        _working -= 1
        for future in in_flight:
            future.cancel()


def working() -> bool:
    """Whether this process's workers have work of a step in progress (the step waits on them, it is not idle)."""
    return _working > 0


_shard_pool: tuple[int, int, ProcessPoolExecutor] | None = None  # (processes, worker processes each, pool)


def shard_processes(shards: int) -> tuple[int, int]:
    """The processes `shards` run at once take beside the caller's own (which runs the first), and the worker
    processes each of those, the caller's included, may use: the usable cores shared out among the shards."""
    return shards - 1, max(0, usable_cores() // shards - 1)


def start_shard_pool(shards: int, warm: str) -> None:
    """Start the processes of `shards` run at once now, each importing the module `warm` (what its shard's run
    needs) while the caller still imports and opens its own: a spawned process took about as long to import as the
    caller took from its start to its first shard's run, so its shard started that much later, and the run's second
    core idled while the caller started and again while the later shard finished (`shard_pool` hands them out)."""
    global _shard_pool
    processes, workers = shard_processes(shards)
    if processes < 1 or _shard_pool is not None:
        return
    pool = _new_shard_pool(processes, workers, warm)
    for _ in range(processes):  # a submit finding no idle process spawns one: every process starts now
        pool.submit(int)
    _shard_pool = (processes, workers, pool)


def shard_pool(shards: int) -> ProcessPoolExecutor:
    """The processes of `shards` run at once (`shard_processes`): those `start_shard_pool` started for them, else
    new ones. The caller shuts the pool down."""
    global _shard_pool
    processes, workers = shard_processes(shards)
    early, _shard_pool = _shard_pool, None
    if early is not None:
        if early[:2] == (processes, workers):
            return early[2]
        early[2].shutdown(wait=False, cancel_futures=True)
    return _new_shard_pool(processes, workers, "")


def _new_shard_pool(processes: int, workers: int, warm: str) -> ProcessPoolExecutor:
    """Spawned shard processes, each with `workers` worker processes of its own and the module `warm` imported."""
    return ProcessPoolExecutor(
        processes, mp_context=multiprocessing.get_context("spawn"), initializer=_start_shard, initargs=(workers, warm)
    )


def _start_shard(worker_processes: int, warm: str) -> None:
    """A shard process's first acts: its share of worker processes, and the modules its run needs."""
    os.environ[WORKER_PROCESSES_VARIABLE] = str(worker_processes)
    if warm:
        importlib.import_module(warm)
