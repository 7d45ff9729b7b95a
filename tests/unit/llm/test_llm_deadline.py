"""A model endpoint that answers slowly, against a real server on 127.0.0.1: one byte of the answer at a time (its
body, or its headers too) never trips a per-read timeout, so every call needs a deadline of its own."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

from evals.fake_llm import FakeLLMServer, Faults
from extraction_assets.lib.extraction import OrchestratedExtractor, extract_stream
from extraction_assets.lib.llm import Deferred, LLMClient, LLMSettings, build_messages, response_model
from extraction_assets.lib.models import Document, ExtractionInput
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

PULSE = load_schema(DEFAULT_PROMPTS, "pulse@v1")
TEXT = "We will ship the order by Friday. The supplier delay is a risk for the launch."


@functools.cache
def _output() -> type[BaseModel]:
    """The version's answer model, built on first use: not by every test worker that only collects this file."""
    return response_model(PULSE)


def _messages(number: int = 1) -> list[dict[str, str]]:
    """A request about document `number` (another number: another request, not answered from the cache)."""
    doc = ExtractionInput(doc_id=f"d{number}", tenant_id="t", kind="text", text=f"{TEXT} ({number})")
    return build_messages(PULSE, doc, _output())


# an answer of a few hundred bytes at one byte a second takes minutes: far past every bound below
DRIP_S = 1.0
TIMEOUT_S = 2.5  # a call's time in all
SLACK_S = 5.0  # what a loaded machine may add to a call's end (its thread waits for a core)


def _within(seconds: float, work: Callable[[], Any]) -> tuple[Any, BaseException | None, float]:
    """`work()` in a thread of its own: (its result, what it raised, seconds taken); fails when it is still running
    after `seconds` (without a deadline the call would take minutes: the test fails instead of waiting for it)."""
    done: dict[str, Any] = {}

    def run() -> None:
        try:
            done["result"] = work()
        except BaseException as exc:
            done["raised"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    took = time.monotonic() - started
    assert not thread.is_alive(), f"still running after {took:.1f} s"
    return done.get("result"), done.get("raised"), took


def _client(fake: FakeLLMServer, concurrency: int = 1) -> LLMClient:
    settings = LLMSettings(
        base_url=fake.base_url,
        model="fake-model",
        timeout_s=TIMEOUT_S,
        http_retries=4,
        max_concurrency=concurrency,
    )
    return LLMClient(settings)


@pytest.mark.parametrize("headers", [False, True], ids=["body", "headers"])
def test_an_answer_sent_a_byte_at_a_time_ends_at_the_calls_deadline_and_leaves_it_pending(headers: bool) -> None:
    with FakeLLMServer(Faults(drip_s=DRIP_S, drip_headers=headers)) as fake:
        client, messages, output = _client(fake), _messages(), _output()
        _, deferred, took = _within(TIMEOUT_S + SLACK_S, lambda: client.complete(messages, output))
        asked = len(fake.requests)
    assert isinstance(deferred, Deferred) and deferred.reason == "deadline", deferred
    assert took >= TIMEOUT_S, f"the call ended after {took:.1f} s"
    assert asked == 1, "the request took the call's whole time: it is not sent again in this run"
    assert deferred.cost.calls >= 1 and deferred.cost.latency_ms >= TIMEOUT_S * 1000


def _ask(client: LLMClient, messages: list[dict[str, str]]) -> Any:
    """One call, within its deadline (and the slack): its answer, or what it raised."""
    output = _output()
    result, raised, _ = _within(TIMEOUT_S + SLACK_S, lambda: client.complete(messages, output))
    return raised or result


def test_once_a_wave_of_calls_ran_out_of_time_the_endpoint_is_stuck_and_nothing_more_is_sent() -> None:
    with FakeLLMServer(Faults(drip_s=DRIP_S)) as fake:
        client = _client(fake, concurrency=2)
        for number in range(2):
            assert isinstance(deferred := _ask(client, _messages(number)), Deferred) and deferred.reason == "deadline"
        sent = len(fake.requests)
        stuck = _ask(client, _messages(3))
        assert isinstance(stuck, Deferred) and stuck.reason == "endpoint_stuck" and len(fake.requests) == sent


def test_a_healthy_endpoint_answers_within_the_deadline_and_resets_the_count() -> None:
    with FakeLLMServer(Faults(drip_s=DRIP_S)) as fake:
        client = _client(fake, concurrency=2)
        assert isinstance(_ask(client, _messages()), Deferred)
        fake.configure(drip_s=0.0)
        parsed, stats = _ask(client, _messages())
        assert parsed.items and stats.calls == 1
        fake.configure(drip_s=DRIP_S)
        assert isinstance(_ask(client, _messages(2)), Deferred)
        assert not client.endpoint_stuck, "one call out of time since the last answer: not yet stuck"


def test_a_stuck_call_costs_its_document_only_which_stays_pending() -> None:
    """Documents through the real extraction stream: each is pending (`pending_deadline`, or not sent once the
    endpoint is stuck), none failed, and the stream ends."""
    docs = [
        Document(doc_id=f"d{i}", tenant_id=f"t{i % 2}", source_uri=f"t/{i}.txt", kind="text", text=f"{TEXT} ({i})")
        for i in range(6)
    ]
    scrubbed = {d.doc_id: scrub_document(d) for d in docs}
    with FakeLLMServer(Faults(drip_s=DRIP_S)) as fake:
        extractor = OrchestratedExtractor(_client(fake, concurrency=2))
        stream = extract_stream(((d, scrubbed[d.doc_id]) for d in docs), PULSE, extractor)
        outcomes, raised, _ = _within(2 * TIMEOUT_S + SLACK_S, lambda: list(stream))
    assert raised is None, raised
    assert [o.status for o in outcomes] == ["pending"] * 6
    assert {o.outcome for o in outcomes} == {"pending_deadline", "pending_endpoint_stuck"}
    sent = sum(o.outcome == "pending_deadline" for o in outcomes)
    assert 2 <= sent <= 3, "the calls in flight when the second ran out of time, then none is sent"


def test_a_request_with_no_timeout_and_no_call_goes_through_the_bounded_connections() -> None:
    """Outside a call, with no timeout of its own (as a batch's file download may be): nothing is bounded, and
    nothing refuses an unbounded wait."""
    import httpx2

    from extraction_assets.lib.llm.deadline import bound_connections

    transport = httpx2.HTTPTransport()
    bound_connections(transport)
    with FakeLLMServer() as fake, httpx2.Client(transport=transport, timeout=None) as client:
        assert client.get(f"{fake.base_url}/models").json()["data"][0]["id"] == "fake-model"
