"""The Dagster daemon the UI runs with (`extraction-assets ui`): Dagster's own, looking for requested backfills every
few seconds instead of every 30.

Dagster's backfill daemon sleeps a fixed 30 s between two looks (`DEFAULT_DAEMON_INTERVAL_SECONDS`, no setting in
`dagster.yaml`), so a backfill launched from the UI waits 15 s on average, up to 30 s, before its one run is
submitted, and then a second look to be marked done: most of what a user waits for a backfill with nothing to do.
A look is two queries of the run storage. The value is read by the loop at each start (an import inside the
function), so setting it before the daemon starts is enough; a Dagster upgrade that stops reading it fails the unit
test beside this module, not silently.
"""

from __future__ import annotations

import os

BACKFILL_POLL_S = 2  # seconds between two looks for requested backfills (EXTRACTION_BACKFILL_POLL_S)


def poll_seconds() -> int:
    return max(1, int(os.environ.get("EXTRACTION_BACKFILL_POLL_S", BACKFILL_POLL_S)))


def main() -> None:
    from dagster._daemon import controller
    from dagster._daemon.cli import main as dagster_daemon

    controller.DEFAULT_DAEMON_INTERVAL_SECONDS = poll_seconds()
    dagster_daemon()


if __name__ == "__main__":
    main()
