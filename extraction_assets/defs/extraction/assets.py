"""Extraction, partitioned by schema version (and shard): items with their grounded evidence, one transaction per
batch. A shard's run routes and extracts only its own documents.

It runs by itself after new scrubbed documents (an eager automation condition, while upstream blocking
checks pass) and for a new schema version. In batch mode (`EXTRACTION_LLM_BATCH=1`) it first stores the answers
of its partition's finished batches, then extracts what the cache answers, then submits what is missing as
one batch; the documents waiting on a batch stay pending. What a partition does is `lib/stages/extract.py`; this
module runs every partition of the run in one step and turns each report into metadata and check results."""

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field

from extraction_assets.defs.automation import AFTER_UPSTREAM
from extraction_assets.defs.check_results import materializations_of
from extraction_assets.defs.data_versions import data_version
from extraction_assets.defs.extraction import checks
from extraction_assets.defs.ingest.assets import scrubbed_documents
from extraction_assets.defs.partitions import (
    BACKFILL,
    EXTRACTION_POOL,
    extraction_partition,
    extraction_partitions,
    schema_for_partition,
)
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, WarehouseResource
from extraction_assets.lib.calibration import FIT_HEADERS, describe, fit_rows
from extraction_assets.lib.extraction import ExtractionTally
from extraction_assets.lib.llm import estimated_cost
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.stages import (
    ExtractOptions,
    PartitionReport,
    extract_partition,
    idle_report,
    idle_versions,
    version_figures,
)
from extraction_assets.lib.warehouse import one_worker

if TYPE_CHECKING:
    from extraction_assets.lib.extraction import Extractor


OUTPUTS = ("extracted_items", "grounded_evidence")


class ExtractionConfig(dg.Config):
    """Run config for a deliberate re-extraction; the defaults are the incremental run."""

    force: bool = Field(default=False, description="treat every document of the partition as pending")
    confirm_overwrite: bool = Field(
        default=False, description="also overwrite accepted, rejected and human-corrected items"
    )
    tenant_id: str | None = Field(default=None, description="only this tenant's documents")


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
    # one transaction writes an item with its evidence: neither asset is made alone, nor are their checks run
    # without them. The UI says so (materializing one offers both, a check shows it needs the materialization)
    can_subset=False,
)
def extracted_items_and_evidence(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    pipeline: PipelineResource,
    extractor: ExtractorResource,
    config: ExtractionConfig,
) -> Iterator[dg.MaterializeResult | dg.AssetCheckEvaluation | dg.Output[None]]:
    """Every schema version of the run, one after the other, each written in one transaction per batch (items and
    evidence never exist apart); then each version's metadata and check results, its own in the UI.

    A version that fails does not stop the others; the step fails after them, so a retry or a re-execution runs
    the step again, and the versions already done find nothing to do."""
    built = extractor.build()
    partitions = list(context.partition_keys)
    schemas: dict[str, SchemaVersion] = {}
    failed: dict[str, Exception] = {}
    done: dict[str, PartitionReport] = {}
    options = ExtractOptions(config.force, config.confirm_overwrite, config.tenant_id, extractor.llm_batch)
    for partition in partitions:
        try:
            schemas[partition] = schema_for_partition(pipeline.prompts_path, extraction_partition(partition)[0])
        except Exception as exc:  # one version's failure must not cost the others their run
            failed[partition] = exc
            context.log.error(f"{partition}: extraction failed: {_reason(exc)}")
    try:  # the versions with nothing to do at all, in one statement: no worker turn, plan or window for them
        idle = idle_versions(warehouse.connect, built, list({s.key: s for s in schemas.values()}.values()), options)
    except Exception:  # a warehouse that cannot say: each version is planned, and fails, as its own
        idle = set()
    for partition, schema in schemas.items():
        if schema.key in idle:
            done[partition] = idle_report(built, schema, options)
            continue
        try:
            with (
                one_worker(warehouse.path, str(partition), lambda said: _say(context, said)),  # whoever launched
                warehouse.pinned(),  # no idle close between its batches (a model's answers), whoever launched
            ):
                report = extract_partition(
                    warehouse.connect,
                    built,
                    schema,
                    extraction_partition(partition)[1],
                    options,
                    context.log.info,
                    context.log.warning,
                    pipeline.worker_niceness,
                )
        except Exception as exc:  # one version's failure must not cost the others their run
            failed[partition] = exc
            context.log.error(f"{partition}: extraction failed: {_reason(exc)}")
            continue
        done[partition] = report
    figures, summary = version_figures(warehouse.connect, sorted({schemas[p].key for p in done})) if done else ({}, [])
    versions = versions_table(summary)
    for partition, report in done.items():
        schema = schemas[partition]
        items, evidence = _metadata(config, extractor, built, report, figures[schema.key])
        items.update(confidence_figures(schema, figures[schema.key]))
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
    changed = any(not report.idle for report in done.values())
    for key in OUTPUTS:  # an idle run keeps the data version: the review queue does not follow it for nothing
        yield dg.MaterializeResult(asset_key=key, data_version=data_version(context, key, partitions, changed))
    targets = {key: materializations_of(context, key, partitions) for key in OUTPUTS}
    chosen = context.selected_asset_check_keys
    with warehouse.connect(read_only=True) as con:
        found = checks.evaluations(con, schemas, chosen, targets)
    yield from found  # the connection is closed before Dagster records them
    # Dagster counts a check's output as yielded only for an AssetCheckResult (one per step, without a partition);
    # each check's per-partition evaluations are its result, so its output is yielded as Dagster yields one for it
    # (else every run logs that the step "did not yield or return expected outputs")
    for check_key in chosen:
        yield dg.Output(None, output_name=context.assets_def.get_output_name_for_asset_check_key(check_key))


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


def _metadata(
    config: ExtractionConfig,
    extractor: ExtractorResource,
    built: "Extractor",
    report: PartitionReport,
    figures: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A partition's items' and its evidence's metadata: its version as it stands, and what this run did."""
    from extraction_assets.lib.pii import markdown_table  # the detectors load with the step, not the code location

    totals = report.tally.counts
    partition_figures = {  # the partition as it stands: true after any run, so every run reports them
        "dagster/row_count": figures["items"],
        "documents_read": figures["documents_taken"],
        "needs_review_items": figures["needs_review_items"],
        "items_per_document": dg.MetadataValue.json(figures["items_per_document"]),
        "documents_not_read": figures["documents_not_taken"],
        "documents_processed": len(report.pending) - totals["failed"] - totals["pending"],
        "extractor_version": report.extractor_version,
        "model": built.model or "none (offline heuristic)",
        "items_by_type": dg.MetadataValue.json(figures["items_by_type"]),
        "routing_outcomes": dg.MetadataValue.json(figures["routing_outcomes"]),
        "preview": dg.MetadataValue.md(
            markdown_table(
                ["type", "title", "conf", "P(right)", "status", "evidence", "match", "turn"],
                [list(r.values()) for r in figures["preview"]],
            )
        ),
    }
    this_run: dict[str, Any] = {"run": "nothing to do"} if report.idle else run_figures(config, report)
    if not report.idle and built.model:  # offline these are all zero: no plot of them
        this_run.update(model_figures(report.tally))
        cost = estimated_cost(built.prices, totals["prompt_tokens"], totals["completion_tokens"])
        this_run["estimated_cost"] = cost if cost is not None else "no prices configured"
        this_run["budget_tokens"] = extractor.llm_budget_tokens or "no budget"
    if report.batch_figures:
        this_run["batch"] = dg.MetadataValue.json(report.batch_figures)
    evidence = {
        "dagster/row_count": figures["evidence"],
        **({} if report.idle else {"evidence_written": totals["evidence"]}),
    }
    return {**partition_figures, **this_run}, evidence


def confidence_figures(schema: SchemaVersion, figures: dict[str, Any]) -> dict[str, Any]:
    """What review does with wrong values on this partition: its queue share, and what its items' probabilities of
    being right expect review to catch (capture, precision of the drafts); beside them the calibration's own figures
    on its labelled data (error capture, queue share, precision unqueued, ECE per field, cross-validated first)."""
    from extraction_assets.lib.pii import markdown_table  # the detectors load with the step, not the code location

    found: dict[str, Any] = {
        "confidence": describe(schema.calibration),
        "queue_share": round(figures["needs_review_items"] / figures["items"], 4) if figures["items"] else 0.0,
    }
    if figures["calibrated_items"]:
        found["calibrated_items"] = figures["calibrated_items"]
        for name in ("expected_error_capture", "expected_precision_unqueued"):
            if figures[name] is not None:
                found[name] = figures[name]
    if schema.calibration is not None and schema.calibration.status == "calibrated":
        found["review_figures_at_fit"] = dg.MetadataValue.md(
            markdown_table(FIT_HEADERS, fit_rows(schema.calibration), width=40)
        )
    return found


def run_figures(config: ExtractionConfig, report: PartitionReport) -> dict[str, Any]:
    """What this run did. A run that found nothing to do leaves them out, so the UI's latest values and plots of
    these figures stay those of the last run that did something."""
    totals, rerun, tally = report.tally.counts, report.rerun, report.tally
    return {
        "routed_now": dg.MetadataValue.json(report.routed),
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
        "extract_seconds": report.extract_seconds,
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
