"""One document's answer from its chunks' answers: the best grounded value per field, items once each.

Every candidate gets a `span_hint` in the whole scrubbed text (its chunk's offset plus where its quote sits
in the chunk), so grounding finds the occurrence the chunk saw. Shape `fields`: the value whose quote grounds
best in its chunk (exact before normalized before fuzzy), then the most confident, wins; the other chunks'
quotes of the same value become further evidence; a different grounded value makes the field a
contradiction (review, with both values and both quotes as evidence). Shape `records`: one record per module,
the best grounded, with empty attributes filled from the other chunks' records. Shape `items`: a quote seen in
two overlapping chunks is one item (by type and normalized quote); the item cap applies afterwards, in grounding.
Ties go to the earlier chunk, whatever order the answers came in (chunks are asked concurrently).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from extraction_assets.lib.extraction.chunking import Chunk
from extraction_assets.lib.extraction.grounding import ground
from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.schemas import SchemaVersion

_SPACES = re.compile(r"\s+")
_STRENGTH_RANK = {"strong": 3, "medium": 2, "weak": 1}


def normalized(text: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def value_key(value: dict[str, Any]) -> str:
    """A field value compared loosely: text by normalized form, anything else by its JSON."""
    inner = value.get("value", value)
    return normalized(inner) if isinstance(inner, str) else json.dumps(inner, sort_keys=True, default=str)


def _placed(chunk: Chunk, candidate: CandidateItem) -> tuple[CandidateItem, int]:
    """The candidate with a hint into the whole text, and how well its quote grounds in its chunk (0: not at all)."""
    located = ground(candidate.evidence_span, chunk.text) if candidate.evidence_span.strip() else None
    offset = located.start if located else len(chunk.text) // 2
    rank = _STRENGTH_RANK[located.strength] if located else 0
    return candidate.model_copy(update={"span_hint": chunk.start + offset}), rank


def merge_chunk_candidates(
    schema: SchemaVersion, answers: Sequence[tuple[Chunk, Sequence[CandidateItem]]]
) -> list[CandidateItem]:
    in_order = sorted(answers, key=lambda answer: answer[0].index)  # however the chunks' answers arrived
    placed = [(chunk.index, *_placed(chunk, c)) for chunk, found in in_order for c in found]
    if schema.shape == "fields":
        return [_merge_field(name, placed) for name in dict.fromkeys(c.item_type for _, c, _ in placed)]
    if schema.shape == "records":
        return [_merge_record(name, placed) for name in dict.fromkeys(c.item_type for _, c, _ in placed)]
    best: dict[tuple[str, str], CandidateItem] = {}
    for _, candidate, _ in placed:
        identity = (candidate.item_type, candidate.key or normalized(candidate.evidence_span))
        if identity not in best or best[identity].confidence < candidate.confidence:
            best[identity] = candidate
    return list(best.values())


def _merge_field(name: str, placed: list[tuple[int, CandidateItem, int]]) -> CandidateItem:
    ranked = sorted((p for p in placed if p[1].item_type == name), key=lambda p: (-p[2], -p[1].confidence, p[0]))
    index, winner, _ = ranked[0]
    agreeing = [c for _, c, rank in ranked[1:] if rank and value_key(c.value) == value_key(winner.value)]
    disagreeing = [(i, c) for i, c, rank in ranked[1:] if rank and value_key(c.value) != value_key(winner.value)]
    spans = [c.evidence_span for c in agreeing] + [c.evidence_span for _, c in disagreeing]
    update: dict[str, Any] = {"more_evidence": list(dict.fromkeys([*winner.more_evidence, *spans]))}
    if disagreeing:
        others = "; ".join(f"{c.value.get('value')!r} (part {i + 1})" for i, c in disagreeing)
        update["contradiction"] = (
            f"parts of the document disagree: {winner.value.get('value')!r} (part {index + 1}) vs {others}"
        )
    return winner.model_copy(update=update)


def _merge_record(module: str, placed: list[tuple[int, CandidateItem, int]]) -> CandidateItem:
    """One record per module: the best grounded one, its empty attributes filled from the other chunks' records
    (a long thread names the amount in one part and the due date in another), their quotes as further evidence."""
    ranked = sorted((p for p in placed if p[1].item_type == module), key=lambda p: (-p[2], -p[1].confidence, p[0]))
    winner = ranked[0][1]
    value = dict(winner.value)
    for _, other, _ in ranked[1:]:
        for key, filled in other.value.items():
            if value.get(key) in (None, "", []) and filled not in (None, "", []):
                value[key] = filled
    spans = [c.evidence_span for _, c, rank in ranked[1:] if rank]
    return winner.model_copy(
        update={"value": value, "more_evidence": list(dict.fromkeys([*winner.more_evidence, *spans]))}
    )
