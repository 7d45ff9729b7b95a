"""Waiting in a test for something another process or thread does, with a bound and a message saying what."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_until(what: str, condition: Callable[[], object], seconds: float, every: float = 0.05) -> None:
    """Poll `condition` every `every` seconds until it is true; fail naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for: {what}"
        time.sleep(every)
