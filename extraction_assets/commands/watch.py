"""What `extraction-assets watch` does: run the pipeline, then run it again whenever the inbox or the prompt files
change, in one warm process.

`extraction-assets run` pays for its process, its imports (Dagster, the packs, the detectors) and a Dagster
instance every time; a watch pays them once, so a pass after new files costs what the new documents cost plus the
Dagster runs. Changes come from the kernel (watchfiles: inotify), grouped while they keep arriving; changes during a
pass are kept for the next one. Each pass is the same `run_pipeline` as `run` (incremental, idempotent), against
the instance in DAGSTER_HOME when set (the UI shows its runs) or one kept for the whole watch.
"""

from __future__ import annotations

import argparse
import gc
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from watchfiles import Change, DefaultFilter, watch

from extraction_assets.commands.common import console, settings_from_args
from extraction_assets.commands.pipeline import print_steps, run_with_progress
from extraction_assets.instance import open_instance
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import READER_WAIT_S, give_back, is_lake, open_warehouse, warehouse_summary
from extraction_assets.runner import INTERRUPTED

if TYPE_CHECKING:
    from dagster import DagsterInstance

HEARTBEAT_MS = 500  # the first pass starts after this long at most, and `--passes` / Ctrl-C are seen as often


class InputFilter(DefaultFilter):
    """What a pass reads (the default filter leaves out editors' swap files, VCS and cache folders), never the
    warehouse's own files, should it live under a watched folder (its writes would start pass after pass)."""

    def __init__(self, warehouse: Path | str) -> None:
        super().__init__()
        self._warehouse = None if is_lake(warehouse) else str(Path(warehouse).resolve())

    def __call__(self, change: Change, path: str) -> bool:
        if self._warehouse and str(Path(path).resolve()).startswith(self._warehouse):
            return False
        return super().__call__(change, path)


def warm_up() -> None:
    """Load up front what a pass would load when its first document needs it (the heuristic packs and their gates,
    the contract pack's word lists compiled, the PII detectors, the readers, NumPy for the batch writes): a warm
    process pays it once, not in the first pass after a file arrives. Then freeze it (`gc.freeze`): code loaded for
    good is never worth a collector's pass."""
    import numpy  # noqa: F401

    import extraction_assets.lib.pii.scrubber
    import extraction_assets.lib.readers  # noqa: F401
    from extraction_assets.lib.heuristics import HEURISTIC_PACKS
    from extraction_assets.lib.heuristics.contract import prepare_word_lists

    for pack in HEURISTIC_PACKS.values():
        pack.extract, pack.gate  # noqa: B018  (the properties import the pack)
    prepare_word_lists()  # the contract pack's word lists, compiled at their first use otherwise
    gc.collect()
    gc.freeze()


def cmd_watch(args: argparse.Namespace) -> int:
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a service manager's stop ends it as Ctrl-C does
    settings = settings_from_args(args)
    instance = open_instance()
    warm_up()
    watched = [p for p in (settings.inbox, settings.prompts_dir) if Path(p).exists()]
    where = ", ".join(str(p) for p in watched)
    console.print(f"watching {where}; warehouse {settings.warehouse} (Ctrl-C or SIGTERM stops)")
    changes = watch(
        *watched,
        watch_filter=InputFilter(settings.warehouse),
        rust_timeout=HEARTBEAT_MS,
        yield_on_timeout=True,
        raise_interrupt=False,
    )
    try:
        return _passes(settings, args, instance, changes)
    finally:  # the file was kept between passes (`run_pipeline`'s keep_held): given back as the watch ends
        give_back(settings.warehouse)


def _passes(
    settings: Settings, args: argparse.Namespace, instance: DagsterInstance, changes: Iterator[set[tuple[Change, str]]]
) -> int:
    """A pass for the inbox as it stands, then one for each group of changes, the warehouse held between them."""
    passes = 0
    for changed in changes:
        if passes and not changed:
            continue
        passes += 1
        what = f"{len(changed)} changed files" if passes > 1 else "bringing the warehouse up to date"
        console.print(f"pass {passes}: {what}")
        started = time.perf_counter()
        results = run_with_progress(settings, args, instance, keep_held=True)
        outcome = "done" if print_steps(results) else "done with failures"
        seconds = time.perf_counter() - started
        console.print(f"pass {passes} {outcome} in {seconds:.2f} s; {_counts(settings.warehouse)}")
        console.file.flush()
        if any(step.skipped == INTERRUPTED for step in results):
            return 130
        if args.passes and passes >= args.passes:
            return 0
    return 130  # the watch ended on Ctrl-C


def _counts(warehouse: Path) -> str:
    with open_warehouse(warehouse, read_only=Path(warehouse).exists(), wait_seconds=READER_WAIT_S) as con:
        summary = warehouse_summary(con)
    return f"documents {summary['documents']}, items {summary['items']}, review queue {summary['review_queue']}"
