"""Every detector takes time linear in its text, on long inputs of each shape a detector may choke on: a pattern
that backtracks over a long run (the line-wrapped e-mail pattern did, over any long token) stalls a whole scrub.

Measured as a ratio in one process, in the thread's own CPU time (wall time is what a busy machine's scheduler
makes of it: under load 8 a 1 ms scrub and a 4 ms one measured 1 to 20), the least of three runs of each size: four
times the text must cost well under sixteen times the time (quadratic), whatever the machine's speed or load."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from extraction_assets.lib.pii import scrub

SHAPES: dict[str, Callable[[int], str]] = {
    "a long token after a line-wrapped e-mail": lambda n: "Contact rita@northwind.com\nToken: " + "x" * n + "\n",
    "a long token before an @ and a line break": lambda n: "x" * n + "@northwind\n.com",
    "letters": lambda n: "a" * n,
    "digits": lambda n: "1" * n,
    "digits and spaces": lambda n: "1 " * (n // 2),
    "digits and dashes": lambda n: "1-" * (n // 2),
    "digits and dots": lambda n: "1." * (n // 2),
    "digits and colons": lambda n: "1:" * (n // 2),
    "plus-led numbers": lambda n: "+1 " * (n // 3),
    "at signs": lambda n: "a@" * (n // 2),
    "dots": lambda n: "a." * (n // 2),
    "one address per line": lambda n: "a@b\n" * (n // 4),
    "country codes and digits": lambda n: "DE89" * (n // 4),
    "letters and digits": lambda n: "a1" * (n // 2),
    "a long secret": lambda n: "password=" + "x" * n,
    "bearer words": lambda n: "bearer " * (n // 7),
    "spelled out addresses": lambda n: "a dot " * (n // 6),
    "percent-encoded @": lambda n: "%40" * (n // 3),
    "a long run of spaces": lambda n: "1" + " " * n + "1",
    "spaced at signs and dots": lambda n: "a @ b . " * (n // 8),
    "zero-width characters": lambda n: "a\u200b1" * (n // 3),
    "encoded at signs": lambda n: "a%2540b " * (n // 8),
    "quoted lines": lambda n: "\n> 12" * (n // 5),
    "wrapped digit groups": lambda n: "1234\n" * (n // 5),
    "quoted digit groups": lambda n: "12 \n> 34" * (n // 8),
    "fullwidth digits and signs": lambda n: "４０１２＠ａ．" * (n // 7),
    "compatibility characters one by one": lambda n: "a＠" * (n // 2),
    "encoded percent signs": lambda n: "%25" * (n // 3),
}


def _cpu_seconds(text: str) -> float:
    """The least CPU time of three scrubs of `text` by this thread."""
    runs = []
    for _ in range(3):
        started = time.thread_time()
        scrub(text)
        runs.append(time.thread_time() - started)
    return min(runs)


@pytest.mark.parametrize("shape", SHAPES)
def test_scrub_time_grows_linearly(shape: str) -> None:
    make = SHAPES[shape]
    small, large = make(10_000), make(40_000)
    small_s, large_s = _cpu_seconds(small), _cpu_seconds(large)
    assert large_s / max(small_s, 1e-4) < 9, (small_s, large_s)  # linear is 4, quadratic 16
