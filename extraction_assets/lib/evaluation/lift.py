"""How sure a lift over chance is: a percentile bootstrap over documents.

Mode `evidence_turns` pools a dataset's items into one lift (hits / the chance the same items would have had on
random turns of their documents). On meeting transcripts that figure rests on a few dozen items and a handful of
hits, so on its own it says little: the interval says how far it could move with other meetings of the same
kind. Documents are resampled whole (their items are not independent: one meeting's items share its gold), with a
fixed seed, so the same placements always give the same interval.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from pydantic import BaseModel

__all__ = ["LIFT_LEVEL", "LIFT_RESAMPLES", "DocumentPlacement", "lift_interval", "pooled_lift"]

LIFT_RESAMPLES = 2000
LIFT_LEVEL = 0.95
_SEED = 42


class DocumentPlacement(BaseModel):
    """One document's judged items: how many, how many landed inside gold evidence of their field, and the sum of
    their chances (each item's chance is the share of its document's turns that evidence covers)."""

    items: int
    hits: int
    chance: float


def pooled_lift(documents: Sequence[DocumentPlacement]) -> float | None:
    """Hits over expected hits: 1 is no better than items on random turns; None where nothing could hit."""
    chance = sum(d.chance for d in documents)
    return sum(d.hits for d in documents) / chance if chance > 0 else None


def lift_interval(
    documents: Sequence[DocumentPlacement], resamples: int = LIFT_RESAMPLES, level: float = LIFT_LEVEL
) -> tuple[float, float] | None:
    """The central `level` interval of the pooled lift over `resamples` bootstrap draws of whole documents.

    A draw whose items could hit nowhere (no chance at all) has no lift and is skipped; None when no document has
    any chance (nothing to judge) or fewer than half the draws have a lift."""
    if not any(d.chance > 0 for d in documents):
        return None
    rng = random.Random(_SEED)
    count = len(documents)
    lifts = []
    for _ in range(resamples):
        draw = [documents[rng.randrange(count)] for _ in range(count)]
        lift = pooled_lift(draw)
        if lift is not None:
            lifts.append(lift)
    if len(lifts) < resamples / 2:
        return None
    lifts.sort()
    tail = (1 - level) / 2
    low = lifts[int(tail * (len(lifts) - 1))]
    high = lifts[round((1 - tail) * (len(lifts) - 1))]
    return round(low, 2), round(high, 2)
