"""A model answering with a huge field: re-asks stay small, and an answer over the size limit is refused unread."""

from __future__ import annotations

import json
from typing import Any

import pytest

from evals.fake_llm import FakeLLMServer, Faults
from extraction_assets.lib.llm import LLMClient, LLMError, LLMSettings, build_messages, response_model
from extraction_assets.lib.llm.answer_size import MAX_REASK_CHARS, MAX_RESPONSE_BYTES
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

PULSE = load_schema(DEFAULT_PROMPTS, "pulse@v1")
DOC = ExtractionInput(
    doc_id="d1", tenant_id="t", kind="text", text="Lan will ship the order by Friday. The supplier delay is a risk."
)


class HugeFieldServer(FakeLLMServer):
    """The fake model, with every item's `owner_name` blown up to `chars` characters (and a wrong type beside it,
    so the answer fails validation and is re-asked)."""

    chars = 0

    def handle(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any] | None]:
        status, headers, completion = super().handle(body)
        if completion and completion.get("choices"):
            message = completion["choices"][0]["message"]
            answer = json.loads(message["content"])
            for item in answer.get("items", []):
                item["value"] = {**(item.get("value") or {}), "owner_name": "A" * self.chars}
            message["content"] = json.dumps(answer)
        return status, headers, completion


@pytest.fixture
def fake():
    with HugeFieldServer(Faults(schema_violation=True)) as server:
        yield server


def _complete(fake: FakeLLMServer) -> None:
    client = LLMClient(LLMSettings(base_url=fake.base_url, model="fake-model", timeout_s=20, validation_retries=2))
    output = response_model(PULSE)
    client.complete(build_messages(PULSE, DOC, output), output)


def test_a_reask_sends_back_a_cut_answer_and_cut_errors(fake: HugeFieldServer) -> None:
    fake.chars = 500_000  # under the response limit: read, found invalid, re-asked
    with pytest.raises(LLMError):
        _complete(fake)
    first, *reasks = [len(json.dumps(body)) for body in fake.requests]
    assert len(reasks) == 2, "both re-asks were sent"
    turns = fake.requests[-1]["messages"][len(fake.requests[0]["messages"]) :]
    assert turns and all(len(str(turn.get("content") or "")) <= MAX_REASK_CHARS + 60 for turn in turns)
    assert all(size < first + 6 * (MAX_REASK_CHARS + 60) for size in reasks), (first, reasks)


def test_an_answer_over_the_size_limit_is_refused_without_reading_it_or_asking_again(fake: HugeFieldServer) -> None:
    fake.chars = 5_000_000
    with pytest.raises(LLMError, match="413"):
        _complete(fake)
    assert len(fake.requests) == 1, "a refused answer is neither retried nor re-asked"
    assert MAX_RESPONSE_BYTES < 5_000_000
