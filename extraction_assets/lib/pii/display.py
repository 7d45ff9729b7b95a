"""The last guard before text reaches a place a person looks (UI metadata, run logs, printed lines, dead letters).

What the pipeline shows is built from scrubbed text already; this masks whatever a path, a reason, a person's
correction or a future change might still carry, with every kind the scrubber knows. Placeholders are left as
they are, so text that is already scrubbed comes back unchanged."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from extraction_assets.lib.pii.scrubber import scrub
from extraction_assets.lib.reporting import map_strings, visible_controls


def masked(text: str) -> str:
    """`text` with every detected value replaced by its placeholder."""
    return scrub(text).text if text else text


def masked_value(value: Any) -> Any:
    """A JSON-like value with every string in it `masked` (keys included), its shape kept."""
    return map_strings(value, masked)


@functools.lru_cache(maxsize=4096)
def _masked_cell(text: str) -> str:
    """A preview cell's text masked, kept for the cells shown most recently: every pass shows each version's preview
    again (the same statuses, types and titles, from scrubbed text), and a watch shows it pass after pass."""
    return visible_controls(masked(text))


def _cell(value: object, width: int) -> str:
    text = "" if value is None else _masked_cell(str(value))
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]], width: int = 80) -> str:
    """A Markdown table for previews people read (the Dagster UI, the terminal): cells masked and their controls made
    visible, flattened to one line, pipes escaped and long values cut."""
    if not rows:
        return "_none_"
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v, width) for v in row) + " |" for row in rows]
    return "\n".join(lines)
