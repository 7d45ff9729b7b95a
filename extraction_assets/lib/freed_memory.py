"""Memory the process has freed, given back to the system while a long pass works.

CPython allocates every object of more than 512 bytes (a document's text, a batch's rows, the lists and dicts of a
batch's work) with the C library's `malloc`, and glibc's `malloc` keeps what is freed for later allocations: the
pages stay resident. A pass's process frees a batch's objects when the next batch comes, in a different mix of
sizes each time (texts of every length), so the heap's free pieces add up: on an 8 k-document pass the run's
process held 20 to 60 MB of freed C heap, more the longer the pass (its peak grew with the warehouse for this
among other reasons). `malloc_trim(0)` returns the free pages, at the top of the heap and inside it; it costs CPU
in proportion to what it returns (18.8 ms for 170 MB freed, 0.3 ms with nothing to return), and a page handed back
costs a page fault when it is used again, so the trim runs at most every `TRIM_EVERY_S`.

Linux with glibc only: elsewhere (musl, macOS) the C library has no `malloc_trim` and this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
import time
from collections.abc import Callable
from functools import cache

TRIM_EVERY_S = 1.0

_lock = threading.Lock()
_last_trim = float("-inf")


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError):  # no C library by that name, or one without malloc_trim (not glibc)
        return None
    return trim


def give_back_freed_memory(every_s: float = TRIM_EVERY_S) -> bool:
    """Return the C heap's free pages to the system, unless that was done less than `every_s` seconds ago in this
    process; whether it was done now."""
    global _last_trim
    trim = _malloc_trim()
    if trim is None:
        return False
    now = time.monotonic()
    with _lock:
        if now - _last_trim < every_s:
            return False
        _last_trim = now
    trim(0)
    return True
