"""The evaluation dataset registry (`evals/registry.yaml`): which gold file scores which schema, and how.

A dataset is data, not code: its entry names the file, the schema version it scores, the kind of
document each record becomes, how gold keys map to schema fields and how values are compared. An
entry whose file is missing is skipped with a message, so a registry can list datasets a machine
does not have.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from extraction_assets.lib.models import DocumentKind
from extraction_assets.lib.schemas import KEY_SEPARATOR, split_key
from extraction_assets.lib.settings import PROJECT_DIR

DEFAULT_REGISTRY = PROJECT_DIR / "evals" / "registry.yaml"

DEFAULT_ATTRIBUTE = "value"  # where shape-`fields` items keep their value
ScoringMode = Literal["fields", "evidence_turns", "entity_spans"]


class Comparator(StrEnum):
    EXACT = "exact"
    NORMALIZED = "normalized"
    DATE = "date"
    AMOUNT = "amount"
    SET = "set"
    BOOLEAN = "boolean"
    SPAN_OVERLAP = "span_overlap"


class RegistryError(ValueError):
    """A registry that cannot be used; the message names the file and the problem."""


class FieldMapping(BaseModel):
    """One scored field: where its gold lives and which schema fields' items predict it.

    Paths are dotted keys into a record's `gold` (a list on the way is walked element by element).
    Mode `fields`: `gold` is the value, `spans` the gold character spans. Modes `evidence_turns` and
    `entity_spans`: gold items come from the entry's `items`, kept when every `select` key matches
    (equal, or contained in a list).
    """

    model_config = ConfigDict(extra="forbid")

    schema_fields: list[str] = Field(default_factory=list)
    gold: str | None = None
    spans: str | None = None
    select: dict[str, str] = Field(default_factory=dict)
    compare: Comparator = Comparator.NORMALIZED
    attribute: str = DEFAULT_ATTRIBUTE  # the predicted item's value key (`value` absent: its evidence quote)
    day_first: bool = False  # dates: 01/02/2020 is 1 February
    split: str | None = None  # sets: separator between the gold value's members
    truthy: list[str] = Field(default_factory=lambda: ["yes", "true", "1"])  # booleans: gold values meaning yes


class DatasetEntry(BaseModel):
    """One dataset of the registry; `path` is resolved against the project root when relative."""

    model_config = ConfigDict(extra="forbid")

    name: str
    path: str
    # more labelled files of the same data (the same gold format): fitted on and reported beside `path` by
    # `extraction-assets calibrate` and the benchmark; the eval report scores `path`
    extra_paths: list[str] = Field(default_factory=list)
    schema_version: str
    document_kind: DocumentKind = "text"
    turns: Literal["none", "lines"] = "none"  # `lines`: one turn per line, `Speaker: text`
    mode: ScoringMode = "fields"
    items: str | None = None  # modes evidence_turns / entity_spans: path to the list of gold items
    item_spans: str = ""  # path inside a gold item to its spans ("" = the item is the span)
    description: str = ""
    fields: dict[str, FieldMapping]

    @field_validator("schema_version")
    @classmethod
    def _is_partition_key(cls, value: str) -> str:
        split_key(value)  # SchemaError (a ValueError) unless it is one
        return value

    @model_validator(mode="after")
    def _consistent(self) -> DatasetEntry:
        if not self.fields:
            raise ValueError("an entry needs at least one field")
        for name, mapping in self.fields.items():
            if not mapping.schema_fields:
                mapping.schema_fields = [name]
            if self.mode == "fields" and not mapping.gold:
                raise ValueError(f"field {name!r}: mode 'fields' needs a gold path")
            if mapping.compare == Comparator.SPAN_OVERLAP and self.mode == "fields" and not mapping.spans:
                raise ValueError(f"field {name!r}: span_overlap needs a spans path")
        if self.mode != "fields" and not self.items:
            raise ValueError(f"mode {self.mode!r} needs 'items', the path to the gold items")
        return self

    @property
    def schema_name(self) -> str:
        return split_key(self.schema_version)[0]

    def scores(self, schema_key: str) -> bool:
        """Whether this entry scores a schema version: any version of the schema its mapping was written for."""
        return schema_key.partition(KEY_SEPARATOR)[0] == self.schema_name

    def resolved_path(self, root: Path = PROJECT_DIR) -> Path:
        return _resolved(self.path, root)

    def labelled_paths(self, root: Path = PROJECT_DIR) -> list[Path]:
        """`path` and every extra path that exists (a machine may lack some)."""
        return [p for p in (_resolved(x, root) for x in [self.path, *self.extra_paths]) if p.is_file()]


def _resolved(path: str, root: Path) -> Path:
    found = Path(path).expanduser()
    return found if found.is_absolute() else (root / found).resolve()


class Registry(BaseModel):
    datasets: dict[str, DatasetEntry]

    def entry(self, name: str) -> DatasetEntry:
        try:
            return self.datasets[name]
        except KeyError:
            known = ", ".join(sorted(self.datasets)) or "none"
            raise RegistryError(f"no registry entry named {name!r}; entries: {known}") from None

    def entry_for_file(self, dataset: Path) -> DatasetEntry:
        """The entry named like the file's folder (`.../sroie/dev.jsonl` is `sroie`)."""
        folder = dataset.resolve().parent.name
        if folder not in self.datasets:
            known = ", ".join(sorted(self.datasets)) or "none"
            raise RegistryError(
                f"{dataset}: its folder {folder!r} is not a registry entry ({known}); name one with --registry-entry"
            )
        return self.datasets[folder]

    def for_schema(self, schema_key: str) -> list[DatasetEntry]:
        return [e for e in self.datasets.values() if e.scores(schema_key)]


def parse_registry(text: str, source: str = "<string>") -> Registry:
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        raise RegistryError(f"{source}: not valid YAML: {exc}") from exc
    datasets = raw.get("datasets") if isinstance(raw, dict) else None
    if not isinstance(datasets, dict):
        raise RegistryError(f"{source}: expected a mapping 'datasets: {{name: entry}}'")
    entries: dict[str, DatasetEntry] = {}
    for name, body in datasets.items():
        if not isinstance(body, dict):
            raise RegistryError(f"{source}: entry {name!r} must be a mapping")
        try:
            entries[str(name)] = DatasetEntry.model_validate({**body, "name": str(name)})
        except ValidationError as exc:
            raise RegistryError(f"{source}: entry {name!r}: {exc}") from exc
    return Registry(datasets=entries)


def load_registry(path: Path = DEFAULT_REGISTRY) -> Registry:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RegistryError(f"cannot read the registry {path}: {exc.strerror or exc}") from exc
    return parse_registry(text, source=str(path))


def available_entries(entries: list[DatasetEntry], root: Path = PROJECT_DIR) -> tuple[list[DatasetEntry], list[str]]:
    """Entries whose file exists, plus one message per entry skipped because its file does not."""
    found: list[DatasetEntry] = []
    messages: list[str] = []
    for entry in entries:
        path = entry.resolved_path(root)
        if path.is_file():
            found.append(entry)
        else:
            messages.append(f"dataset {entry.name!r} skipped: {path} does not exist")
    return found, messages
