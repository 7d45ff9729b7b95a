"""What the packs of shape ``fields`` share: how sure each way of finding a value is, and the candidate it makes.

Seed 003 weighs a value by how it was found: an exact phrase or a positional hit counts in full, a
fallback guess x0.7. That factor is mapped into the schema's heuristic band, so a guess lands under
the usual 0.75 review threshold and a sure hit at the top of the band (never 1.0).
"""

from __future__ import annotations

from typing import Any

from extraction_assets.lib.heuristics.segments import make_title
from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["FULL", "GUESS", "PARTIAL", "band_confidence", "field_candidate"]

FULL = 1.0  # a trigger phrase, a label or a positional window found it
PARTIAL = 0.85  # a weaker cue (a trade word, the first date of the header)
GUESS = 0.7  # a fallback with no cue at all


def band_confidence(schema: SchemaVersion, factor: float) -> float:
    band = schema.heuristic_band
    return round(band.low + (band.high - band.low) * factor, 4)


def field_candidate(
    schema: SchemaVersion,
    field: str,
    value: dict[str, Any],
    quote: str,
    start: int,
    factor: float,
    shown: str,
    features: dict[str, float] | None = None,
) -> CandidateItem:
    """One field's value; ``quote`` is the verbatim source slice starting at ``start``; ``features`` are the evidence
    its calibration weighs (`lib/calibration`)."""
    return CandidateItem(
        item_type=field,
        title=make_title(f"{field}: {shown}"),
        evidence_span=quote,
        confidence=band_confidence(schema, factor),
        span_hint=start,
        value=value,
        features=features or {},
    )
