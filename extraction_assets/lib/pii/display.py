"""The last guard before text reaches a place a person looks (UI metadata, run logs, printed lines).

What the pipeline shows is built from scrubbed text already; this masks whatever a path, a reason, a person's
correction or a future change might still carry, with every kind the scrubber knows. Placeholders are left as
they are, so text that is already scrubbed comes back unchanged."""

from __future__ import annotations

from typing import Any

from extraction_assets.lib.pii.scrubber import scrub


def masked(text: str) -> str:
    """`text` with every detected value replaced by its placeholder."""
    return scrub(text).text if text else text


def masked_value(value: Any) -> Any:
    """A JSON-like value with every string in it `masked` (keys included), its shape kept."""
    if isinstance(value, str):
        return masked(value)
    if isinstance(value, dict):
        return {masked_value(k): masked_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [masked_value(v) for v in value]
    return value
