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
from types import FrameType, TracebackType

SCRUB_BUDGET_S = 20.0  # CPU seconds per document: the longest real inbox document scrubs in well under one


class ScrubTooSlow(Exception):
    """The document's scrub outlasted its budget; it is not stored, and not tried again by the same scrubber."""


class Budget:
    """One document's budget, entered once per document: the alarm's timer armed on entry and stopped on exit. The
    alarm's handler stays in place for the whole batch (setting it and putting the previous one back for each document
    cost a tenth of a short document's scrub); an alarm handled after the document's exit is ignored."""

    def __init__(self, seconds: float, armed: bool) -> None:
        self.seconds = seconds
        self.armed = armed  # False: no limit (another thread than the main one, or no budget)
        self.running = False

    def __enter__(self) -> None:
        if self.armed:
            self.running = True
            signal.setitimer(signal.ITIMER_PROF, self.seconds)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self.armed:
            signal.setitimer(signal.ITIMER_PROF, 0)
            self.running = False

    def expired(self, signum: int, frame: FrameType | None) -> None:
        """The alarm's handler: stops the document's scrub."""
        if self.running:
            raise ScrubTooSlow(f"scrubbing took longer than its budget of {self.seconds:g} s of CPU")


@contextmanager
def time_budgets(seconds: float) -> Iterator[Budget]:
    """A batch's budgets: in the body, `with budget:` raises `ScrubTooSlow` once the document's scrub has used
    `seconds` of CPU (main thread only; elsewhere no limit). The previous SIGPROF handler is back after the body."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield Budget(seconds, armed=False)
        return
    budget = Budget(seconds, armed=True)
    previous = signal.signal(signal.SIGPROF, budget.expired)
    try:
        yield budget
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
