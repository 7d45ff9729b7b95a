"""Small renderers for previews people read in the Dagster UI and the terminal."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """A JSON-like value with `change` applied to every string in it (keys included), its shape kept."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [map_strings(v, change) for v in value]
    return value


def _cell(value: object, width: int, masked: Callable[[str], str]) -> str:
    text = "" if value is None else masked(str(value))
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]], width: int = 80) -> str:
    """A Markdown table with cells masked (`pii.masked`), flattened to one line, pipes escaped and long values cut."""
    if not rows:
        return "_none_"
    from extraction_assets.lib.pii.display import masked  # the detectors load with the first table, not the code

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v, width, masked) for v in row) + " |" for row in rows]
    return "\n".join(lines)
