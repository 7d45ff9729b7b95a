"""Extraction, partitioned by schema version (and shard): items with their grounded evidence, one transaction per
batch. A shard's run routes and extracts only its own documents.

It runs by itself after new scrubbed documents (an eager automation condition, while upstream blocking
checks pass) and for a new schema version. In batch mode (`EXTRACTION_LLM_BATCH=1`) it first stores the answers
of its partition's finished batches, then extracts what the cache answers, then submits what is missing as
one batch (see `batches.py`); the documents waiting on a batch stay pending."""

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import dagster as dg
from pydantic import Field

from extraction_assets.defs.automation import AFTER_UPSTREAM
from extraction_assets.defs.check_results import materializations_of
from extraction_assets.defs.extraction import checks
from extraction_assets.defs.extraction.batches import store_finished_batches, submit_deferred
from extraction_assets.defs.ingest.assets import scrubbed_documents
from extraction_assets.defs.partitions import (
    BACKFILL,
    EXTRACTION_POOL,
    extraction_partition,
    extraction_partitions,
    schema_for_partition,
)
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, WarehouseResource
from extraction_assets.lib.extraction import (
    ExtractionTally,
    OrchestratedExtractor,
    decide,
    extract_stream,
    extraction_input,
    rules_fingerprint,
)
from extraction_assets.lib.llm import estimated_cost
from extraction_assets.lib.models import Document, ExtractionOutcome, ScrubbedDocument
from extraction_assets.lib.reporting import markdown_table
from extraction_assets.lib.review import RerunPreview, preview_rerun
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.warehouse import (
    Shard,
    batched,
    cache_entries_for,
    documents_to_route,
    extraction_figures,
    load_documents,
    load_scrubbed,
    one_worker,
    pending_extractions,
    versions_summary,
    write_decisions,
    write_extraction_batch,
)

if TYPE_CHECKING:
    import duckdb

    from extraction_assets.lib.extraction import Extractor

T = TypeVar("T")
ROUTE_BATCH = 500  # routing reads text only, and a gate is cheap
EXTRACT_BATCH = 128  # per commit: the last commit overlaps no model call, so keep it short; opening costs ~30 ms


class ExtractionConfig(dg.Config):
    """Run config for a deliberate re-extraction; the defaults are the incremental run."""

    force: bool = Field(default=False, description="treat every document of the partition as pending")
    confirm_overwrite: bool = Field(
        default=False, description="also overwrite accepted, rejected and human-corrected items"
    )
    tenant: str | None = Field(default=None, description="only this tenant's documents")


def route_documents(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    schema: SchemaVersion,
    tenant: str | None,
    shard: Shard,
    then: Callable[["duckdb.DuckDBPyConnection"], T],
) -> tuple[dict[str, int], T]:
    """Decide which of the shard's documents the schema reads (only new ones, or all after its rules changed),
    batch by batch; then `then` reads what routing left (the pending work), in the connection that wrote the last
    decisions, or in the one that found nothing to route: a connection fewer each, most of an incremental run.

    The first batch is read in the listing's connection; every connection is closed before the gates run."""
    rules = rules_fingerprint(schema)
    with warehouse.connect(read_only=True) as con:
        to_route = shard.take(documents_to_route(con, schema.key, schema.document_kinds, rules, tenant))
        if not to_route:
            return {}, then(con)
        batches = batched(to_route, ROUTE_BATCH)
        loaded = _load(con, batches[0])
    totals: Counter[str] = Counter()
    after: T | None = None
    for number, batch in enumerate(batches, start=1):
        if number > 1:
            with warehouse.connect(read_only=True) as con:
                loaded = _load(con, batch)
        docs, scrubbed = loaded
        decisions = []
        for doc in docs:
            decision = decide(doc, extraction_input(doc, scrubbed[doc.doc_id]), schema)
            decisions.append((doc, decision.taken, decision.score, decision.reason))
            totals[f"reason: {decision.reason}"] += 1
        with warehouse.connect() as con:
            totals.update(write_decisions(con, schema.key, rules, decisions))
            if number == len(batches):
                after = then(con)
    context.log.info(f"{schema.key}: routed {len(to_route)} documents: {dict(totals)}")
    return dict(totals), after  # type: ignore[return-value]  # the last batch set it


def _load(con: "duckdb.DuckDBPyConnection", doc_ids: list[str]) -> tuple[list[Document], dict[str, ScrubbedDocument]]:
    return load_documents(con, doc_ids), load_scrubbed(con, doc_ids)


@dataclass
class Work:
    """What a partition's run extracts, read right after routing; and, when that is nothing, its figures too (no
    write follows that could change them)."""

    pending: list[str]
    rerun: RerunPreview
    figures: dict[str, Any] | None


def _extraction_spec(key: str, description: str) -> dg.AssetSpec:
    """Both outputs follow new scrubbed documents (see `automation.py`), in the extraction group."""
    return dg.AssetSpec(
        key,
        deps=[scrubbed_documents],
        automation_condition=AFTER_UPSTREAM,
        kinds={"duckdb", "python"},
        group_name="extraction",
        description=description,
    )


@dg.multi_asset(
    specs=[
        _extraction_spec(
            "extracted_items",
            "Items proposed by the extractor whose evidence was located; ungrounded ones are dropped.",
        ),
        _extraction_spec(
            "grounded_evidence",
            "Table `evidence`: each item's quote with raw-text offsets, turn, match kind and strength.",
        ),
    ],
    check_specs=checks.SPECS,
    partitions_def=extraction_partitions,
    backfill_policy=BACKFILL,
    pool=EXTRACTION_POOL,
    can_subset=True,
)
def extracted_items_and_evidence(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    pipeline: PipelineResource,
    extractor: ExtractorResource,
    config: ExtractionConfig,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckEvaluation]:
    """Every schema version of the run, one after the other, each written in one transaction per batch (items and
    evidence never exist apart); then each version's metadata and check results, its own in the UI.

    A version that fails does not stop the others; the step fails after them, so a retry or a re-execution runs
    the step again, and the versions already done find nothing to do."""
    built = extractor.build()
    partitions = list(context.partition_keys)
    schemas: dict[str, SchemaVersion] = {}
    failed: dict[str, Exception] = {}
    done: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for partition in partitions:
        schema_key, shard = extraction_partition(partition)
        try:
            schemas[partition] = schema_for_partition(pipeline.prompts_path, schema_key)
            with one_worker(warehouse.path, str(partition), lambda said: _say(context, said)):  # whoever launched
                items, evidence = _extract_partition(
                    context, warehouse, extractor, built, config, schemas[partition], shard
                )
        except Exception as exc:  # one version's failure must not cost the others their run
            failed[partition] = exc
            context.log.error(f"{partition}: extraction failed: {_reason(exc)}")
            continue
        done[partition] = items, evidence
    if done:
        with warehouse.connect(read_only=True) as con:
            versions = versions_table(versions_summary(con))
    for partition, (items, evidence) in done.items():
        context.add_asset_metadata(
            {**items, "versions": versions}, asset_key="extracted_items", partition_key=partition
        )
        context.add_asset_metadata(evidence, asset_key="grounded_evidence", partition_key=partition)
    if failed:
        reasons = "; ".join(f"{partition}: {_reason(exc)}" for partition, exc in failed.items())
        raise dg.Failure(
            description=f"{len(failed)} of {len(partitions)} schema versions failed ({reasons}); what the others "
            "committed stays, and a retry or re-execution extracts only what is left",
            allow_retries=not all(isinstance(e, dg.Failure) and not e.allow_retries for e in failed.values()),
        )
    selected = context.selected_asset_keys
    for key in ("extracted_items", "grounded_evidence"):
        if dg.AssetKey(key) in selected:
            yield dg.MaterializeResult(asset_key=key)
    chosen = context.selected_asset_check_keys
    if not chosen:
        return
    targets = {key.to_user_string(): materializations_of(context, key.to_user_string(), partitions) for key in selected}
    found: list[dg.AssetCheckEvaluation] = []
    with warehouse.connect(read_only=True) as con:
        for partition in partitions:
            found += checks.evaluations(con, schemas[partition], partition, chosen, targets)
    yield from found  # the connection is closed before Dagster records them


def versions_table(rows: list[dict[str, Any]]) -> dg.TableMetadataValue:
    """Every schema version in one table, on each partition's materialization: the asset's overview shows the
    latest partition's figures, and this table beside them. Counts and version keys only: nothing to mask."""
    columns = [dg.TableColumn("version", "string"), dg.TableColumn("last_extracted", "string")] + [
        dg.TableColumn(name, "int")
        for name in ("documents_read", "items", "needs_review", "accepted", "documents_failed")
    ]
    records = [
        dg.TableRecord(
            {**row, "last_extracted": f"{row['last_extracted']:%Y-%m-%d %H:%M}" if row["last_extracted"] else "-"}
        )
        for row in rows
    ]
    return dg.MetadataValue.table(records, dg.TableSchema(columns))


def _say(context: dg.AssetExecutionContext, message: str) -> None:
    """In the run's log, and on the terminal of a command-line run (whose console shows errors only)."""
    context.log.warning(message)
    logging.getLogger("extraction_assets.warehouse").warning(message)


def _reason(exc: Exception) -> str:
    return exc.description or "" if isinstance(exc, dg.Failure) else f"{type(exc).__name__}: {exc}"


def _extract_partition(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    extractor: ExtractorResource,
    built: "Extractor",
    config: ExtractionConfig,
    schema: SchemaVersion,
    shard: Shard,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Route, extract and commit one partition; its items' and its evidence's metadata."""
    version = built.version(schema)

    def work(con: "duckdb.DuckDBPyConnection") -> Work:
        kinds, tenant = schema.document_kinds, config.tenant
        pending = shard.take(
            pending_extractions(con, schema.key, kinds, version, tenant, force=config.force, routed=True)
        )
        figures = None if pending else extraction_figures(con, schema.key)
        return Work(pending, preview_rerun(con, schema.key, tenant, pending), figures)

    routed, planned = route_documents(context, warehouse, schema, config.tenant, shard, then=work)
    pending, rerun = planned.pending, planned.rerun
    batching = built.client if extractor.llm_batch and isinstance(built, OrchestratedExtractor) else None
    batch_figures: dict[str, int | str] = (
        dict(store_finished_batches(warehouse, batching, schema.key)) if batching else {}
    )
    if pending:
        context.log.info(f"{schema.key}: {len(pending)} documents to extract with {version}")
    if rerun.need_confirmation and not config.confirm_overwrite:
        context.log.warning(f"{rerun.message}: kept, since the run was not confirmed (confirm_overwrite)")
    tally = ExtractionTally()
    started = time.perf_counter()
    figures = planned.figures

    def documents() -> Iterator[tuple[Document, ScrubbedDocument]]:
        for batch in batched(pending, EXTRACT_BATCH):
            # read-only (readers share it), then closed: no DuckDB lock is held while a model works
            with warehouse.connect(read_only=True) as con:
                docs, scrubbed = _load(con, batch)
                if built.model:
                    built.preload_cache(cache_entries_for(con, built.model, batch))
            yield from ((doc, scrubbed[doc.doc_id]) for doc in docs)

    def commit(outcomes: list[ExtractionOutcome], last: bool = False) -> None:
        nonlocal figures
        with warehouse.connect() as con:
            written = write_extraction_batch(
                con,
                schema.key,
                [o for o in outcomes if o.status != "pending"],  # pending: nothing written, the next run extracts it
                overwrite_protected=config.confirm_overwrite,
                cache_entries=built.take_cache_entries(),
            )
            if last:  # the partition as it stands after the run's last write, read in that write's connection
                figures = extraction_figures(con, schema.key)
        tally.add(outcomes, written)
        context.log.info(
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
        commit(finished, last=True)
    if batching:
        batch_figures.update(submit_deferred(warehouse, batching, schema.key))
        context.log.info(f"{schema.key}: batch backfill {batch_figures}")
    totals = tally.counts
    extract_seconds = round(time.perf_counter() - started, 3)
    if figures is None:  # the last batch was a full one, committed before the stream ended
        with warehouse.connect(read_only=True) as con:
            figures = extraction_figures(con, schema.key)
    partition_figures = {  # the partition as it stands: true after any run, so every run reports them
        "dagster/row_count": figures["items"],
        "documents_read": figures["documents_taken"],
        "needs_review_items": figures["needs_review_items"],
        "items_per_document": dg.MetadataValue.json(figures["items_per_document"]),
        "documents_not_read": figures["documents_not_taken"],
        "documents_processed": len(pending) - totals["failed"] - totals["pending"],
        "extractor_version": version,
        "model": built.model or "none (offline heuristic)",
        "items_by_type": dg.MetadataValue.json(figures["items_by_type"]),
        "routing_outcomes": dg.MetadataValue.json(figures["routing_outcomes"]),
        "preview": dg.MetadataValue.md(
            markdown_table(
                ["type", "title", "conf", "status", "evidence", "match", "turn"],
                [list(r.values()) for r in figures["preview"]],
            )
        ),
    }
    idle = not pending and not routed  # nothing new, changed or failed
    if totals["pending"]:
        context.log.warning(
            f"{schema.key}: {totals['pending']} documents left pending ({dict(tally.outcomes)}); the next run continues"
        )
    this_run: dict[str, Any] = (
        {"run": "nothing to do"} if idle else run_figures(config, rerun, tally, routed, extract_seconds)
    )
    if not idle and built.model:  # offline these are all zero: no plot of them
        this_run.update(model_figures(tally))
        cost = estimated_cost(built.prices, totals["prompt_tokens"], totals["completion_tokens"])
        this_run["estimated_cost"] = cost if cost is not None else "no prices configured"
        this_run["budget_tokens"] = extractor.llm_budget_tokens or "no budget"
    if batch_figures:
        this_run["batch"] = dg.MetadataValue.json(batch_figures)
    evidence = {"dagster/row_count": figures["evidence"], **({} if idle else {"evidence_written": totals["evidence"]})}
    return {**partition_figures, **this_run}, evidence


def run_figures(
    config: ExtractionConfig, rerun: RerunPreview, tally: ExtractionTally, routed: dict[str, int], seconds: float
) -> dict[str, Any]:
    """What this run did. A run that found nothing to do leaves them out, so the UI's latest values and plots of
    these figures stay those of the last run that did something."""
    totals = tally.counts
    return {
        "routed_now": dg.MetadataValue.json(routed),
        "documents_failed": totals["failed"],
        "documents_pending": totals["pending"],
        "documents_partial": totals["partial"],  # stored, a part failed: extracted again next run
        "items_proposed": totals["proposed"],
        "items_stored": totals["items"],
        "dropped_ungrounded": totals["dropped_ungrounded"],
        "cut_by_cap": totals["capped"],
        "human_owned_kept": totals["protected_kept"],
        "forced": config.force,
        "confirm_overwrite": config.confirm_overwrite,
        "rerun_preview": rerun.message,
        "kept_needing_confirmation": 0 if config.confirm_overwrite else rerun.need_confirmation,
        "overwritten_with_confirmation": rerun.need_confirmation if config.confirm_overwrite else 0,
        "outcomes": dg.MetadataValue.json(dict(tally.outcomes)),
        "extract_seconds": seconds,
    }


def model_figures(tally: ExtractionTally) -> dict[str, Any]:
    """What this run asked of the model (on the model path only: offline each would be a plot of zeros)."""
    totals = tally.counts
    return {
        "model_calls": totals["calls"],
        "cache_hits": totals["cache_hits"],
        "remembered_failures": totals["remembered_failures"],  # answers that failed validation before: not asked
        "chunks": totals["chunks"],
        "chunk_retries": totals["chunk_retries"],
        "chunks_per_document": round(totals["chunks"] / max(totals["documents"], 1), 2),
        "prompt_tokens": totals["prompt_tokens"],
        "completion_tokens": totals["completion_tokens"],
        "model_latency_ms": dg.MetadataValue.json(tally.latency_percentiles()),
    }
