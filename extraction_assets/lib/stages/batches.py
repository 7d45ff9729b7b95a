"""Batch backfills (`EXTRACTION_LLM_BATCH=1`): an extraction's two batch steps around its documents.

Before extracting, the answers of the partition's finished batches are stored in `llm_cache` (their tokens count
against the run's budget, `EXTRACTION_LLM_BUDGET_TOKENS`); after, the requests its pending documents are waiting on
go out as one new batch (requests already in an open batch are not submitted twice; a request the budget cannot
hold is left for a later run).
"""

from __future__ import annotations

from collections import Counter

from extraction_assets.lib.llm import BatchRequest, LLMClient, batch_answers, retrieve_batch, submit_batch
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.warehouse import (
    batch_requests,
    open_batches,
    record_batch,
    store_batch_answers,
    update_batch_status,
    waiting_request_hashes,
)


def store_finished_batches(connect: Connect, client: LLMClient, schema_key: str) -> dict[str, int]:
    """Answers of the partition's finished batches into the cache; no connection is held while the API answers."""
    figures: Counter[str] = Counter()
    with connect() as con:
        waiting = open_batches(con, schema_key)
    for batch in waiting:
        state = retrieve_batch(client.openai, batch["batch_id"])
        if not state.finished:
            with connect() as con:
                update_batch_status(con, state.batch_id, state.status)
            figures["batches_in_progress"] += 1
            continue
        with connect() as con:
            requests = {r["request_hash"]: BatchRequest.model_validate(r) for r in batch_requests(con, state.batch_id)}
        entries, failed = batch_answers(client.openai, state, requests)
        with connect() as con:
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


def submit_deferred(connect: Connect, client: LLMClient, schema_key: str) -> dict[str, int | str]:
    """The run's deferred requests, minus those already waiting in a batch, as one new batch."""
    deferred = client.take_deferred()
    with connect() as con:
        waiting = waiting_request_hashes(con, schema_key)
    new = [r for r in deferred if r.request_hash not in waiting]
    if not new:
        return {"batch_requests_submitted": 0, "batch_requests_already_waiting": len(deferred)}
    state = submit_batch(client.openai, new, {"schema_version": schema_key})
    with connect() as con:
        record_batch(
            con, state.batch_id, state.status, schema_key, client.settings.model, [r.model_dump() for r in new]
        )
    return {
        "batch_submitted": state.batch_id,
        "batch_requests_submitted": len(new),
        "batch_requests_already_waiting": len(deferred) - len(new),
    }
