"""A schema version: what to extract (fields, shape, bands, routing) and the model's instructions, with its
partition key `<schema>@<version>`. A prompt file describes one (`prompt_files.py` reads it); a released version is
never edited, a change is a new version, so old and new results can sit side by side.
"""

from __future__ import annotations

import keyword
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from extraction_assets.lib.calibration.model import ReviewCost, VersionCalibration
from extraction_assets.lib.models import DocumentKind

Orchestration = Literal["model_first", "heuristic_first", "classify_then_extract", "heuristic_only"]
LLMMode = Literal["json_schema", "json", "tools", "md_json"]  # how instructor asks for structured output
Shape = Literal["items", "fields", "records"]
FieldType = Literal["string", "number", "integer", "boolean", "date", "enum", "list", "object"]
ReviewPolicy = Literal["auto", "always", "never"]

_KEY_SAFE = re.compile(r"^[a-z0-9_\-]+$")
KEY_SEPARATOR = "@"  # a partition key is `<schema>@<version>`
ALL_KINDS: tuple[DocumentKind, ...] = ("text", "pulse", "email", "chat", "transcript")

# What a field or attribute name may not be: it becomes a pydantic field of the response models (so not one of
# BaseModel's attributes, nor of instructor's `ResponseSchema`, nor in pydantic's protected `model_` namespace),
# a JSON key of every item's value, and a keyword argument. An attribute sits beside the keys the item and record
# models add themselves (`items_model`, `record_model`), so it may not take one of those either.
_INSTRUCTOR_NAMES = frozenset({"from_response", "openai_schema", "anthropic_schema", "gemini_schema"})
_RESERVED_PREFIXES = ("model_", "parse_", "_")  # pydantic's protected namespace, instructor's parsers, private
_RESERVED_NAMES = frozenset(dir(BaseModel)) | _INSTRUCTOR_NAMES
_ANSWER_KEYS = frozenset({"item_type", "title", "evidence_span", "evidence_spans", "confidence"})


class SchemaError(ValueError):
    """A prompt file that cannot define a schema version; the message names the file, the line where it can, and
    the problem."""


def _usable_name(name: str, taken: frozenset[str] = frozenset()) -> str:
    """`name` when it can name a field (or, with `taken`, an attribute); else ValueError saying why."""
    if not name.isidentifier() or keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise ValueError(f"{name!r} must be a Python identifier and not a keyword (letters, digits and '_')")
    if name in _RESERVED_NAMES or name in taken or name.startswith(_RESERVED_PREFIXES):
        raise ValueError(f"{name!r} is reserved (the response models use it); choose another name")
    return name


FieldName = Annotated[str, AfterValidator(_usable_name)]
AttributeName = Annotated[str, AfterValidator(lambda name: _usable_name(name, _ANSWER_KEYS))]


class ConfidenceBand(BaseModel):
    """Inclusive bounds an extractor's confidences must sit in (keyword 0.60-0.80, model 0.85-0.90)."""

    model_config = ConfigDict(frozen=True)

    low: float = Field(ge=0.0, lt=1.0)
    high: float = Field(gt=0.0, lt=1.0)

    @model_validator(mode="after")
    def _ordered(self) -> ConfidenceBand:
        if self.low > self.high:
            raise ValueError(f"band low {self.low} is above high {self.high}")
        return self

    def clamp(self, value: float) -> float:
        return round(min(max(value, self.low), self.high), 4)

    def contains(self, value: float) -> bool:
        return self.low <= value <= self.high


class AttributeSpec(BaseModel):
    """One attribute of an item type (e.g. a commitment's due_date)."""

    type: FieldType = "string"
    description: str = ""
    enum_options: list[str] | None = Field(default=None, min_length=1)


class FieldSpec(BaseModel):
    """An item type (shape `items`) or an output field (shape `fields`), with its review rules."""

    name: FieldName
    type: FieldType = "object"
    description: str = ""
    required: bool = False
    enum_options: list[str] | None = Field(default=None, min_length=1)
    confidence_threshold: float = Field(default=0.75, ge=0.0, le=1.0)
    review_policy: ReviewPolicy = "auto"
    extraction_hint: str = ""
    attributes: dict[AttributeName, AttributeSpec] = Field(default_factory=dict)
    objective: str | None = None  # the interview objective the field belongs to (live sessions); None: its own

    @property
    def objective_name(self) -> str:
        """A field that names no objective is an objective of its own."""
        return self.objective or self.name


class Applicability(BaseModel):
    """Which documents of its kinds a schema version takes (README: "Which schema reads which document").

    Not part of any version: changing it re-routes the documents it affects, nothing else.
    """

    model_config = ConfigDict(frozen=True)

    folders: list[str] | None = None  # folder kinds (mail, receipts, ...) or folder names; None: the pack's own
    paths: list[str] = Field(default_factory=list)  # globs under the tenant folder; when given they alone decide
    tenants: list[str] = Field(default_factory=list)  # empty: every tenant
    gate: bool = True  # the heuristic pack's content test ("is this my kind of document?")
    min_score: float = Field(default=0.5, ge=0.0, le=1.0)  # the gate's score a document needs


class FewShotExample(BaseModel):
    """A short text and the answer expected from it (the JSON the model replies), shown to the model before each
    document it reads (`lib/llm/examples.py`); checked when the file loads. Sent as written: no personal data."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str = Field(min_length=1, max_length=4000)
    expected: dict[str, Any]


class SchemaVersion(BaseModel):
    """A parsed prompt file; `key` is its partition key."""

    schema_name: str = Field(alias="schema")
    version: str
    description: str = ""
    shape: Shape = "items"
    orchestration: Orchestration = "heuristic_only"
    llm_mode: LLMMode | None = None  # None: the endpoint's mode (`EXTRACTION_LLM_MODE`)
    heuristic: str
    document_kinds: list[DocumentKind] = Field(default_factory=lambda: list(ALL_KINDS))
    applies_to: Applicability = Applicability()
    max_items: int = Field(default=10, ge=1, le=1000)
    max_input_chars: int = Field(default=12_000, ge=500)  # a longer document goes to the model in chunks
    chunk_overlap_chars: int = Field(default=400, ge=0)  # text two neighbouring chunks share
    # the context window of the endpoint this schema is written for, where `EXTRACTION_LLM_CONTEXT_TOKENS` does
    # not say it: chunks are cut smaller than `max_input_chars` when the prompt and answer would not fit beside it
    context_tokens: int | None = Field(default=None, ge=256)
    extraction_passes: int = Field(default=1, ge=1, le=5)  # later passes re-ask for what was missed
    heuristic_band: ConfidenceBand = ConfidenceBand(low=0.60, high=0.80)
    model_band: ConfidenceBand = ConfidenceBand(low=0.85, high=0.90)
    fields: list[FieldSpec]
    options: dict[str, Any] = Field(default_factory=dict)
    examples: list[FewShotExample] = Field(default_factory=list, max_length=5)  # few-shot, for the model path
    # the cost of an error (`review: {max_error_rate: 0.02}` or `{queue_share: 0.2}`): the calibration's fit turns it
    # into the probability under which an item goes to review; None: the fields' confidence thresholds decide
    review: ReviewCost | None = None
    # the fitted calibration beside the prompt file (`<version>.calibration.json`), read with it; None: none
    calibration: VersionCalibration | None = None
    # a challenger extracts the documents its schema's current version reads, but only where the two disagree does
    # anything of it enter the review queue, until a person promotes it (lib/review/challengers.py)
    challenger: bool = False
    instructions: str = ""
    source_path: str = ""
    content_sha256: str = ""

    model_config = ConfigDict(populate_by_name=True, frozen=True)  # shared: parsed once per content

    @field_validator("schema_name", "version")
    @classmethod
    def _safe_key_part(cls, value: str) -> str:
        if not _KEY_SAFE.match(value):
            raise ValueError(f"{value!r} may hold only a-z, 0-9, '_' and '-' (it becomes a partition key)")
        return value

    @model_validator(mode="after")
    def _unique_fields(self) -> SchemaVersion:
        names = [f.name for f in self.fields]
        if len(names) != len(set(names)):
            raise ValueError(f"duplicate field names in {names}")
        if not names:
            raise ValueError("a schema needs at least one field")
        if self.chunk_overlap_chars * 4 > self.max_input_chars:
            raise ValueError(
                f"chunk_overlap_chars {self.chunk_overlap_chars} must be at most a quarter of max_input_chars"
            )
        return self

    @property
    def key(self) -> str:
        return partition_key(self.schema_name, self.version)

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)

    def reads_kind(self, kind: str) -> bool:
        return kind in self.document_kinds


def partition_key(schema_name: str, version: str) -> str:
    """The partition key of a schema's version (`pulse`, `v1` -> `pulse@v1`)."""
    return f"{schema_name}{KEY_SEPARATOR}{version}"


def split_key(key: str) -> tuple[str, str]:
    """A partition key's schema name and version; SchemaError unless both are there and of the characters a key may
    hold (so neither can step out of the prompts folder)."""
    name, sep, version = key.partition(KEY_SEPARATOR)
    if not (sep and _KEY_SAFE.fullmatch(name) and _KEY_SAFE.fullmatch(version)):
        raise SchemaError(f"{key[:200]!r} is not a partition key of the form schema@version")
    return name, version
