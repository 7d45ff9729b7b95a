"""A provider's error answer echoes personal data (its message quotes what it was sent): a real endpoint on 127.0.0.1
answers 400 with planted values, and a client in a process of its own calls it with Python's default logging, as a
command-line run does. Neither what reaches stderr (instructor logs every failed attempt at ERROR level) nor the
error the pipeline keeps may hold a planted value."""

from __future__ import annotations

import json
import subprocess
import sys

from evals.fake_llm import FakeLLMServer, Faults
from tests.planted_pii import CARD, EMAIL, PHONE, SSN

PLANTED = (EMAIL, CARD, SSN, PHONE)
CALL = """
import json, sys
from extraction_assets.lib.llm import LLMClient, LLMError, LLMSettings, build_messages, response_model
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

schema = load_schema(DEFAULT_PROMPTS, "pulse@v1")
output = response_model(schema)
doc = ExtractionInput(doc_id="d1", tenant_id="t", kind="text", text="We ship by Friday.")
client = LLMClient(LLMSettings(base_url=sys.argv[1], model="fake-model", timeout_s=10, http_retries=1))
try:
    client.complete(build_messages(schema, doc, output), output)
except LLMError as exc:
    print(json.dumps({"error": str(exc)}))
"""


def test_a_providers_error_text_is_masked_before_anything_logs_or_keeps_it() -> None:
    message = f"Invalid request for {EMAIL}, card {CARD}, SSN {SSN}, phone {PHONE}"
    with FakeLLMServer(Faults(refuse_with=message)) as fake:
        done = subprocess.run(
            [sys.executable, "-c", CALL, fake.base_url], capture_output=True, text=True, timeout=120, check=False
        )
        assert fake.requests, "the endpoint was asked"
    assert done.returncode == 0, done.stderr[-3000:]
    kept = json.loads(done.stdout.strip().splitlines()[-1])["error"]
    assert "Invalid request for" in kept and "Invalid request for" in done.stderr, "the error is still told"
    for value in PLANTED:
        assert value not in done.stderr, f"{value} written to stderr"
        assert value not in kept, f"{value} kept in the error"
