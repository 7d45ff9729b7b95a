"""The dataset registry: valid entries, clear errors, missing files skipped with a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.evaluation import (
    DEFAULT_REGISTRY,
    Comparator,
    RegistryError,
    available_entries,
    load_registry,
    parse_registry,
)

VALID = """
datasets:
  receipts:
    path: data/receipts/dev.jsonl
    schema_version: receipt@v1
    fields:
      total: {gold: total.value, compare: amount}
      date: {gold: date.value, spans: date.spans, compare: date, day_first: true}
      parties: {schema_fields: [party_a, party_b], gold: parties, compare: set, split: ";"}
  meetings:
    path: /somewhere/else/meetings.jsonl
    schema_version: pulse@v1
    document_kind: transcript
    turns: lines
    mode: evidence_turns
    items: items
    item_spans: evidence
    fields:
      decision: {select: {kinds: decision}}
"""


def test_a_valid_registry_parses_with_defaults() -> None:
    registry = parse_registry(VALID)
    receipts = registry.entry("receipts")
    assert receipts.fields["total"].compare == Comparator.AMOUNT
    assert receipts.fields["total"].schema_fields == ["total"]  # defaults to the reported name
    assert receipts.fields["parties"].schema_fields == ["party_a", "party_b"]
    assert receipts.fields["date"].day_first is True
    assert receipts.document_kind == "text" and receipts.mode == "fields"
    assert [e.name for e in registry.for_schema("receipt@v2")] == ["receipts"]  # any version of the schema
    assert registry.for_schema("contract@v1") == []
    root = Path("/project")
    assert receipts.resolved_path(root) == Path("/project/data/receipts/dev.jsonl")
    assert registry.entry("meetings").resolved_path(root) == Path("/somewhere/else/meetings.jsonl")


def test_entry_is_found_by_the_files_folder(tmp_path: Path) -> None:
    registry = parse_registry(VALID)
    assert registry.entry_for_file(tmp_path / "receipts" / "anything.jsonl").name == "receipts"
    with pytest.raises(RegistryError, match="--registry-entry"):
        registry.entry_for_file(tmp_path / "unknown" / "x.jsonl")
    with pytest.raises(RegistryError, match="no registry entry named 'nope'"):
        registry.entry("nope")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("datasets: [1, 2]", "expected a mapping"),
        ("datasets: {a: {path: x, schema_version: receipt, fields: {t: {gold: t}}}}", "schema@version"),
        ("datasets: {a: {path: x, schema_version: r@v1, fields: {t: {compare: amount}}}}", "needs a gold path"),
        ("datasets: {a: {path: x, schema_version: r@v1, fields: {t: {gold: t, compare: fuzzy}}}}", "compare"),
        ("datasets: {a: {path: x, schema_version: r@v1, fields: {t: {gold: t, colour: red}}}}", "colour"),
        ("datasets: {a: {path: x, schema_version: r@v1, mode: entity_spans, fields: {t: {}}}}", "needs 'items'"),
        ("datasets: {a: {path: x, schema_version: r@v1, fields: {}}}", "at least one field"),
        ("datasets: {a: {path: x, schema_version: r@v1, fields: {t: {gold: t, compare: span_overlap}}}}", "spans"),
        ("datasets: {a: 3}", "must be a mapping"),
        ("datasets: {a: [unclosed", "not valid YAML"),
    ],
)
def test_invalid_registries_name_the_problem(text: str, problem: str) -> None:
    with pytest.raises(RegistryError, match=problem):
        parse_registry(text, source="reg.yaml")


def test_missing_registry_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="cannot read the registry"):
        load_registry(tmp_path / "absent.yaml")


def test_entries_whose_file_is_missing_are_skipped_with_a_message(tmp_path: Path) -> None:
    (tmp_path / "data" / "receipts").mkdir(parents=True)
    (tmp_path / "data" / "receipts" / "dev.jsonl").write_text("", encoding="utf-8")
    registry = parse_registry(VALID)
    found, messages = available_entries(list(registry.datasets.values()), root=tmp_path)
    assert [e.name for e in found] == ["receipts"]
    assert len(messages) == 1 and "meetings" in messages[0] and "does not exist" in messages[0]


def test_the_project_registry_is_valid() -> None:
    registry = load_registry(DEFAULT_REGISTRY)
    assert registry.datasets
    for entry in registry.datasets.values():
        assert entry.fields and "@" in entry.schema_version
