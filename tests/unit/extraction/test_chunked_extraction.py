"""A long document through the model path: one request per chunk, raw offsets as before, retries, passes."""

from __future__ import annotations

import random
import threading
import time
from datetime import date

from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.extraction import OrchestratedExtractor, extract_document, extract_stream, split_chunks
from extraction_assets.lib.llm import LLMClient, LLMSettings, document_from_messages
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

CHUNKED = load_schema(DEFAULT_PROMPTS, "pulse@v1").model_copy(
    update={"max_input_chars": 1500, "chunk_overlap_chars": 200, "max_items": 100}
)


def _long_document() -> Document:
    paragraphs = [
        f"Week {n} notes. Call dana{n}@acme.com about the order. "
        f"I will send the revised quote {n} to the client by Friday. The supplier delay {n} is a risk for the launch."
        for n in range(20)
    ]
    text = "\n\n".join(paragraphs) + "\n"
    return Document(
        doc_id=Document.make_id("acme", "text", text),
        tenant_id="acme",
        source_uri="acme/long.txt",
        kind="text",
        text=text,
        doc_date=date(2026, 11, 25),
    )


def _extractor(fake: FakeLLMServer, **settings) -> OrchestratedExtractor:
    config = {"base_url": fake.base_url, "model": "fake-model", "timeout_s": 5, "http_retries": 0, **settings}
    return OrchestratedExtractor(LLMClient(LLMSettings(**config)))


def test_each_chunk_is_one_request_and_evidence_is_in_raw_offsets(fake: FakeLLMServer) -> None:
    doc = _long_document()
    scrubbed = scrub_document(doc)
    chunks = split_chunks(scrubbed.text, CHUNKED.max_input_chars, CHUNKED.chunk_overlap_chars)
    assert len(chunks) >= 3
    outcome = extract_document(doc, scrubbed, CHUNKED, _extractor(fake))
    assert outcome.status == "processed" and outcome.outcome == "model"
    assert len(fake.requests) == len(chunks) == outcome.stats["chunks"]
    sent = [document_from_messages(r["messages"]) or "" for r in fake.requests]  # "": a request without one
    assert sorted(sent) == sorted(c.text for c in chunks), "each chunk once (asked concurrently: in any order)"
    assert all("@acme.com" not in text for text in sent)
    assert outcome.items and all(i.extracted_by == "model" for i in outcome.items)
    for item in outcome.items:
        for ev in item.evidence:
            assert doc.text[ev.char_start : ev.char_end] == ev.quote
    assert len({i.item_id for i in outcome.items}) == len(outcome.items)
    late = [i for i in outcome.items if "quote 19" in i.evidence[0].quote]
    assert late, "an item of the last chunk is found, with offsets in the whole document"
    capped = extract_document(doc, scrubbed, CHUNKED.model_copy(update={"max_items": 5}), _extractor(fake))
    assert len(capped.items) == 5 and capped.capped == len(outcome.items) - 5, "the cap applies after the merge"


def test_a_short_document_is_still_one_request_with_the_default_task(fake: FakeLLMServer) -> None:
    doc = _long_document()
    scrubbed = scrub_document(doc)
    whole = CHUNKED.model_copy(update={"max_input_chars": 100_000})
    extract_document(doc, scrubbed, whole, _extractor(fake))
    assert len(fake.requests) == 1
    assert fake.requests[0]["messages"][-1]["content"].startswith("Extract pulse data.\n")


def _track_in_flight(fake: FakeLLMServer, jitter_s: float = 0.0) -> list[int]:
    """The most requests the fake answered at once (the list's maximum), each answer taking up to `jitter_s`."""
    handle, lock, now, seen = fake.handle, threading.Lock(), [0], [0]
    shuffle = random.Random(7)

    def counted(body):
        with lock:
            now[0] += 1
            seen.append(now[0])
            delay = 0.05 + shuffle.random() * jitter_s
        time.sleep(delay)
        try:
            return handle(body)
        finally:
            with lock:
                now[0] -= 1

    fake.handle = counted  # type: ignore[method-assign]
    return seen


def test_a_documents_chunks_are_asked_concurrently_within_the_clients_bound(fake: FakeLLMServer) -> None:
    doc = _long_document()
    scrubbed = scrub_document(doc)
    chunks = split_chunks(scrubbed.text, CHUNKED.max_input_chars, CHUNKED.chunk_overlap_chars)
    seen = _track_in_flight(fake)
    outcome = extract_document(doc, scrubbed, CHUNKED, _extractor(fake, max_concurrency=2))
    assert outcome.outcome == "model" and len(fake.requests) == len(chunks) > 2
    assert max(seen) == 2


def test_documents_and_their_chunks_share_one_bound_on_requests_in_flight(fake: FakeLLMServer) -> None:
    """Two long documents at once, two requests at most: not two per document."""
    docs = [_long_document(), _long_document().model_copy(update={"doc_id": "other", "tenant_id": "beta"})]
    seen = _track_in_flight(fake)
    pairs = ((d, scrub_document(d)) for d in docs)
    outcomes = list(extract_stream(pairs, CHUNKED, _extractor(fake, max_concurrency=2)))
    assert [o.outcome for o in outcomes] == ["model", "model"]
    assert max(seen) == 2


def test_concurrent_chunks_merge_to_the_same_items_and_figures_as_one_at_a_time(fake: FakeLLMServer) -> None:
    doc = _long_document()
    scrubbed = scrub_document(doc)
    passes = CHUNKED.model_copy(update={"extraction_passes": 2})
    one_at_a_time = extract_document(doc, scrubbed, passes, _extractor(fake, max_concurrency=1))
    _track_in_flight(fake, jitter_s=0.1)  # chunks finish in a shuffled order
    concurrent = extract_document(doc, scrubbed, passes, _extractor(fake, max_concurrency=8))
    assert concurrent.items == one_at_a_time.items
    figures = {k: v for k, v in concurrent.stats.items() if k != "latency_ms"}
    assert figures == {k: v for k, v in one_at_a_time.stats.items() if k != "latency_ms"}


def test_a_failed_chunk_is_asked_again(fake: FakeLLMServer) -> None:
    fake.configure(server_error_every=3)  # requests 1, 4, 7, ... fail once (one at a time: the same chunks)
    doc = _long_document()
    outcome = extract_document(doc, scrub_document(doc), CHUNKED, _extractor(fake, max_concurrency=1))
    assert outcome.outcome == "model"
    assert outcome.stats["chunk_retries"] >= 1
    assert outcome.stats["calls"] == len(fake.requests)


def test_a_chunk_that_keeps_failing_falls_back_for_the_whole_document(fake: FakeLLMServer) -> None:
    doc = _long_document()
    scrubbed = scrub_document(doc)
    chunks = split_chunks(scrubbed.text, CHUNKED.max_input_chars, CHUNKED.chunk_overlap_chars)
    fake.configure(server_error_every=1)
    outcome = extract_document(doc, scrubbed, CHUNKED, _extractor(fake, max_concurrency=1))
    assert outcome.status == "processed" and outcome.outcome == "fallback_used"
    assert outcome.items and all(i.extracted_by == "heuristic" for i in outcome.items), "never half model, half lost"
    assert len(fake.requests) == 2 < len(chunks)  # the first chunk and its retry: the rest is not asked
    assert outcome.stats["calls"] == 2
    fake.requests.clear()
    concurrent = extract_document(doc, scrubbed, CHUNKED, _extractor(fake, max_concurrency=8))
    assert concurrent.outcome == "fallback_used" and concurrent.items == outcome.items
    assert concurrent.stats["calls"] == len(fake.requests) <= 2 * len(chunks), "every call made is counted"


def test_a_second_pass_lists_what_was_found_and_adds_no_duplicate(fake: FakeLLMServer) -> None:
    doc = _long_document()
    scrubbed = scrub_document(doc)
    one = extract_document(doc, scrubbed, CHUNKED, _extractor(fake))
    first_calls = len(fake.requests)
    two = extract_document(doc, scrubbed, CHUNKED.model_copy(update={"extraction_passes": 2}), _extractor(fake))
    assert len(fake.requests) - first_calls == 2 * first_calls
    assert "Pass 2: these were found already" in fake.requests[-1]["messages"][-1]["content"]
    assert sorted(i.item_id for i in two.items) == sorted(i.item_id for i in one.items)


def test_classify_then_extract_classifies_each_chunk_and_merges_each_modules_records(fake: FakeLLMServer) -> None:
    routed = CHUNKED.model_copy(update={"orchestration": "classify_then_extract", "shape": "records", "examples": []})
    doc = _long_document()
    scrubbed = scrub_document(doc)
    chunks = split_chunks(scrubbed.text, routed.max_input_chars, routed.chunk_overlap_chars)
    outcome = extract_document(doc, scrubbed, routed, _extractor(fake))
    assert outcome.outcome == "model"
    tasks = [r["messages"][-1]["content"].split("\n", 2)[:2] for r in fake.requests]
    classified = [t for t in tasks if t[0].startswith("Classify")]
    assert len(classified) == len(chunks)
    parts = [f"This is part {n + 1} of {len(chunks)} of a long document" for n in range(len(chunks))]
    assert sorted(t[1].split(":")[0] for t in classified) == sorted(parts), "each part once, in any order"
    modules = {i.item_type for i in outcome.items}
    assert modules and len(outcome.items) == len(modules), "one record per module, merged over the chunks"
    for item in outcome.items:
        assert len(item.evidence) > 1, "the other chunks' quotes are further evidence"
        for ev in item.evidence:
            assert doc.text[ev.char_start : ev.char_end] == ev.quote
