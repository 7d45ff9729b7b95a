"""The crash test's child: `extraction-assets run` writing two documents per batch and announcing every write.

Before each write of a stage it appends the stage's name to the file in CRASH_MARKS, so the test can kill the
process (SIGKILL) at a chosen write of a chosen stage; a run that ends appends `exit`. The chosen write (CRASH_AT,
`<stage>:<nth>`) waits until the test has seen its mark (the test then creates the file CRASH_GO names), so on a
busy machine the kill still lands just after that write begins, not after a run that went on while the test was
not scheduled. The test forks each run from a server that imported this module, and with it the pipeline, once
(`python -m tests.integration.forked tests.integration.crash_driver`, see `forked.py`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# what a run imports, imported once before forking
import dagster._core.storage.event_log.sqlite
import dagster._core.storage.runs.sqlite  # noqa: F401

import extraction_assets.commands.pipeline
import extraction_assets.defs.extraction.assets
import extraction_assets.defs.review.assets
import extraction_assets.lib.heuristics
import extraction_assets.lib.readers  # noqa: F401
import extraction_assets.lib.stages.extract as extract
import extraction_assets.lib.stages.ingest as ingest
import extraction_assets.lib.stages.review as review
import extraction_assets.lib.stages.scrub as scrub
from extraction_assets.cli import main as cli_main

GO_WAIT_S = 60


def announced(stage: str, write: Callable[..., Any]) -> Callable[..., Any]:
    calls = 0

    def announce_then_write(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        with Path(os.environ["CRASH_MARKS"]).open("a") as marks:
            marks.write(stage + "\n")
        if os.environ.get("CRASH_AT") == f"{stage}:{calls}":
            go, deadline = Path(os.environ["CRASH_GO"]), time.monotonic() + GO_WAIT_S
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.001)
        return write(*args, **kwargs)

    return announce_then_write


ingest.INGEST_BATCH = scrub.SCRUB_BATCH = extract.EXTRACT_BATCH = 2
ingest.store_ingest_batch = announced("ingest", ingest.store_ingest_batch)
scrub.upsert_scrubbed = announced("scrub", scrub.upsert_scrubbed)
extract.write_extraction_batch = announced("extract", extract.write_extraction_batch)
review.rebuild_review_queue = announced("review_queue", review.rebuild_review_queue)


def main(argv: list[str]) -> int:
    """One run of the command line; `exit` announced however it ends (but by a kill)."""
    try:
        return cli_main(argv)
    finally:
        with Path(os.environ["CRASH_MARKS"]).open("a") as marks:
            marks.write("exit\n")
