"""Token accounting, the run's token budget and the cost estimate."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import pytest

from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.extraction import OrchestratedExtractor, extract_document
from extraction_assets.lib.extraction.factory import prices
from extraction_assets.lib.llm import (
    Deferred,
    LLMClient,
    LLMError,
    LLMSettings,
    Prices,
    build_messages,
    items_model,
    submit_batch,
)
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.stages.batches import store_finished_batches
from extraction_assets.lib.warehouse import open_warehouse, record_batch
from tests.unit.extraction.test_chunked_extraction import CHUNKED, _long_document
from tests.unit.llm.test_llm_client import DOC, PULSE


def _client(fake: FakeLLMServer, **kw) -> LLMClient:
    return LLMClient(LLMSettings(base_url=fake.base_url, model="fake-model", timeout_s=5, http_retries=0, **kw))


def test_failed_attempts_and_reasks_are_counted(fake: FakeLLMServer) -> None:
    fake.configure(schema_violation=True)
    client = _client(fake, validation_retries=1)
    with pytest.raises(LLMError) as failed:
        client.complete(build_messages(PULSE, DOC, items_model(PULSE)), items_model(PULSE))
    assert failed.value.stats.calls == len(fake.requests) == 2
    assert failed.value.stats.prompt_tokens > 0 and failed.value.stats.completion_tokens > 0
    assert client.budget.spent == failed.value.stats.prompt_tokens + failed.value.stats.completion_tokens


def test_no_request_starts_once_the_budget_is_spent_but_cached_answers_still_come(fake: FakeLLMServer) -> None:
    client = _client(fake, budget_tokens=1)
    messages = build_messages(PULSE, DOC, items_model(PULSE))
    client.complete(messages, items_model(PULSE))  # under budget when it started
    with pytest.raises(Deferred) as deferred:
        client.complete(
            build_messages(PULSE, DOC.model_copy(update={"doc_id": "d2"}), items_model(PULSE)), items_model(PULSE)
        )
    assert deferred.value.reason == "budget"
    assert len(fake.requests) == 1
    assert client.complete(messages, items_model(PULSE))[1].cached


def test_a_document_cut_by_the_budget_is_pending_and_keeps_what_it_cost(fake: FakeLLMServer) -> None:
    doc = _long_document()
    client = _client(fake, budget_tokens=1)
    outcome = extract_document(doc, scrub_document(doc), CHUNKED, OrchestratedExtractor(client))
    assert outcome.status == "pending" and outcome.outcome == "pending_budget"
    assert outcome.items == [] and outcome.dead_letters == []
    assert outcome.stats["calls"] == 1 and outcome.stats["prompt_tokens"] > 0
    assert len(client.cache.take_pending()) == 1, "the answered chunk is kept for the next run"


def test_concurrent_requests_never_start_on_the_same_unspent_tokens(fake: FakeLLMServer) -> None:
    """Eight requests at once under a budget one request uses up: one is sent, the others wait for the next run."""
    fake.configure(latency_ms=300)
    client = _client(fake, budget_tokens=1, max_concurrency=8)
    output = items_model(PULSE)
    start = threading.Barrier(8)

    def ask(n: int) -> str:
        messages = build_messages(PULSE, DOC.model_copy(update={"doc_id": f"d{n}"}), output)
        start.wait()
        try:
            client.complete(messages, output)
        except Deferred as deferred:
            return deferred.reason
        return "sent"

    with ThreadPoolExecutor(8) as pool:
        answers = sorted(pool.map(ask, range(8)))
    assert answers == ["budget"] * 7 + ["sent"]
    assert len(fake.requests) == 1
    assert client.budget.reserved == 0, "the sent request's estimate was settled with its real usage"
    assert 0 < client.budget.spent < 1000


def test_a_failed_request_settles_its_reservation(fake: FakeLLMServer) -> None:
    fake.configure(schema_violation=True)
    client = _client(fake, budget_tokens=100_000, validation_retries=0)
    with pytest.raises(LLMError) as failed:
        client.complete(build_messages(PULSE, DOC, items_model(PULSE)), items_model(PULSE))
    assert client.budget.reserved == 0
    assert client.budget.spent == failed.value.stats.prompt_tokens + failed.value.stats.completion_tokens > 0


def test_a_batch_run_submits_no_more_than_its_budget_holds(fake: FakeLLMServer) -> None:
    client = _client(fake, budget_tokens=1, batch=True)
    output = items_model(PULSE)
    reasons = []
    for n in range(3):
        with pytest.raises(Deferred) as deferred:
            client.complete(build_messages(PULSE, DOC.model_copy(update={"doc_id": f"d{n}"}), output), output)
        reasons.append(deferred.value.reason)
    assert reasons == ["batch", "budget", "budget"]
    assert len(client.take_deferred()) == 1 and fake.requests == []


def test_the_answers_a_run_stores_from_a_batch_count_against_its_budget(fake: FakeLLMServer, tmp_path) -> None:
    submitter = _client(fake, batch=True)
    output = items_model(PULSE)
    for n in range(2):
        with pytest.raises(Deferred):
            submitter.complete(build_messages(PULSE, DOC.model_copy(update={"doc_id": f"d{n}"}), output), output)
    requests = submitter.take_deferred()
    fake.configure(batch_polls=0)
    state = submit_batch(submitter.openai, requests, {"schema_version": PULSE.key})
    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse) as con:
        record_batch(con, state.batch_id, state.status, PULSE.key, "fake-model", [r.model_dump() for r in requests])
    client = _client(fake, batch=True, budget_tokens=1)
    figures = store_finished_batches(partial(open_warehouse, warehouse), client, PULSE.key)
    assert figures["batch_answers_stored"] == 2
    assert client.budget.spent == figures["batch_prompt_tokens"] + figures["batch_completion_tokens"] > 0
    with pytest.raises(Deferred) as deferred:
        client.complete(build_messages(PULSE, DOC.model_copy(update={"doc_id": "d9"}), output), output)
    assert deferred.value.reason == "budget", "the stored answers used up the run's budget"


def test_cost_needs_both_prices() -> None:
    assert Prices(per_mtok_in=1.0, per_mtok_out=4.0).cost(1_000_000, 500_000) == 3.0
    env = {"EXTRACTION_LLM_PRICE_PER_MTOK_IN": "1", "EXTRACTION_LLM_BUDGET_TOKENS": "5000"}
    model = Settings.from_env(env).model
    assert prices(model) is None and model.llm_budget_tokens == 5000
    env["EXTRACTION_LLM_PRICE_PER_MTOK_OUT"] = "4"
    assert prices(Settings.from_env(env).model) == Prices(per_mtok_in=1, per_mtok_out=4)
