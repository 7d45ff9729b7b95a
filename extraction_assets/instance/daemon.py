"""The Dagster daemon the UI runs with (`extraction-assets ui`): Dagster's own, looking for requested backfills every
2 s instead of every 30, and at its sensors every second instead of every 5.

Dagster's backfill daemon sleeps a fixed 30 s between two looks (`DEFAULT_DAEMON_INTERVAL_SECONDS`, no setting in
`dagster.yaml`), so a backfill launched from the UI waits 15 s on average, up to 30 s, before its one run is
submitted, and then a second look to be marked done: most of what a user waits for a backfill with nothing to do.
A look is two queries of the run storage. Likewise the sensor loop sleeps 5 s between two looks, so a sensor due
every 5 s (the inbox's) ticked every 5 to 10 s; a look at a sensor not yet due reads its state alone. Both values
are read by the loops at each turn, so setting them before the daemon starts is enough; a Dagster upgrade that stops
reading them fails the unit test of this module, not silently.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

BACKFILL_POLL_S = 2  # seconds between two looks for requested backfills (EXTRACTION_BACKFILL_POLL_S)
SENSOR_LOOP_S = 1  # seconds between two looks at the sensors (each ticks at its own minimum interval)


def command(workspace: Path | str) -> list[str]:
    """How to start this daemon on a workspace file, with this process's Python."""
    return [sys.executable, "-m", __name__, "run", "-w", str(workspace)]


def poll_seconds() -> int:
    return max(1, int(os.environ.get("EXTRACTION_BACKFILL_POLL_S", BACKFILL_POLL_S)))


def main() -> None:
    # the daemon's modules load in the daemon's process alone, not in the command that builds its command line
    from dagster._daemon import controller, sensor
    from dagster._daemon.cli import main as dagster_daemon

    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = poll_seconds()
    sensor.MIN_INTERVAL_LOOP_TIME = SENSOR_LOOP_S
    dagster_daemon()


if __name__ == "__main__":
    main()
