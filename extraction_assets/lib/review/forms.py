"""A correction form per field of the schema: one typed input per attribute (text, number, date, a choice of the
enum's options, yes/no, a list one member a line), and the form's strings read back into typed values.

The review page draws what `form_fields` returns and reads what a person sent with `read_form`, so nobody edits raw
JSON; the values still go through `corrections.apply_changes`, whose type and enum checks decide.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel

from extraction_assets.lib.review.corrections import InvalidCorrection
from extraction_assets.lib.schemas import AttributeSpec, FieldSpec

InputKind = Literal["text", "number", "integer", "date", "choice", "boolean", "list", "json"]
PREFIX = "field."  # a typed input's form name is PREFIX + the value's key
_KINDS: dict[str, InputKind] = {
    "string": "text",
    "number": "number",
    "integer": "integer",
    "date": "date",
    "enum": "choice",
    "boolean": "boolean",
    "list": "list",
    "object": "json",
}
_THOUSANDS = re.compile(r"(?<=\d)[,\s_](?=\d{3}\b)")


class FormField(BaseModel):
    """One input of a correction form."""

    key: str  # the value's key (`value` for a single-value field)
    label: str
    kind: InputKind
    options: list[str] = []
    shown: str  # the current value as the input holds it
    description: str = ""

    @property
    def name(self) -> str:
        return PREFIX + self.key


def _shown(value: Any, kind: InputKind) -> str:
    if value is None:
        return ""
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "list" and isinstance(value, list):
        return "\n".join(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value)
    if kind == "json" or isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return str(value)


def _field(key: str, label: str, spec: AttributeSpec | FieldSpec, value: Any) -> FormField:
    kind: InputKind = "choice" if spec.enum_options is not None else _KINDS.get(spec.type, "text")
    return FormField(
        key=key,
        label=label,
        kind=kind,
        options=list(spec.enum_options or []),
        shown=_shown(value, kind),
        description=spec.description,
    )


def _inferred(key: str, value: Any) -> FormField:
    """An input for a key the schema does not declare (an extractor's `as_printed`, a clause's `for_convenience`),
    typed by the value it holds."""
    kind: InputKind = "text"
    if isinstance(value, bool):
        kind = "boolean"
    elif isinstance(value, int | float):
        kind = "number"
    elif isinstance(value, list):
        kind = "list" if all(isinstance(v, str) for v in value) else "json"
    elif isinstance(value, dict):
        kind = "json"
    return FormField(key=key, label=key, kind=kind, shown=_shown(value, kind))


def form_fields(spec: FieldSpec | None, value: Mapping[str, Any]) -> list[FormField]:
    """The inputs correcting an item of this field: one per declared attribute (or the single value's), then one per
    other key the value holds, typed by what it holds."""
    if spec is None or (spec.type == "object" and not spec.attributes and "value" not in value):
        declared: list[FormField] = []
    elif spec.attributes:
        declared = [_field(name, name, attr, value.get(name)) for name, attr in spec.attributes.items()]
    else:
        declared = [_field("value", spec.name, spec, value.get("value"))]
    keys = {f.key for f in declared}
    return declared + [_inferred(k, v) for k, v in sorted(value.items()) if k not in keys]


def untouched_keys(fields: list[FormField], value: Mapping[str, Any]) -> dict[str, Any]:
    """What the value holds beside the form's inputs (kept as it is by a correction), shown for reference."""
    keys = {f.key for f in fields}
    return {k: v for k, v in sorted(value.items()) if k not in keys}


def _number(text: str, integer: bool) -> int | float:
    cleaned = _THOUSANDS.sub("", text.strip())
    try:
        number = float(cleaned)
    except ValueError:
        raise ValueError("is not a number") from None
    if integer:
        if not number.is_integer():
            raise ValueError("is not a whole number")
        return int(number)
    return number


def _typed(field: FormField, text: str) -> Any:
    """One input's string as the value it stands for; an empty input is null."""
    if field.kind == "list":
        return [line.strip() for line in text.splitlines() if line.strip()] or None
    text = text.strip()
    if not text:
        return None
    if field.kind in ("number", "integer"):
        return _number(text, field.kind == "integer")
    if field.kind == "date":
        try:
            return date.fromisoformat(text).isoformat()
        except ValueError:
            raise ValueError("is not a date (YYYY-MM-DD)") from None
    if field.kind == "choice":
        if text not in field.options:
            raise ValueError(f"is not one of {field.options}")
        return text
    if field.kind == "boolean":
        if text not in ("true", "false"):
            raise ValueError("is not yes or no")
        return text == "true"
    if field.kind == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text  # a plain string typed where JSON was expected is that string
    return text


def read_form(fields: list[FormField], form: Mapping[str, str]) -> dict[str, Any]:
    """The typed values of the inputs the form sent (`PREFIX + key`) that differ from what they showed (an input
    left as it was changes nothing, so a value's absent keys stay absent); a value that does not read as its type
    is refused with the field's name, so the person can fix it."""
    values: dict[str, Any] = {}
    problems = []
    for field in fields:
        if field.name not in form or form[field.name].strip() == field.shown.strip():
            continue
        try:
            values[field.key] = _typed(field, form[field.name])
        except ValueError as exc:
            problems.append(f"{field.label} {form[field.name]!r} {exc}")
    if problems:
        raise InvalidCorrection("; ".join(problems))
    return values
