"""Correction forms per field of the schema: typed inputs, and what a person typed read back as typed values."""

from __future__ import annotations

import pytest

from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.review.corrections import InvalidCorrection
from extraction_assets.lib.review.forms import form_fields, read_form
from extraction_assets.lib.settings import DEFAULT_PROMPTS


def _fields(version: str, field: str, value: dict) -> dict:
    schema = load_schema(DEFAULT_PROMPTS, version)
    return {f.key: f for f in form_fields(schema.field(field), value)}


def test_each_declared_field_gets_an_input_of_its_type_and_other_keys_one_of_theirs() -> None:
    risk = _fields("pulse@v1", "risk", {"severity": "high", "matched_keywords": ["delay"], "turn_id": "t1"})
    assert (risk["severity"].kind, risk["severity"].options) == ("choice", ["low", "medium", "high", "critical"])
    assert (risk["severity"].shown, risk["owner_name"].kind, risk["matched_keywords"].kind) == ("high", "text", "list")
    total = _fields("receipt@v1", "total", {"value": 5.2, "as_printed": "5.20"})
    assert (total["value"].kind, total["value"].shown, total["as_printed"].kind) == ("number", "5.2", "text")
    clause = _fields("contract@v1", "termination_clause", {"value": True, "for_convenience": False})
    assert clause["for_convenience"].kind == "boolean" and clause["for_convenience"].shown == "false"
    date = _fields("receipt@v1", "date", {"value": "2026-02-14"})
    assert date["value"].kind == "date"


def test_only_what_a_person_changed_is_read_back_and_typed() -> None:
    fields = list(_fields("receipt@v1", "total", {"value": 5.2, "as_printed": "5.20"}).values())
    assert read_form(fields, {"field.value": "1,234.50", "field.as_printed": "5.20"}) == {"value": 1234.5}
    clause = list(_fields("contract@v1", "termination_clause", {"value": True, "for_convenience": False}).values())
    assert read_form(clause, {"field.for_convenience": "true"}) == {"for_convenience": True}
    risk = list(_fields("pulse@v1", "risk", {"severity": "high"}).values())
    assert read_form(risk, {"field.severity": "high", "field.owner_name": "Linh"}) == {"owner_name": "Linh"}
    with pytest.raises(InvalidCorrection, match="severity 'doom' is not one of"):
        read_form(risk, {"field.severity": "doom"})
    date = list(_fields("receipt@v1", "date", {"value": "2026-02-14"}).values())
    with pytest.raises(InvalidCorrection, match="is not a date"):
        read_form(date, {"field.value": "14 Feb"})
