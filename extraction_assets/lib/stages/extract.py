"""Extract one partition (a schema version, or a shard of one): route the documents the version has not decided
on, then extract what routing left pending and commit items with their evidence in one transaction per batch.

No DuckDB connection is open while a gate or a model works: documents are read a batch at a time read-only,
then the connection is closed. In batch mode the finished batches' answers are stored first and the requests
still missing are submitted after (`batches.py`).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from extraction_assets.lib.extraction import (
    Decision,
    ExtractionTally,
    GateDecides,
    OrchestratedExtractor,
    decide_by_place,
    extract_document,
    extract_stream,
    extraction_input,
    gate_decision,
    rules_fingerprint,
)
from extraction_assets.lib.models import Document, ExtractionOutcome, ScrubbedDocument
from extraction_assets.lib.parallel import in_order, load_in_workers, settled_at, workers_for
from extraction_assets.lib.review import RerunPreview, preview_rerun
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.stages.batches import store_finished_batches, submit_deferred
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.stages.progress import Throttled
from extraction_assets.lib.warehouse import (
    Placed,
    Shard,
    Stored,
    VersionWork,
    batched,
    cache_entries_for,
    document_from_row,
    document_rows,
    documents_to_route,
    extraction_figures,
    load_documents,
    load_scrubbed,
    pending_extractions,
    scrubbed_from_row,
    scrubbed_rows,
    shard_documents,
    store_decisions,
    stored_windows,
    versions_summary,
    versions_with_work,
    window_work,
    write_decisions,
    write_extraction_batch,
)

if TYPE_CHECKING:
    import duckdb

    from extraction_assets.lib.extraction import Extractor

T = TypeVar("T")
ROUTE_BATCH = 500  # routing reads text only, and a gate is cheap
PLAN_ROWS = 4_096  # raw rows planned at a time offline: a version's work list in memory is one window's, ~1 kB a
# document (ids, paths, plans, sizes), whatever the warehouse
EXTRACT_BATCH = 128  # per commit: the last commit overlaps no model call, so keep it short; opening costs ~30 ms
BATCH_CHARS = 2_000_000  # offline, a batch's documents' characters at most: its rows (text, turns, scrubbed text) in
# memory, sent to a worker and back, three batches in flight, stay a few tens of MB whatever the documents' sizes
Log = Callable[[str], None]
load_in_workers(__name__, "extraction_assets.lib.heuristics.every_pack")  # what `route_and_extract` uses


@dataclass(frozen=True)
class ExtractOptions:
    """A deliberate re-extraction's choices; the defaults are the incremental run."""

    force: bool = False  # every document of the partition pending
    confirm_overwrite: bool = False  # also overwrite accepted, rejected and human-corrected items
    tenant_id: str | None = None  # only this tenant's documents
    llm_batch: bool = False  # through the endpoint's Batch API


@dataclass
class PartitionReport:
    """What one partition's extraction did (the partition as it stands after it: `version_figures`)."""

    extractor_version: str  # the configured extractor's version for the partition's schema version
    routed: dict[str, int]
    pending: list[str]
    rerun: RerunPreview
    tally: ExtractionTally = field(default_factory=ExtractionTally)
    extract_seconds: float = 0.0
    batch_figures: dict[str, int | str] = field(default_factory=dict)

    @property
    def idle(self) -> bool:
        """Nothing new, changed or failed."""
        return not self.pending and not self.routed


@dataclass
class _Work:
    """What a partition's run extracts, read right after routing."""

    pending: list[str]
    rerun: RerunPreview


def route_documents(
    connect: Connect,
    schema: SchemaVersion,
    tenant_id: str | None,
    shard: Shard,
    then: Callable[[duckdb.DuckDBPyConnection], T],
    log: Log,
) -> tuple[dict[str, int], T]:
    """Decide which of the shard's documents the schema reads (only new ones, or all after its rules changed),
    batch by batch; then `then` reads what routing left (the pending work), in the connection that wrote the last
    decisions, or in the one that found nothing to route: a connection fewer each, most of an incremental run.

    Most decisions need a document's kind, tenant and path only (`decide_by_place`); the text of a document is read,
    in a connection closed before its gate runs, only when the gate must decide."""
    rules = rules_fingerprint(schema)
    with connect(read_only=True) as con:
        unrouted = documents_to_route(con, schema.key, schema.document_kinds, rules, tenant_id)
        kept = set(shard_documents(con, shard, [d.doc_id for d in unrouted]))
        to_route = [d for d in unrouted if d.doc_id in kept]
        if not to_route:
            return {}, then(con)
    totals: Counter[str] = Counter()
    after: T | None = None
    batches = batched(to_route, ROUTE_BATCH)
    for number, batch in enumerate(batches, start=1):
        placed = [(d, decide_by_place(d.kind, d.tenant_id, d.source_uri, schema)) for d in batch]
        gated = [d.doc_id for d, decision in placed if not isinstance(decision, Decision)]
        if gated:
            with connect(read_only=True) as con:
                docs, scrubbed = _load(con, gated)
            texts = {doc.doc_id: extraction_input(doc, scrubbed[doc.doc_id]) for doc in docs}
        decisions = []
        for d, decision in placed:
            if not isinstance(decision, Decision):
                decision = gate_decision(texts[d.doc_id], schema, decision)
            decisions.append((d, decision.taken, decision.score, decision.reason))
            totals[f"reason: {decision.reason}"] += 1
        with connect() as con:
            totals.update(write_decisions(con, schema.key, rules, decisions))
            if number == len(batches):
                after = then(con)
    log(f"{schema.key}: routed {len(to_route)} documents: {dict(totals)}")
    return dict(totals), after  # type: ignore[return-value]  # the last batch set it


def _load(con: duckdb.DuckDBPyConnection, doc_ids: list[str]) -> tuple[list[Document], dict[str, ScrubbedDocument]]:
    return load_documents(con, doc_ids), load_scrubbed(con, doc_ids)


class Plan(NamedTuple):
    """What a worker does with one document: ask the gate (where routing left it to the gate), and extract it if it
    is taken and its extraction is out of date."""

    gate: GateDecides | None
    extract: bool


class TextWork(NamedTuple):
    """What a batch of documents that need their text came back with: the gates' decisions, and the outcomes."""

    decisions: list[tuple[str, Decision]]
    outcomes: list[ExtractionOutcome]


def route_and_extract(
    raw: list[dict[str, Any]],
    scrubbed: list[dict[str, Any]],
    plans: dict[str, Plan],
    schema: SchemaVersion,
    built: Extractor,
) -> TextWork:
    """A batch's documents, as their stored rows, gated and extracted as their plans say: in a worker process, which
    parses the rows itself."""
    cleaned = {row["doc_id"]: scrubbed_from_row(row) for row in scrubbed}
    work = TextWork([], [])
    for doc in map(document_from_row, raw):
        plan, clean = plans[doc.doc_id], cleaned[doc.doc_id]
        taken = True
        if plan.gate is not None:
            decision = gate_decision(extraction_input(doc, clean), schema, plan.gate)
            work.decisions.append((doc.doc_id, decision))
            taken = decision.taken
        if taken and plan.extract:
            work.outcomes.append(extract_document(doc, clean, schema, built))
    return work


def extract_partition(
    connect: Connect,
    built: Extractor,
    schema: SchemaVersion,
    shard: Shard,
    options: ExtractOptions,
    log: Log,
    warn: Log,
    niceness: int | None = None,
) -> PartitionReport:
    """Route, extract and commit one partition. Offline, one pass over the documents that need their text (a gate to
    ask, an extraction to make) does both, in the process's worker pool when there is more than a batch of them
    (`lib/parallel.py`, its workers `niceness` below this process) while this process reads the next batch and
    commits the finished one. With a model, routing comes first and the model's calls then run in threads here
    (they wait on the network), as many in flight as the endpoint takes, across batches."""
    if built.model:
        return _extract_with_model(connect, built, schema, shard, options, log, warn)
    return _extract_offline(connect, built, schema, shard, options, log, warn, niceness)


def idle_versions(
    connect: Connect, built: Extractor, schemas: Sequence[SchemaVersion], options: ExtractOptions
) -> set[str]:
    """The versions among `schemas` with nothing to route or extract in any window of any shard, offline: read for
    all of them in one statement (`versions_with_work`), outside their worker turns. A version it names needs no
    turn, plan or window (`idle_report`); one it misses is planned as before. A document that arrives after the
    statement is the next pass's, as one arriving after the pass. None with a model (a pass stores and submits its
    batches however idle) or a forced re-extraction."""
    if built.model or options.force or not schemas:
        return set()
    work = {s.key: VersionWork(s.document_kinds, rules_fingerprint(s), built.version(s)) for s in schemas}
    with connect(read_only=True) as con:
        return set(work) - versions_with_work(con, work, options.tenant_id)


def idle_report(built: Extractor, schema: SchemaVersion, options: ExtractOptions) -> PartitionReport:
    """What `extract_partition` reports for a partition with nothing to do offline."""
    return PartitionReport(built.version(schema), {}, [], _sum_previews(schema, options.tenant_id, []))


class _Window(NamedTuple):
    """A window of raw rows planned (`_plan_window`): what its documents' batches need, and what it decided."""

    plans: dict[str, Plan]
    placed: dict[str, tuple[Placed, Decision | GateDecides]]  # the window's documents routed in this pass
    stored: dict[str, Stored]  # where its documents' rows are, and their lengths
    rerun: RerunPreview
    routed: int
    # decisions by place of documents with nothing to extract, committed with the window's first batch (then emptied)
    with_first_batch: list[tuple[Placed, Decision]]


def _plan_window(
    connect: Connect, schema: SchemaVersion, shard: Shard, options: ExtractOptions, version: str, window: range
) -> tuple[_Window, Counter[str]]:
    """A window of raw rows planned: its documents to route and to extract (`Plan`), and where its documents are
    stored and their sizes (`Stored`). The decisions made by place alone for documents with nothing to extract are
    stored at once where the window has nothing to extract; else up to a routing batch of them commit with the
    window's first batch (a commit fewer: a warm pass of a few new documents made one for each version's decisions,
    then one for its batch)."""
    rules, kinds, tenant_id, force = rules_fingerprint(schema), schema.document_kinds, options.tenant_id, options.force
    with connect(read_only=True) as con:
        work = window_work(con, schema.key, kinds, rules, version, tenant_id, force, window)
        in_shard = set(shard_documents(con, shard, [d.doc_id for d in work.unrouted]))
        to_route = [d for d in work.unrouted if d.doc_id in in_shard]
        out_of_date = work.out_of_date
        routing = {d.doc_id for d in to_route}
        routed_pending = [
            doc_id for doc_id in shard_documents(con, shard, work.routed_pending) if doc_id not in routing
        ]
        placed = {d.doc_id: (d, decide_by_place(d.kind, d.tenant_id, d.source_uri, schema)) for d in to_route}
        plans = {
            doc_id: Plan(None if isinstance(decision, Decision) else decision, doc_id in out_of_date)
            for doc_id, (_, decision) in placed.items()
            if not isinstance(decision, Decision) or (decision.taken and doc_id in out_of_date)
        } | {doc_id: Plan(None, True) for doc_id in routed_pending}
        rerun = preview_rerun(con, schema.key, tenant_id, [doc_id for doc_id, plan in plans.items() if plan.extract])
    totals: Counter[str] = Counter()
    without_text = [
        (d, decision) for d, decision in placed.values() if isinstance(decision, Decision) and d.doc_id not in plans
    ]
    with_first_batch = without_text[:ROUTE_BATCH] if plans else []
    for batch in batched(without_text[len(with_first_batch) :], ROUTE_BATCH):
        with connect() as con:
            totals.update(_decided(con, schema.key, rules, batch))
    return _Window(plans, placed, work.stored, rerun, len(to_route), with_first_batch), totals


def _batches(window: _Window) -> list[list[str]]:
    """A window's documents to read, in batches of `EXTRACT_BATCH` documents or `BATCH_CHARS` characters."""
    return batched(list(window.plans), EXTRACT_BATCH, lambda doc_id: window.stored[doc_id].chars, BATCH_CHARS)


def _sum_previews(schema: SchemaVersion, tenant_id: str | None, previews: list[RerunPreview]) -> RerunPreview:
    """The windows' previews of a partition as one (`preview_rerun` of all their documents)."""
    by_status: Counter[str] = Counter()
    for preview in previews:
        by_status.update(preview.protected_by_status)
    return RerunPreview(
        schema_version=schema.key,
        tenant_id=tenant_id,
        documents=sum(p.documents for p in previews),
        would_overwrite=sum(p.would_overwrite for p in previews),
        need_confirmation=sum(p.need_confirmation for p in previews),
        protected_by_status=dict(sorted(by_status.items())),
        protected_items=sorted(i for p in previews for i in p.protected_items),
    )


def _extract_offline(
    connect: Connect,
    built: Extractor,
    schema: SchemaVersion,
    shard: Shard,
    options: ExtractOptions,
    log: Log,
    warn: Log,
    niceness: int | None,
) -> PartitionReport:
    """The partition planned a window of `PLAN_ROWS` raw rows at a time (`_plan_window`), each window's batches
    extracted before the next window is planned: the pass holds one window's work list, not the partition's."""
    version, rules = built.version(schema), rules_fingerprint(schema)
    with connect(read_only=True) as con:
        windows = stored_windows(con, PLAN_ROWS)
    totals: Counter[str] = Counter()
    previews: list[RerunPreview] = []
    routed = candidates = 0
    planned: deque[_Window] = deque()

    def plan_next() -> bool:
        """The next window planned (False when none is left)."""
        nonlocal routed, candidates
        if not windows:
            return False
        window, decided = _plan_window(connect, schema, shard, options, version, windows.pop(0))
        totals.update(decided)
        previews.append(window.rerun)
        routed += window.routed
        candidates += sum(plan.extract for plan in window.plans.values())
        planned.append(window)
        return True

    # windows are planned ahead only until the worker processes the work is worth are known (`workers_for`)
    ahead = 0
    while ahead <= settled_at(EXTRACT_BATCH) and plan_next():
        ahead += len(planned[-1].plans)
    workers = workers_for(ahead, EXTRACT_BATCH)
    if candidates:
        log(f"{schema.key}: up to {candidates} documents to extract with {version}" + (" so far" if windows else ""))
    tally = ExtractionTally()
    extracted: list[str] = []
    started = time.perf_counter()
    say = Throttled(log)
    in_flight: deque[_Window] = deque()  # each job's window, in the jobs' order (the results come in that order)

    def jobs() -> Iterator[tuple[Any, ...]]:
        while planned or plan_next():
            window = planned.popleft()
            for batch in _batches(window):
                stored = {doc_id: window.stored[doc_id] for doc_id in batch}
                with connect(read_only=True) as con:  # at the row ids planning found (no look-up)
                    raw = document_rows(con, batch, {d: s.raw_rowid for d, s in stored.items()})
                    clean = scrubbed_rows(con, batch, {d: s.scrubbed_rowid for d, s in stored.items()})
                in_flight.append(window)
                yield raw, clean, {doc_id: window.plans[doc_id] for doc_id in batch}, schema, built

    for work in in_order(route_and_extract, jobs(), workers, niceness):
        window = in_flight.popleft()
        placed = window.placed
        decisions = [(placed[doc_id][0], decision) for doc_id, decision in work.decisions] + window.with_first_batch
        window.with_first_batch.clear()  # the window's first batch takes them: its later batches find none
        for outcome in work.outcomes:  # taken by place and extracted: the decision is stored with the items
            if outcome.doc_id in placed and isinstance(decided := placed[outcome.doc_id][1], Decision):
                decisions.append((placed[outcome.doc_id][0], decided))
        decision_counts: Counter[str] = Counter()
        with connect() as con:  # the batch's decisions commit with its items (one commit)
            written = write_extraction_batch(
                con,
                schema.key,
                [o for o in work.outcomes if o.status != "pending"],
                overwrite_protected=options.confirm_overwrite,
                first=partial(_decided_into, decision_counts, schema.key, rules, decisions) if decisions else None,
                raw_rowids={o.doc_id: window.stored[o.doc_id].raw_rowid for o in work.outcomes},
            )
        totals.update(decision_counts)
        tally.add(work.outcomes, written)
        extracted += [o.doc_id for o in work.outcomes]
        say(
            f"{schema.key}: {tally.counts['documents']}/{candidates} documents extracted, {tally.counts['items']} items"
        )
    rerun = _sum_previews(schema, options.tenant_id, previews)
    if rerun.need_confirmation and not options.confirm_overwrite:
        warn(f"{rerun.message}: kept, since the run was not confirmed (confirm_overwrite)")
    if routed:
        log(f"{schema.key}: routed {routed} documents: {dict(totals)}")
    return PartitionReport(version, dict(totals), extracted, rerun, tally, round(time.perf_counter() - started, 3))


def _decided(
    con: duckdb.DuckDBPyConnection,
    key: str,
    rules: str,
    decisions: list[tuple[Placed, Decision]],
    store: Callable[..., dict[str, int]] = write_decisions,
) -> Counter[str]:
    """Store a batch of routing decisions (`store`: in a transaction of their own, or `store_decisions` in the
    caller's): what was taken, not taken and removed, and each decision's reason."""
    counts = Counter(store(con, key, rules, [(d, *decision) for d, decision in decisions]))
    counts.update(f"reason: {decision.reason}" for _, decision in decisions)
    return counts


def _decided_into(
    counts: Counter[str], key: str, rules: str, decisions: list[tuple[Placed, Decision]], con: duckdb.DuckDBPyConnection
) -> None:
    """`_decided` inside the caller's transaction, its figures in `counts` (those of its last attempt: a transaction
    retried after a lost commit decides again)."""
    counts.clear()
    counts.update(_decided(con, key, rules, decisions, store_decisions))


def _extract_with_model(
    connect: Connect,
    built: Extractor,
    schema: SchemaVersion,
    shard: Shard,
    options: ExtractOptions,
    log: Log,
    warn: Log,
) -> PartitionReport:
    version = built.version(schema)

    def work(con: duckdb.DuckDBPyConnection) -> _Work:
        kinds, tenant_id = schema.document_kinds, options.tenant_id
        pending = shard_documents(
            con,
            shard,
            pending_extractions(con, schema.key, kinds, version, tenant_id, force=options.force, routed=True),
        )
        return _Work(pending, preview_rerun(con, schema.key, tenant_id, pending))

    routed, planned = route_documents(connect, schema, options.tenant_id, shard, work, log)
    pending = planned.pending
    batching = built.client if options.llm_batch and isinstance(built, OrchestratedExtractor) else None
    batch_figures: dict[str, int | str] = (
        dict(store_finished_batches(connect, batching, schema.key)) if batching else {}
    )
    if pending:
        log(f"{schema.key}: {len(pending)} documents to extract with {version}")
    if planned.rerun.need_confirmation and not options.confirm_overwrite:
        warn(f"{planned.rerun.message}: kept, since the run was not confirmed (confirm_overwrite)")
    tally = ExtractionTally()
    started = time.perf_counter()
    say = Throttled(log)

    def documents() -> Iterator[tuple[Document, ScrubbedDocument]]:
        for batch in batched(pending, EXTRACT_BATCH):
            # read-only (readers share it), then closed: no DuckDB lock is held while a model works
            with connect(read_only=True) as con:
                docs, scrubbed = _load(con, batch)
                built.preload_cache(cache_entries_for(con, built.model or "", batch))
            yield from ((doc, scrubbed[doc.doc_id]) for doc in docs)

    def commit(outcomes: list[ExtractionOutcome]) -> None:
        with connect() as con:
            written = write_extraction_batch(
                con,
                schema.key,
                [o for o in outcomes if o.status != "pending"],  # pending: nothing written, the next run extracts it
                overwrite_protected=options.confirm_overwrite,
                cache_entries=built.take_cache_entries(),
            )
        tally.add(outcomes, written)
        say(
            f"{len(outcomes)} documents committed, {written['items']} items stored, "
            f"{tally.counts['documents']}/{len(pending)} done"
        )

    finished: list[ExtractionOutcome] = []
    for outcome in extract_stream(documents(), schema, built):
        finished.append(outcome)
        if len(finished) == EXTRACT_BATCH:
            commit(finished)
            finished = []
    if finished:
        commit(finished)
    if batching:
        batch_figures.update(submit_deferred(connect, batching, schema.key))
        log(f"{schema.key}: batch backfill {batch_figures}")
    extract_seconds = round(time.perf_counter() - started, 3)
    if tally.counts["pending"]:
        warn(
            f"{schema.key}: {tally.counts['pending']} documents left pending ({dict(tally.outcomes)}); "
            "the next run continues"
        )
    return PartitionReport(version, routed, pending, planned.rerun, tally, extract_seconds, batch_figures)


def version_figures(
    connect: Connect, versions: Sequence[str]
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """After a run's partitions: each version's figures as it stands (`extraction_figures`), and the summary of
    every version in the warehouse, read together once for the whole run."""
    with connect(read_only=True) as con:
        return extraction_figures(con, versions), versions_summary(con)
