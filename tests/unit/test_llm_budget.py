"""Token accounting, the run's token budget and the cost estimate."""

from __future__ import annotations

import pytest

from extraction_assets.fake_llm import FakeLLMServer
from extraction_assets.lib.extraction import ExtractorChoice, OrchestratedExtractor, extract_document
from extraction_assets.lib.llm import Deferred, LLMClient, LLMError, LLMSettings, Prices, build_messages, items_model
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.settings import Settings
from tests.unit.test_chunked_extraction import CHUNKED, _long_document
from tests.unit.test_model_client import DOC, PULSE


@pytest.fixture
def fake():
    with FakeLLMServer() as server:
        yield server


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


def test_cost_needs_both_prices() -> None:
    assert Prices(per_mtok_in=1.0, per_mtok_out=4.0).cost(1_000_000, 500_000) == 3.0
    env = {"EXTRACTION_LLM_PRICE_PER_MTOK_IN": "1", "EXTRACTION_LLM_BUDGET_TOKENS": "5000"}
    choice = ExtractorChoice.from_settings(Settings.from_env(env))
    assert choice.prices() is None and choice.llm_budget_tokens == 5000
    env["EXTRACTION_LLM_PRICE_PER_MTOK_OUT"] = "4"
    assert ExtractorChoice.from_settings(Settings.from_env(env)).prices() == Prices(per_mtok_in=1, per_mtok_out=4)
