"""Scrub: every raw document whose scrubbed row is missing or was made by another scrubber or policy version is
masked under its tenant's policy, a batch at a time, in worker processes when there is more than a batch; a
document that cannot be scrubbed within its budget becomes a dead letter."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from extraction_assets.lib.models import DeadLetter
from extraction_assets.lib.parallel import in_order, load_in_workers, workers_for
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.warehouse import (
    batched,
    document_sizes,
    documents_to_scrub,
    record_dead_letters,
    row_count,
    scrubbed_row,
    tenant_ids,
    texts_to_scrub,
    upsert_scrubbed,
)

if TYPE_CHECKING:
    from extraction_assets.lib.pii import PiiPolicy, SealedMapping, TenantPolicy, ToScrub

SCRUB_BATCH = 200
BATCH_CHARS = 4_000_000  # a batch's documents' characters at most: what it holds in memory, sent and back
load_in_workers(__name__, "extraction_assets.lib.pii.batch")  # a worker scrubs (`scrub_to_store`)


@dataclass
class ScrubProgress:
    """Where a scrub stands after a batch (for a progress line)."""

    done: int
    pending: int
    failed: int
    workers: int


@dataclass
class ScrubReport:
    """What one scrub did: the figures its materialization shows."""

    tenants: dict[str, TenantPolicy]
    pending: int
    masked: Counter[str] = field(default_factory=Counter)
    per_tenant: Counter[str] = field(default_factory=Counter)
    failures: list[DeadLetter] = field(default_factory=list)
    total: int = 0  # scrubbed_documents rows after the run

    @property
    def scrubbed_now(self) -> int:
        return self.pending - len(self.failures)


class ToStore(NamedTuple):
    """A scrubbed batch as it is stored: its rows (`scrubbed_row`), vault entries and dead letters, and its tallies."""

    rows: list[dict[str, Any]]
    sealed: list[SealedMapping]
    failures: list[DeadLetter]
    masked: Counter[str]
    per_tenant: Counter[str]


def scrub_to_store(docs: Sequence[ToScrub], policy: PiiPolicy, vault_key: bytes | None) -> ToStore:
    """`scrub_batch`, each scrubbed document made into its row where it was scrubbed (a worker process): the writer
    only stores it."""
    from extraction_assets.lib.pii import scrub_batch

    batch = scrub_batch(docs, policy, vault_key)
    return ToStore([scrubbed_row(r) for r in batch.rows], batch.sealed, batch.failures, batch.masked, batch.per_tenant)


def scrub_pending(
    connect: Connect,
    policy: PiiPolicy,
    vault_key: bytes | None,
    on_batch: Callable[[ScrubProgress], None] = lambda _: None,
    niceness: int | None = None,
) -> ScrubReport:
    """No connection is held while a batch of large files is scrubbed; each batch's rows and dead letters are
    written in one go. The worker processes run `niceness` below this one (None: the pool's default)."""
    from extraction_assets.lib.pii import ToScrub  # the detectors load with the step

    with connect(read_only=True) as con:
        tenants = {t: policy.for_tenant(t) for t in tenant_ids(con)}
        pending = documents_to_scrub(con, {t: p.scrubber_version for t, p in tenants.items()})
        sizes = document_sizes(con, pending) if len(pending) > 1 else {}
    report = ScrubReport(tenants=tenants, pending=len(pending))

    def loaded() -> Iterator[list[ToScrub]]:
        for ids in batched(pending, SCRUB_BATCH, lambda doc_id: sizes.get(doc_id, 0), BATCH_CHARS):
            with connect(read_only=True) as con:
                docs = [ToScrub(*row) for row in texts_to_scrub(con, ids)]
            yield docs  # closed first: the batch is scrubbed while the generator waits

    workers = workers_for(len(pending), SCRUB_BATCH)
    scrubbed = in_order(scrub_to_store, ((docs, policy, vault_key) for docs in loaded()), workers, niceness)
    done = 0
    for batch in scrubbed:
        with connect() as con:
            upsert_scrubbed(con, batch.rows, batch.sealed)
            record_dead_letters(con, batch.failures)
        report.masked.update(batch.masked)
        report.per_tenant.update(batch.per_tenant)
        report.failures.extend(batch.failures)
        done += len(batch.rows) + len(batch.failures)
        on_batch(ScrubProgress(done=done, pending=len(pending), failed=len(report.failures), workers=max(1, workers)))
    with connect(read_only=True) as con:
        report.total = row_count(con, "scrubbed_documents")
    return report
