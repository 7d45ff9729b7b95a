"""Batch backfills (`EXTRACTION_LLM_BATCH=1`) in Dagster: the extraction run's two batch steps, and a sensor.

Before extracting, a run stores the answers of its partition's finished batches in `llm_cache` (their tokens
count against the run's budget, `EXTRACTION_LLM_BUDGET_TOKENS`); after, it submits the requests its pending
documents are waiting on as one new batch (requests already in an open batch are not submitted twice; a request
the budget cannot hold is left for a later run). The sensor polls open batches and starts the partition's
extraction when one has finished, so the documents it answered are extracted without anyone waiting on the batch.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import dagster as dg

from extraction_assets.defs.jobs import extract_job
from extraction_assets.defs.resources import ExtractorResource, WarehouseResource
from extraction_assets.lib.llm import BatchRequest, LLMClient, batch_answers, retrieve_batch, submit_batch
from extraction_assets.lib.warehouse import (
    batch_requests,
    open_batches,
    record_batch,
    store_batch_answers,
    update_batch_status,
    waiting_request_hashes,
)


def store_finished_batches(warehouse: WarehouseResource, client: LLMClient, schema_key: str) -> dict[str, int]:
    """Answers of the partition's finished batches into the cache; no connection is held while the API answers."""
    figures: Counter[str] = Counter()
    with warehouse.connect() as con:
        waiting = open_batches(con, schema_key)
    for batch in waiting:
        state = retrieve_batch(client.openai, batch["batch_id"])
        if not state.finished:
            with warehouse.connect() as con:
                update_batch_status(con, state.batch_id, state.status)
            figures["batches_in_progress"] += 1
            continue
        with warehouse.connect() as con:
            requests = {r["request_hash"]: BatchRequest.model_validate(r) for r in batch_requests(con, state.batch_id)}
        entries, failed = batch_answers(client.openai, state, requests)
        with warehouse.connect() as con:
            store_batch_answers(con, state.batch_id, state.status, entries, len(failed))
        figures[f"batches_{state.status}"] += 1
        figures["batch_answers_stored"] += len(entries)
        prompt_tokens = sum(e["prompt_tokens"] for e in entries)
        completion_tokens = sum(e["completion_tokens"] for e in entries)
        client.budget.spend(prompt_tokens + completion_tokens)  # this run's budget pays for the answers it stores
        figures["batch_prompt_tokens"] += prompt_tokens
        figures["batch_completion_tokens"] += completion_tokens
        figures["batch_lines_failed"] += len(failed)
        figures["batch_lines_unanswered"] += len(requests) - len(entries) - len(failed)
    return dict(figures)


def submit_deferred(warehouse: WarehouseResource, client: LLMClient, schema_key: str) -> dict[str, int | str]:
    """The run's deferred requests, minus those already waiting in a batch, as one new batch."""
    deferred = client.take_deferred()
    with warehouse.connect() as con:
        waiting = waiting_request_hashes(con, schema_key)
    new = [r for r in deferred if r.request_hash not in waiting]
    if not new:
        return {"batch_requests_submitted": 0, "batch_requests_already_waiting": len(deferred)}
    state = submit_batch(client.openai, new, {"schema_version": schema_key})
    with warehouse.connect() as con:
        record_batch(
            con, state.batch_id, state.status, schema_key, client.settings.model, [r.model_dump() for r in new]
        )
    return {
        "batch_submitted": state.batch_id,
        "batch_requests_submitted": len(new),
        "batch_requests_already_waiting": len(deferred) - len(new),
    }


@dg.sensor(
    job=extract_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="With EXTRACTION_LLM_BATCH=1: polls the open Batch API batches; a finished one starts its "
    "partition's extraction, which stores the answers. Skips, saying why, when batch mode is off.",
)
def llm_batch_sensor(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource, extractor: ExtractorResource
) -> dg.SensorResult:
    """Polls open batches; a finished one starts its partition's extraction (once per batch and status)."""
    settings = extractor.llm_settings()
    if settings is None or not extractor.llm_batch:
        return dg.SensorResult(skip_reason="batch backfills are off (EXTRACTION_LLM_BATCH)")
    if not Path(warehouse.path).exists():
        return dg.SensorResult(skip_reason="no warehouse yet")
    with warehouse.connect(read_only=True) as con:
        waiting = open_batches(con)
    if not waiting:
        return dg.SensorResult(skip_reason="no open batch")
    client = LLMClient(settings)
    runs = []
    for batch in waiting:
        state = retrieve_batch(client.openai, batch["batch_id"])
        if state.finished:
            key = batch["schema_version"]
            runs.append(dg.RunRequest(partition_key=key, run_key=f"batch:{state.batch_id}:{state.status}"))
    if not runs:
        return dg.SensorResult(skip_reason=f"{len(waiting)} batches still in progress")
    return dg.SensorResult(run_requests=runs)
