"""Few-shot examples of a prompt file (front matter `examples`): checked when the file loads, and shown to the model
before the document as earlier turns of the conversation (a user turn with the example's text, an assistant turn
with the answer expected from it), the message form instructor and the OpenAI protocol take.

An example is part of the prompt: it is in the file (so in the prompt's hash and the schema version), in every
request it goes into (so in the request's cache key) and in the tokens a request is budgeted for.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from extraction_assets.lib.llm.response_models import module_model, response_model

if TYPE_CHECKING:
    from extraction_assets.lib.schemas import FewShotExample, SchemaVersion

EXAMPLE_TAG = "example"  # not the documents' boundary tags (`document-<nonce>`): an example is never the document
_answers: dict[tuple[str, ...], list[dict[str, BaseModel]]] = {}
_turns: dict[tuple[tuple[str, ...], type[BaseModel]], list[dict[str, str]]] = {}
_LOCK = threading.Lock()


class ExampleError(ValueError):
    """An example whose answer does not validate, or whose evidence is not in its own text; `index` is its place in
    the front matter's `examples` (from 0), so the error can name its line."""

    def __init__(self, index: int, message: str) -> None:
        super().__init__(f"example {index + 1}: {message}")
        self.index = index


def _answers_of(schema: SchemaVersion, example: FewShotExample) -> dict[str, BaseModel]:
    """The example's answer for each request it can be shown with, by the name of that request's response model
    (unique within a schema): the schema's one response model, or for shape `records` the classification and each
    module's record. Validated on the plain form of those models: a prompt file loads without instructor."""
    output = response_model(schema, plain=True)  # for shape `records`, the classification
    if schema.shape != "records":
        return {output.__name__: output.model_validate(example.expected)}
    answers: dict[str, BaseModel] = {output.__name__: output.model_validate({"modules": list(example.expected)})}
    for module, record in example.expected.items():
        model = module_model(schema, module, plain=True)
        answers[model.__name__] = model.model_validate(record)
    return answers


def _spans(value: Any) -> Iterator[str]:
    """Every evidence span of an answer (`evidence_span` of an item, `evidence_spans` of a field or record)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "evidence_span" and isinstance(inner, str):
                yield inner
            elif key == "evidence_spans" and isinstance(inner, list):
                yield from (span for span in inner if isinstance(span, str))
            else:
                yield from _spans(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _spans(inner)


def example_answers(schema: SchemaVersion) -> list[dict[str, BaseModel]]:
    """Each example's answers, checked: raises ExampleError naming the example (1-based) on the first bad one."""
    key = _key(schema)
    if key in _answers:
        return _answers[key]
    checked = []
    for index, example in enumerate(schema.examples):
        try:
            answers = _answers_of(schema, example)
        except (ValidationError, KeyError) as exc:
            raise ExampleError(index, f"its expected answer does not fit the schema: {exc}") from exc
        for answer in answers.values():
            for span in _spans(answer.model_dump(mode="json")):
                if span not in example.text:
                    raise ExampleError(index, f"evidence span {span!r} is not in its text verbatim")
        checked.append(answers)
    with _LOCK:
        _answers[key] = checked
    return checked


def _key(schema: SchemaVersion) -> tuple[str, ...]:
    """What an example's answers depend on: the examples themselves and the fields they are read against (a copy
    of a schema with other examples or fields is another key, whatever its file's hash)."""
    examples = json.dumps([e.model_dump(mode="json") for e in schema.examples], sort_keys=True, ensure_ascii=False)
    return (schema.key, schema.shape, json.dumps([f.model_dump(mode="json") for f in schema.fields]), examples)


def example_messages(schema: SchemaVersion, output: type[BaseModel]) -> list[dict[str, str]]:
    """The turns that show the examples answering the request `output` is the answer of (none for another
    request, such as a session's light check), rendered once per schema and request."""
    if not schema.examples:
        return []
    key = (_key(schema), output)
    if key not in _turns:
        rendered = _render(schema, output)  # outside the lock: `example_answers` takes it
        with _LOCK:
            _turns[key] = rendered
    return [dict(m) for m in _turns[key]]


def _render(schema: SchemaVersion, output: type[BaseModel]) -> list[dict[str, str]]:
    messages: list[dict[str, str]] = []
    requests = [response_model(schema)]
    if schema.shape == "records":
        requests += [module_model(schema, spec.name) for spec in schema.fields]
    if not any(output is model for model in requests):  # another request, such as a session's light check
        return messages
    for example, answers in zip(schema.examples, example_answers(schema), strict=True):
        answer = answers.get(output.__name__)
        if answer is None:
            continue
        messages.append(
            {"role": "user", "content": f"Example document:\n<{EXAMPLE_TAG}>\n{example.text}\n</{EXAMPLE_TAG}>"}
        )
        messages.append(
            {
                "role": "assistant",
                "content": json.dumps(answer.model_dump(mode="json", exclude_unset=True), ensure_ascii=False),
            }
        )
    return messages
