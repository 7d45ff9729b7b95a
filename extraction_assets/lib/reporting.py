"""What every renderer of values people read shares: a change applied to every string of a JSON-like value, and
control characters made visible (the masked Markdown tables themselves are `pii.display.markdown_table`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

# Characters that act instead of showing: bidirectional controls (a right-to-left override in a title makes "pay 100"
# read "001 yap", or hides what follows) and the C0 and C1 controls but tab and newline (an escape sequence in a file
# name or a model's title clears or recolours a terminal).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _mark(found: re.Match[str]) -> str:
    return f"⟦U+{ord(found.group()):04X}⟧"


def visible_controls(text: str) -> str:
    """`text` with each control character replaced by a visible mark naming it: it neither acts nor hides, and a
    reader sees that it was there."""
    return _CONTROLS.sub(_mark, text) if _CONTROLS.search(text) else text


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """A JSON-like value with `change` applied to every string in it (keys included), its shape kept."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(k, change): map_strings(v, change) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [map_strings(v, change) for v in value]
    return value
