"""Schema versions are prompt files: YAML front matter (what to extract) plus the model's instructions.

`prompts/<schema>/<version>.md` is the partition `<schema>@<version>`. A released file is never
edited; a change is a new version, so old and new results can sit side by side.
"""

from __future__ import annotations

import hashlib
import keyword
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from extraction_assets.lib.calibration.model import ReviewCost, VersionCalibration, load_calibration
from extraction_assets.lib.models import DocumentKind

Orchestration = Literal["model_first", "heuristic_first", "classify_then_extract", "heuristic_only"]
LLMMode = Literal["json_schema", "json", "tools", "md_json"]  # how instructor asks for structured output
Shape = Literal["items", "fields", "records"]
FieldType = Literal["string", "number", "integer", "boolean", "date", "enum", "list", "object"]
ReviewPolicy = Literal["auto", "always", "never"]

_FRONT_MATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*\n?(.*)\Z", re.DOTALL)
_KEY_SAFE = re.compile(r"^[a-z0-9_\-]+$")
ALL_KINDS: tuple[DocumentKind, ...] = ("text", "pulse", "email", "chat", "transcript")


# A prompt goes into every request: a file larger than this is a mistake, never a prompt (the largest bundled is 7 KB).
MAX_PROMPT_BYTES = 256 * 1024
MAX_YAML_NODES = 20_000  # the bundled files' front matter holds at most ~250
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

    model_config = ConfigDict(populate_by_name=True)

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
        return f"{self.schema_name}@{self.version}"

    def field(self, name: str) -> FieldSpec | None:
        return next((f for f in self.fields if f.name == name), None)

    def reads_kind(self, kind: str) -> bool:
        return kind in self.document_kinds


# libyaml's parser with the safe constructors: a prompt file is parsed by every step of its partition (~5x faster)
_YAML_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_FRONT_MATTER_LINE = 2  # the front matter's first line is the file's second (the first is `---`)


class _BoundedLoader(_YAML_LOADER):  # type: ignore[valid-type,misc]  # the C loader where libyaml is installed
    """The safe loader, bounded: a prompt file is read by the sensor, every run and the review tools, so a few hundred
    bytes must never cost minutes. An alias (`*a`) makes the composed graph share a node, and nine aliases nested nine
    deep are 9**9 values to whatever walks the result (an 858-byte file hung discovery): aliases are refused, and so is
    a graph of more than MAX_YAML_NODES nodes, before anything is constructed. libyaml refuses deep nesting itself."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_tree(node)
        return super().construct_document(node)


def _check_tree(root: yaml.Node) -> None:
    """Raise at the first node reached twice (an alias, at the line of what holds it) or past the node budget; linear
    in the distinct nodes."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, yaml.Node]] = [(root, root)]
    while stack:
        node, parent = stack.pop()
        if id(node) in seen:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                "YAML aliases (*name) are not allowed in a prompt file: write the value out",
                parent.start_mark,
            )
        seen.add(id(node))
        if len(seen) > MAX_YAML_NODES:
            raise yaml.constructor.ConstructorError(
                None, None, f"the front matter holds more than {MAX_YAML_NODES} values", node.start_mark
            )
        children = [c for pair in node.value for c in pair] if isinstance(node, yaml.MappingNode) else node.value
        if isinstance(node, yaml.CollectionNode):  # in document order: an anchor is met before its aliases
            stack.extend((child, node) for child in reversed(children))


def _line_of(root: yaml.Node | None, loc: tuple[str | int, ...]) -> int:
    """The file line of the deepest node of `loc` (a pydantic error's location) in the front matter."""
    node = root
    line = root.start_mark.line if root is not None else 0
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == str(part)), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
        if node is None:
            break
        line = node.start_mark.line
    return line + _FRONT_MATTER_LINE


def _validation_message(source: str, root: yaml.Node | None, exc: ValidationError) -> str:
    """Each of pydantic's errors as `file, line N: where: what`."""
    return "; ".join(
        f"{source}, line {_line_of(root, error['loc'])}: {'.'.join(map(str, error['loc'])) or 'front matter'}: "
        + error["msg"].removeprefix("Value error, ")
        for error in exc.errors(include_url=False)
    )


def _front_matter(text: str, source: str) -> tuple[dict[str, Any], yaml.Node | None]:
    """The front matter as a mapping, and its composed node (for the lines of later errors)."""
    loader = _BoundedLoader(text)
    try:
        root = loader.get_single_node()
        meta = loader.construct_document(root) if root is not None else {}
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}, line {mark.line + _FRONT_MATTER_LINE}" if mark else source
        if isinstance(exc, yaml.constructor.ConstructorError):  # valid YAML, refused (an alias, a Python tag)
            raise SchemaError(f"{where}: {exc.problem}") from exc
        raise SchemaError(f"{where}: front matter is not valid YAML: {exc.problem or exc}") from exc
    except (yaml.YAMLError, RecursionError) as exc:
        raise SchemaError(f"{source}: front matter is not valid YAML: {exc}") from exc
    finally:
        loader.dispose()
    if not isinstance(meta, dict):
        raise SchemaError(f"{source}: front matter must be a mapping")
    return meta, root


def parse_schema_text(text: str, source: str = "<string>") -> SchemaVersion:
    """Parse one prompt file's content; raises SchemaError with the file name (and line) on any problem."""
    match = _FRONT_MATTER.match(text.replace("\r\n", "\n"))
    if not match:
        raise SchemaError(f"{source}: no YAML front matter (a '---' block at the top)")
    meta, root = _front_matter(match.group(1), source)
    meta["instructions"] = match.group(2).strip()
    meta["source_path"] = source
    meta["content_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    try:
        schema = SchemaVersion.model_validate(meta)
    except ValidationError as exc:
        raise SchemaError(_validation_message(source, root, exc)) from exc
    if schema.examples:
        from extraction_assets.lib.llm.examples import ExampleError, example_answers  # pydantic models of the schema

        try:
            example_answers(schema)
        except ExampleError as exc:
            line = _line_of(root, ("examples", exc.index))
            raise SchemaError(f"{source}, line {line}: {exc}") from exc
    return schema


def load_schema_file(path: Path) -> SchemaVersion:
    with path.open("rb") as handle:
        data = handle.read(MAX_PROMPT_BYTES + 1)
    if len(data) > MAX_PROMPT_BYTES:
        raise SchemaError(f"{path.as_posix()}: larger than {MAX_PROMPT_BYTES // 1024} KiB: a prompt file is not data")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaError(f"{path.as_posix()}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    schema = parse_schema_text(text, source=path.as_posix())
    expected = f"{path.parent.name}@{path.stem}"
    if schema.key != expected:
        raise SchemaError(f"{path.as_posix()}: declares {schema.key} but its path says {expected}")
    try:
        calibration = load_calibration(path)
    except (OSError, ValueError) as exc:
        raise SchemaError(f"{path.as_posix()}: its calibration file cannot be read: {exc}") from exc
    if calibration is not None and calibration.schema_version != schema.key:
        raise SchemaError(f"{path.as_posix()}: its calibration file is for {calibration.schema_version}")
    return schema.model_copy(update={"calibration": calibration}) if calibration is not None else schema


def discover_schemas(prompts_dir: Path) -> tuple[dict[str, SchemaVersion], dict[str, str]]:
    """All schema versions under prompts_dir, keyed by partition key, plus the files that failed and why."""
    found: dict[str, SchemaVersion] = {}
    errors: dict[str, str] = {}
    for path in sorted(prompts_dir.glob("*/*.md")):
        if path.name.startswith((".", "_")) or path.name.lower() == "readme.md":
            continue
        try:
            schema = load_schema_file(path)
        except (SchemaError, OSError) as exc:
            errors[path.as_posix()] = str(exc)
            continue
        found[schema.key] = schema
    return found, errors


def load_schema(prompts_dir: Path, key: str) -> SchemaVersion:
    """The schema version for a partition key such as `pulse@v1`: a prompt file of the folder, never a path."""
    name, sep, version = key.partition("@")
    if not (sep and _KEY_SAFE.fullmatch(name) and _KEY_SAFE.fullmatch(version)):
        raise SchemaError(f"{key[:200]!r} is not a partition key of the form schema@version")
    return load_schema_file(prompts_dir / name / f"{version}.md")
