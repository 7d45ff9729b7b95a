"""A time budget for one document's scrub: a document that takes longer becomes a dead letter with its reason, so
one pathological text (a megabyte-long token, a shape some detector handles badly) never holds a batch, a run, or
every later run that would find it pending again.

The budget is counted in the CPU time the process gets (`ITIMER_PROF`: user and system time; its alarm is
`SIGPROF`), not on the clock: the scrub workers run at a lower priority, and on a busy machine a worker that waits for
a core is not slow. Counted on the clock, a 0.2 s document in a worker starved by other work reached a 20 s budget
and was lost to the dead letters. Python delivers the alarm between bytecodes, and the regular-expression engine
checks for it while it matches, so even a detector caught in one long match is stopped. Signals reach only the main
thread: in another thread (a sensor, a threaded executor) the budget is not enforced and the scrub runs to its end,
as it did before; the pipeline's scrub runs in worker processes or the step's main thread."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SCRUB_BUDGET_S = 20.0  # CPU seconds per document: the longest real inbox document scrubs in well under one


class ScrubTooSlow(Exception):
    """The document's scrub outlasted its budget; it is not stored, and not tried again by the same scrubber."""


@contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise `ScrubTooSlow` in the body once it has used `seconds` of CPU (main thread only; elsewhere no limit)."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: FrameType | None) -> None:
        raise ScrubTooSlow(f"scrubbing took longer than its budget of {seconds:g} s of CPU")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
