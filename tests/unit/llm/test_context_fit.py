"""Requests sized to the endpoint's context: chunks that fit, a request that cannot fit refused unsent, and the
schema left out of the prompt where the endpoint's grammar holds the answer to it (a local llama.cpp server)."""

from __future__ import annotations

import re

import pytest

from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.extraction import OrchestratedExtractor, extract_document
from extraction_assets.lib.extraction.factory import build_extractor, llm_settings
from extraction_assets.lib.llm import LLMClient, LLMError, LLMSettings, build_messages, response_model
from extraction_assets.lib.llm.budget import estimate_tokens
from extraction_assets.lib.llm.response_models import DATE_PATTERN, schema_json
from extraction_assets.lib.models import Document, ExtractionInput
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings

PULSE = load_schema(DEFAULT_PROMPTS, "pulse@v1").model_copy(update={"max_items": 100})
CONTEXT = 2048


def _document(paragraphs: int) -> Document:
    text = "\n\n".join(
        f"Week {n}: I will send the revised quote {n} to the client by Friday." for n in range(paragraphs)
    )
    return Document(
        doc_id=Document.make_id("acme", "text", text),
        tenant_id="acme",
        source_uri="acme/notes.txt",
        kind="text",
        text=text + "\n",
    )


def _client(fake: FakeLLMServer, **settings) -> LLMClient:
    config = {"base_url": fake.base_url, "model": "fake-model", "timeout_s": 5, "http_retries": 0, **settings}
    return LLMClient(LLMSettings(**config))


def _request_tokens(body: dict) -> int:
    return estimate_tokens([m["content"] for m in body["messages"]], body.get("max_tokens"))


def test_a_long_document_is_cut_into_chunks_that_fit_the_known_context(fake: FakeLLMServer) -> None:
    doc = _document(120)  # ~8,000 characters: one chunk at the schema's max_input_chars of 12,000
    scrubbed = scrub_document(doc)
    client = _client(fake, context_tokens=CONTEXT, max_tokens=256)
    outcome = extract_document(doc, scrubbed, PULSE, OrchestratedExtractor(client))
    assert outcome.status == "processed" and outcome.outcome == "model"
    assert outcome.stats["chunks"] > 1 and len(fake.requests) == outcome.stats["chunks"]
    assert all(_request_tokens(body) <= CONTEXT for body in fake.requests)
    unknown = _client(fake)
    fake.requests.clear()
    extract_document(doc, scrubbed, PULSE, OrchestratedExtractor(unknown))
    assert len(fake.requests) == 1, "without a known context the schema's max_input_chars decides, as before"


def test_the_context_comes_from_the_environment_else_from_the_schemas_front_matter(fake: FakeLLMServer) -> None:
    doc = _document(120)
    scrubbed = scrub_document(doc)
    choice = Settings.from_env(
        {
            "EXTRACTION_LLM_BASE_URL": fake.base_url,
            "EXTRACTION_LLM_MODEL": "fake-model",
            "EXTRACTION_LLM_CONTEXT_TOKENS": str(CONTEXT),
        }
    ).model
    assert (client := llm_settings(choice)) is not None and client.context_tokens == CONTEXT
    from_env = extract_document(doc, scrubbed, PULSE, build_extractor(choice))
    assumed = PULSE.model_copy(update={"context_tokens": CONTEXT})
    from_schema = extract_document(doc, scrubbed, assumed, OrchestratedExtractor(_client(fake)))
    assert from_env.stats["chunks"] > 1 and from_schema.stats["chunks"] == from_env.stats["chunks"]
    wide = PULSE.model_copy(update={"context_tokens": 100_000})
    narrow_endpoint = extract_document(
        doc, scrubbed, wide, OrchestratedExtractor(_client(fake, context_tokens=CONTEXT))
    )
    assert narrow_endpoint.stats["chunks"] == from_env.stats["chunks"], "the endpoint's own context wins"


def test_a_request_that_cannot_fit_the_context_is_refused_before_it_is_sent(fake: FakeLLMServer) -> None:
    doc = scrub_document(_document(120))
    part = ExtractionInput(doc_id=doc.doc_id, tenant_id="acme", kind="text", text=doc.text)
    output = response_model(PULSE)
    client = _client(fake, context_tokens=CONTEXT)
    with pytest.raises(LLMError, match=r"not sent.*over the endpoint's context of 2048 tokens"):
        client.complete(build_messages(PULSE, part, output), output)
    assert fake.requests == []


def test_the_schema_stays_out_of_the_prompt_where_the_endpoint_holds_the_answer_to_it(fake: FakeLLMServer) -> None:
    doc = _document(2)
    scrubbed = scrub_document(doc)
    output = response_model(PULSE)
    extract_document(doc, scrubbed, PULSE, OrchestratedExtractor(_client(fake, schema_in_prompt=False)))
    extract_document(doc, scrubbed, PULSE, OrchestratedExtractor(_client(fake)))
    without, with_schema = (body["messages"][-1]["content"] for body in fake.requests)
    assert schema_json(output) in with_schema and schema_json(output) not in without
    assert fake.requests[0]["response_format"]["type"] == "json_schema", "the endpoint still gets the schema"


def test_the_date_pattern_is_one_a_grammar_can_hold() -> None:
    assert "\\d" not in DATE_PATTERN, "llama.cpp's JSON-schema grammar cannot express \\d and accepts any string"
    assert re.match(DATE_PATTERN, "2018-04-03") and not re.match(DATE_PATTERN, "2018-4/3")
