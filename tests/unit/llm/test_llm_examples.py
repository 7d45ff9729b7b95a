"""Few-shot examples: checked at load (a bad one names its file and number), sent as earlier turns, part of the
request's hash and of its budgeted tokens."""

from __future__ import annotations

import re
from datetime import date

import pytest

from extraction_assets.lib.llm.budget import estimate_tokens
from extraction_assets.lib.llm.client import request_hash
from extraction_assets.lib.llm.examples import EXAMPLE_TAG, example_messages
from extraction_assets.lib.llm.prompting import build_messages, document_from_messages
from extraction_assets.lib.llm.response_models import module_model, response_model
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.prompt_files import discover_schemas, parse_schema_text
from extraction_assets.lib.schemas import SchemaError
from extraction_assets.lib.settings import DEFAULT_PROMPTS

HEAD = """---
schema: notes
version: v1
heuristic: pulse
fields:
  - name: commitment
    attributes:
      due_date: {type: date}
"""
GOOD = """examples:
  - text: "We will send the quote by 2026-03-06."
    expected:
      items:
        - {item_type: commitment, title: Send the quote, evidence_span: "We will send the quote", confidence: 0.9,
           due_date: "2026-03-06"}
"""
DOC = ExtractionInput(
    doc_id="d1", tenant_id="t", kind="text", text="I will call the courier.", doc_date=date(2026, 3, 2)
)


def _schema(examples: str = GOOD, source: str = "prompts/notes/v1.md"):
    return parse_schema_text(f"{HEAD}{examples}---\nExtract commitments.\n", source=source)


def test_an_example_goes_before_the_document_as_a_user_and_an_assistant_turn() -> None:
    schema = _schema()
    messages = build_messages(schema, DOC, response_model(schema))
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]
    assert f"<{EXAMPLE_TAG}>\nWe will send the quote by 2026-03-06.\n</{EXAMPLE_TAG}>" in messages[1]["content"]
    assert '"evidence_span": "We will send the quote"' in messages[2]["content"]
    assert '"due_date": "2026-03-06"' in messages[2]["content"]
    assert document_from_messages(messages) == DOC.text, "the document is still the one between boundary tags"


def test_examples_are_in_the_request_hash_and_the_budget() -> None:
    with_examples, without = _schema(), _schema(examples="")
    output_a, output_b = response_model(with_examples), response_model(without)
    a = build_messages(with_examples, DOC, output_a)
    b = build_messages(without, DOC, output_b)
    assert request_hash("m", "tools", a, output_a) != request_hash("m", "tools", b, output_b)
    changed = _schema(GOOD.replace("Send the quote,", "Send the quote soon,"))
    c = build_messages(changed, DOC, response_model(changed))
    assert request_hash("m", "tools", a, output_a) != request_hash("m", "tools", c, response_model(changed))
    assert with_examples.content_sha256 != changed.content_sha256, "a changed example is a new prompt"
    tokens = [estimate_tokens([m["content"] for m in messages], None) for messages in (a, b)]
    assert tokens[0] > tokens[1]


@pytest.mark.parametrize(
    ("examples", "says"),
    [
        (GOOD.replace('evidence_span: "We will send the quote"', 'evidence_span: "We shall send it"'),
         "example 1: evidence span 'We shall send it' is not in its text verbatim"),
        (GOOD.replace("item_type: commitment", "item_type: promise"), "example 1: its expected answer does not fit"),
        (GOOD.replace('due_date: "2026-03-06"', 'due_date: "next week"'), "example 1: its expected answer does not"),
        (GOOD + '  - text: "Nothing here."\n    expected: {items: [{item_type: commitment}]}\n', "example 2:"),
        ('examples:\n  - text: ""\n    expected: {items: []}\n', "examples.0.text"),
        ('examples:\n  - text: "x"\n    expected: {items: []}\n    note: y\n', "examples.0.note"),
    ],
)  # fmt: skip
def test_a_bad_example_is_a_load_error_naming_the_file_and_the_example(examples: str, says: str) -> None:
    with pytest.raises(SchemaError) as raised:
        _schema(examples)
    assert re.match(r"prompts/notes/v1\.md, line \d+: ", str(raised.value)), "the file and the example's line"
    assert says in str(raised.value)


def test_a_records_example_answers_the_classification_and_each_module_it_holds() -> None:
    schema = discover_schemas(DEFAULT_PROMPTS)[0]["email@v1"]
    classify = example_messages(schema, response_model(schema))  # the classification step's model
    assert classify[1]["content"] == '{"modules": ["finance"]}'
    assert len(example_messages(schema, module_model(schema, "finance"))) == 2
    assert example_messages(schema, module_model(schema, "crm")) == [], "no crm record in the example: not shown"


def test_every_bundled_schema_has_examples_and_their_texts_hold_no_personal_data() -> None:
    from extraction_assets.lib.pii.scrubber import scrub

    schemas = discover_schemas(DEFAULT_PROMPTS)[0]
    assert all(1 <= len(schema.examples) <= 2 for schema in schemas.values())
    for schema in schemas.values():
        for example in schema.examples:
            assert scrub(example.text).text == example.text, (schema.key, example.text)


def test_the_fake_endpoint_answers_the_document_not_the_example() -> None:
    from evals.fake_llm import Faults, _Responder

    schema = discover_schemas(DEFAULT_PROMPTS)[0]["email@v1"]
    newsletter = ExtractionInput(
        doc_id="d2",
        tenant_id="t",
        kind="email",
        text="Subject: Newsletter\n\nThis week's headlines: prices fell; a new store opened downtown.",
    )
    messages = build_messages(schema, newsletter, response_model(schema), task="Classify this e-mail.")
    assert messages[1]["content"].startswith("Example document:")
    answer = _Responder(DEFAULT_PROMPTS).answer(messages, Faults())
    assert "finance" not in answer["modules"], "the example's module is not the document's"


def test_a_copy_of_a_schema_with_other_examples_shows_its_own_not_the_originals() -> None:
    schema = _schema()
    output = response_model(schema)
    assert len(example_messages(schema, output)) == 2
    assert example_messages(schema.model_copy(update={"examples": []}), output) == []
    other = schema.examples[0].model_copy(update={"text": "We will send the quote by 2026-03-06, and the invoice."})
    shown = example_messages(schema.model_copy(update={"examples": [other]}), output)
    assert "the invoice" in shown[0]["content"], "the copy's example, not the original's"


def test_checking_the_bundled_examples_loads_no_model_client() -> None:
    """An offline run loads every prompt file and checks its examples: that must not import instructor and openai
    (about 1 s of every run's start when it did)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from extraction_assets.lib.prompt_files import discover_schemas\n"
        "from extraction_assets.lib.settings import DEFAULT_PROMPTS\n"
        "schemas, errors = discover_schemas(DEFAULT_PROMPTS)\n"
        "assert schemas and not errors and any(s.examples for s in schemas.values()), errors\n"
        "print(sorted(m for m in ('instructor', 'openai') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
