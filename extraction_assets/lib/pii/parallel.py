"""Scrubbing is CPU-bound pure Python: batches are scrubbed in the process's worker pool (`lib/parallel.py`), one
worker per core, while the caller loads the next batch and stores the finished ones (its single writer)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from extraction_assets.lib.parallel import WORKER_NICENESS, in_order
from extraction_assets.lib.pii.batch import Scrubbable, ScrubBatch, scrub_batch
from extraction_assets.lib.pii.policy import PiiPolicy


def scrub_in_workers(
    batches: Iterable[Sequence[Scrubbable]],
    policy: PiiPolicy,
    vault_key: bytes | None,
    workers: int,
    niceness: int = WORKER_NICENESS,
) -> Iterator[ScrubBatch]:
    """`scrub_batch` of each batch in `workers` background processes (0: in this one), yielded in order."""
    return in_order(scrub_batch, ((docs, policy, vault_key) for docs in batches), workers, niceness)
