"""Batch API backfills: the client defers instead of calling, and batch output lines become cache entries."""

from __future__ import annotations

import json

import pytest

from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.extraction import OrchestratedExtractor, build_extractor
from extraction_assets.lib.llm import (
    Deferred,
    LLMClient,
    LLMError,
    LLMSettings,
    MemoryCache,
    batch_answers,
    build_messages,
    items_model,
    retrieve_batch,
    submit_batch,
)
from extraction_assets.lib.llm.batch import jsonl
from extraction_assets.lib.settings import ModelSettings
from tests.unit.llm.test_llm_client import DOC, PULSE


def _client(fake: FakeLLMServer, cache: MemoryCache | None = None, **kw) -> LLMClient:
    settings = LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0, batch=True, **kw)
    return LLMClient(settings, cache)


@pytest.mark.parametrize("mode", ["json_schema", "tools", "md_json"])
def test_a_deferred_request_comes_back_from_its_batch_as_the_same_cached_answer(fake: FakeLLMServer, mode) -> None:
    client = _client(fake, mode=mode)
    output = items_model(PULSE)
    messages = build_messages(PULSE, DOC, output)
    with pytest.raises(Deferred) as deferred:
        client.complete(messages, output, {"doc_id": DOC.doc_id})
    assert deferred.value.reason == "batch" and fake.requests == []
    requests = client.take_deferred()
    line = json.loads(jsonl(requests).decode())
    assert line["custom_id"] == requests[0].request_hash and line["url"] == "/v1/chat/completions"
    assert line["body"]["model"] == "fake-model"
    fake.configure(batch_polls=0)
    state = submit_batch(client.openai, requests, {"schema_version": PULSE.key})
    state = retrieve_batch(client.openai, state.batch_id)
    assert state.finished and state.status == "completed"
    entries, failed = batch_answers(client.openai, state, {r.request_hash: r for r in requests})
    assert failed == [] and entries[0]["doc_id"] == DOC.doc_id and entries[0]["prompt_tokens"] > 0
    answered = _client(fake, MemoryCache({e["request_hash"]: e for e in entries}), mode=mode)
    parsed, stats = answered.complete(messages, output)
    assert stats.cached and parsed.model_dump()["items"], "the batch's answer is the request's cached answer"
    assert fake.requests == []


def test_a_batch_answer_that_does_not_fit_is_a_model_failure_not_a_request_deferred_again(fake: FakeLLMServer) -> None:
    output = items_model(PULSE)
    messages = build_messages(PULSE, DOC, output)
    client = _client(fake)
    with pytest.raises(Deferred):
        client.complete(messages, output)
    [request] = client.take_deferred()
    entry = {"request_hash": request.request_hash, "response": {"parsed": {"items": "no"}, "batch_id": "batch_1"}}
    with pytest.raises(LLMError, match="batch answer does not fit"):
        _client(fake, MemoryCache({request.request_hash: entry})).complete(messages, output)


def test_an_evaluation_never_waits_on_a_batch() -> None:
    choice = ModelSettings(llm_base_url="http://127.0.0.1:9/v1", llm_model="m", llm_batch=True)
    batching, direct = build_extractor(choice), build_extractor(choice, batch=False)
    assert isinstance(batching, OrchestratedExtractor) and isinstance(direct, OrchestratedExtractor)
    assert batching.client is not None and batching.client.settings.batch
    assert direct.client is not None and not direct.client.settings.batch
