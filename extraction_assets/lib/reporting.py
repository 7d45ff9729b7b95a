"""Small renderers for previews people read in the Dagster UI and the terminal."""

from __future__ import annotations

from collections.abc import Sequence


def _cell(value: object, width: int) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= width else text[: width - 1] + "…"


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]], width: int = 80) -> str:
    """A Markdown table with cells flattened to one line, pipes escaped and long values cut."""
    if not rows:
        return "_none_"
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(v, width) for v in row) + " |" for row in rows]
    return "\n".join(lines)
