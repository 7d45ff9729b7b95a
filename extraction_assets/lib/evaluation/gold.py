"""Gold files: one JSON object a line, `{"id", "text", "gold"}`, and dotted paths into `gold`.

A line that is not a valid record becomes a clear message and the rest of the file is still read.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError


class GoldRecord(BaseModel):
    id: str
    text: str
    gold: dict[str, Any]
    line: int = 0


class GoldSpan(BaseModel):
    """A gold character span `[start, end)` into the record's text, with the label it was read under."""

    start: int
    end: int
    label: str = ""


def read_gold(path: Path, limit: int | None = None) -> Iterator[GoldRecord | str]:
    """Records in file order, or a message naming the line for each line that is not one."""
    taken = 0
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if limit is not None and taken >= limit:
                return
            if not line.strip():
                continue
            taken += 1
            try:
                yield GoldRecord.model_validate({**json.loads(line), "line": number})
            except (json.JSONDecodeError, ValidationError, TypeError) as exc:
                first = str(exc).splitlines()[0]
                yield f"{path.name} line {number}: not a gold record ({type(exc).__name__}: {first})"


def count_records(path: Path, limit: int | None = None) -> int:
    with path.open(encoding="utf-8") as handle:
        total = sum(1 for line in handle if line.strip())
    return total if limit is None else min(total, limit)


def resolve(value: Any, path: str) -> list[Any]:
    """Every value at a dotted path; lists met on the way are walked element by element.

    `resolve({"a": [{"b": 1}, {"b": 2}]}, "a.b") == [1, 2]`; a missing key gives `[]`; the empty path
    gives the value itself.
    """
    current: list[Any] = [value]
    for key in [k for k in path.split(".") if k] if path else []:
        following: list[Any] = []
        for node in current:
            for element in node if isinstance(node, list) else [node]:
                if isinstance(element, dict) and key in element:
                    following.append(element[key])
        current = following
    flat: list[Any] = []
    for node in current:
        flat.extend(node if isinstance(node, list) else [node])
    return flat


def spans_at(value: Any, path: str, label: str = "") -> list[GoldSpan]:
    """The `{start, end}` objects at a path, as spans; anything else there is ignored."""
    spans = []
    for node in resolve(value, path):
        if isinstance(node, dict) and isinstance(node.get("start"), int) and isinstance(node.get("end"), int):
            spans.append(GoldSpan(start=node["start"], end=node["end"], label=label))
    return spans


def selected(item: Any, select: dict[str, str]) -> bool:
    """Whether a gold item matches every `select` key: equal to the value, or a list holding it."""
    if not isinstance(item, dict):
        return False
    for key, wanted in select.items():
        have = item.get(key)
        if not (have == wanted or (isinstance(have, list) and wanted in have)):
            return False
    return True
