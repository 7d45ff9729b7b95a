"""Pydantic response models generated from a schema version's front matter, and their mapping to candidates.

The model validates what the model returns (instructor feeds validation errors back on retry), so
an enum outside its options or a malformed date never reaches the pipeline as a value.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.schemas import AttributeSpec, FieldSpec, SchemaVersion

# digits as a class, not `\d`: llama.cpp's grammar cannot hold an answer to `\d` and let any string through
DATE_PATTERN = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
MAX_EVIDENCE_SPANS = 5


_BASE_LOCK = threading.Lock()
_BUILT_LOCK = threading.Lock()
_BASE: list[type[BaseModel]] = []  # the one base, once built


def response_base() -> type[BaseModel]:
    """Base of every top-level response model, built on first use (importing instructor imports openai, ~1 s).

    Instructor takes a `ResponseSchema` subclass as it is (otherwise it builds a wrapper class per
    request), and the JSON schema, which instructor rebuilds for every request, is built once per class.
    A fresh copy is returned (parsed from the stored JSON, much cheaper than a deep copy) because
    callers edit it.

    Built once under a lock: `functools.cache` let threads calling it together each build a base of their own, and
    models built on different bases then failed `super()` for the rest of the process.
    """
    if not _BASE:
        with _BASE_LOCK:
            if not _BASE:
                _BASE.append(_build_base())
    return _BASE[0]


def _build_base() -> type[BaseModel]:
    from instructor import ResponseSchema  # instructor loads with the first model to send, not with a prompt file

    class ResponseBase(ResponseSchema):
        model_config = ConfigDict(extra="ignore")

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return json.loads(_json_schema(cls, args, tuple(sorted(kwargs.items()))))

    return ResponseBase


class PlainBase(BaseModel):
    """The same models on plain pydantic, for what never goes to a model (checking a prompt file's examples when it
    loads): building them needs no instructor, whose import (with openai's, about 1 s) an offline run never pays."""

    model_config = ConfigDict(extra="ignore")


@functools.cache
def _json_schema(cls: type[BaseModel], args: tuple[Any, ...], kwargs: tuple[tuple[str, Any], ...]) -> str:
    schema = super(response_base(), cls).model_json_schema(*args, **dict(kwargs))  # type: ignore[misc]  # pydantic's
    return json.dumps(schema, ensure_ascii=False)


def _python_type(spec: AttributeSpec | FieldSpec) -> Any:
    """The Python type a value of this spec must have; always optional (null means 'not in the text')."""
    if spec.enum_options:
        return Literal[tuple(spec.enum_options)] | None
    return {
        "string": str | None,
        "number": float | None,
        "integer": int | None,
        "boolean": bool | None,
        "date": str | None,
        "list": list[str] | None,
        "object": dict[str, Any] | None,
        "enum": str | None,
    }[spec.type]


def _field(spec: AttributeSpec | FieldSpec) -> tuple[Any, Any]:
    extra: dict[str, Any] = {"description": spec.description or None}
    if spec.type == "date" and not spec.enum_options:
        extra["pattern"] = DATE_PATTERN
    return (_python_type(spec), Field(default=None, **extra))


def _name(schema: SchemaVersion, suffix: str) -> str:
    base = "".join(part.capitalize() for part in f"{schema.schema_name}_{schema.version}".replace("-", "_").split("_"))
    return f"{base}{suffix}"


def items_model(schema: SchemaVersion, base: type[BaseModel] | None = None) -> type[BaseModel]:
    """Shape `items`: a list of typed items, each with a verbatim evidence span and its attributes."""
    attributes: dict[str, AttributeSpec] = {}
    for spec in schema.fields:
        attributes.update(spec.attributes)
    item = create_model(  # type: ignore[call-overload]
        _name(schema, "Item"),
        __config__=ConfigDict(extra="ignore"),
        item_type=(Literal[tuple(f.name for f in schema.fields)], Field(description="which kind of item this is")),
        title=(str, Field(max_length=200, description="concise summary in the document's language")),
        evidence_span=(str, Field(min_length=1, description="verbatim text copied from the document")),
        confidence=(float, Field(ge=0.0, le=1.0)),
        **{name: _field(spec) for name, spec in attributes.items()},
    )
    return create_model(
        _name(schema, "Items"),
        __base__=base or response_base(),
        items=(list[item], Field(default_factory=list, max_length=schema.max_items)),  # type: ignore[valid-type]
    )


def fields_model(schema: SchemaVersion, base: type[BaseModel] | None = None) -> type[BaseModel]:
    """Shape `fields`: one optional entry per field, each with its value, evidence and reasoning."""
    entries = {}
    for spec in schema.fields:
        entry = create_model(
            _name(schema, f"Field{spec.name.title().replace('_', '')}"),
            __config__=ConfigDict(extra="ignore"),
            value=_field(spec),
            evidence_spans=(list[str], Field(default_factory=list, max_length=MAX_EVIDENCE_SPANS)),
            confidence=(float, Field(default=0.0, ge=0.0, le=1.0)),
            reasoning=(str | None, None),
        )
        entries[spec.name] = (entry | None, Field(default=None, description=spec.description or spec.extraction_hint))
    return create_model(_name(schema, "Fields"), __base__=base or response_base(), **entries)  # type: ignore[call-overload]


def classification_model(schema: SchemaVersion, base: type[BaseModel] | None = None) -> type[BaseModel]:
    """Shape `records`, step one: which modules (record types) apply to the document."""
    names = tuple(f.name for f in schema.fields)
    return create_model(
        _name(schema, "Classification"),
        __base__=base or response_base(),
        modules=(list[Literal[names]], Field(default_factory=list, max_length=len(names))),  # type: ignore[valid-type]
    )


def record_model(schema: SchemaVersion, module: str, base: type[BaseModel] | None = None) -> type[BaseModel]:
    """Shape `records`, step two: one flat record of a module's attributes with its evidence."""
    spec = schema.field(module)
    if spec is None:
        raise KeyError(f"{schema.key} has no module {module!r}")
    return create_model(  # type: ignore[call-overload]
        _name(schema, f"Record{module.title().replace('_', '')}"),
        __base__=base or response_base(),
        evidence_spans=(list[str], Field(min_length=1, max_length=MAX_EVIDENCE_SPANS)),
        confidence=(float, Field(ge=0.0, le=1.0)),
        **{name: _field(attr) for name, attr in spec.attributes.items()},
    )


_built: dict[tuple[str, str, str], type[BaseModel]] = {}


@functools.cache
def schema_json(output: type[BaseModel]) -> str:
    """The JSON schema of a response model, serialised once (it goes into every prompt and request hash)."""
    return json.dumps(output.model_json_schema(), ensure_ascii=False, sort_keys=True)


def _memo(kind: str, schema: SchemaVersion, build: Callable[[], type[BaseModel]]) -> type[BaseModel]:
    """One class per schema version and purpose: building pydantic models per document would be waste."""
    key = (kind, schema.key, schema.content_sha256 or schema.model_dump_json())
    if key not in _built:
        with _BUILT_LOCK:  # threads asking at once get the same class
            if key not in _built:
                _built[key] = build()
    return _built[key]


def response_model(schema: SchemaVersion, plain: bool = False) -> type[BaseModel]:
    """The single-call response model of a schema (shape `records` uses classification + record models); `plain`:
    the same model on `PlainBase`, to validate with, never to send."""
    base = PlainBase if plain else None
    kind = {"items": "items", "fields": "fields"}.get(schema.shape, "classification")
    build = {"items": items_model, "fields": fields_model, "classification": classification_model}[kind]
    return _memo(f"{kind}:plain" if plain else kind, schema, lambda: build(schema, base))


def module_model(schema: SchemaVersion, module: str, plain: bool = False) -> type[BaseModel]:
    kind = f"record:{module}:plain" if plain else f"record:{module}"
    return _memo(kind, schema, lambda: record_model(schema, module, PlainBase if plain else None))


def candidates_from_items(schema: SchemaVersion, response: BaseModel) -> list[CandidateItem]:
    attribute_names = {name for spec in schema.fields for name in spec.attributes}
    out = []
    for item in getattr(response, "items", []):
        data = item.model_dump()
        out.append(
            CandidateItem(
                item_type=data["item_type"],
                title=data["title"],
                evidence_span=data["evidence_span"],
                confidence=data["confidence"],
                value={k: v for k, v in data.items() if k in attribute_names},
                extracted_by="model",
            )
        )
    return out


def candidates_from_fields(schema: SchemaVersion, response: BaseModel) -> list[CandidateItem]:
    out = []
    for spec in schema.fields:
        entry = getattr(response, spec.name, None)
        if entry is None or entry.value is None or not entry.evidence_spans:
            continue
        out.append(
            CandidateItem(
                item_type=spec.name,
                title=f"{spec.name}: {entry.value}"[:200],
                evidence_span=entry.evidence_spans[0],
                more_evidence=list(entry.evidence_spans[1:]),
                confidence=entry.confidence,
                value={"value": entry.value},
                reasoning_summary=entry.reasoning,
                extracted_by="model",
            )
        )
    return out


def candidate_from_record(module: str, record: BaseModel, key: str | None) -> CandidateItem:
    data = record.model_dump()
    spans = data.pop("evidence_spans")
    confidence = data.pop("confidence")
    return CandidateItem(
        item_type=module,
        title=f"{module}: " + ", ".join(f"{k}={v}" for k, v in data.items() if v not in (None, [], ""))[:180],
        evidence_span=spans[0],
        more_evidence=spans[1:],
        confidence=confidence,
        value=data,
        key=key,
        extracted_by="model",
    )
