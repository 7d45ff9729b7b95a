"""What every renderer of values people read shares: a change applied to every string of a JSON-like value (the
masked Markdown tables themselves are `pii.display.markdown_table`)."""

from __future__ import annotations

from collections.abc import Callable
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
