"""Progress lines of long stages, at most one every few seconds: each line a run logs is an event Dagster stores
(about 7 ms), so a line per batch cost a full run more than a second."""

from __future__ import annotations

import time
from collections.abc import Callable

PROGRESS_S = 3.0


class Throttled:
    """`say(line)` passes the first line on, then one line per `every` seconds (the last one may wait for the next)."""

    def __init__(self, log: Callable[[str], None], every: float = PROGRESS_S) -> None:
        self._log = log
        self._every = every
        self._last: float | None = None

    def __call__(self, line: str) -> None:
        now = time.monotonic()
        if self._last is None or now - self._last >= self._every:
            self._last = now
            self._log(line)
