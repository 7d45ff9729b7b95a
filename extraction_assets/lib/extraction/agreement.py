"""Confidence from agreement: where the heuristic pack and the model both answer a field, their consistency
says more about the value than the model's own score does.

Only grounded answers count: a value whose quote is not in the document is no second opinion. Agreement (the
pack's value is grounded and the model's is the same normalized value) puts the model's value at the top of the
model band, with the pack's quote as further evidence (or as the evidence, when the model's quote was invented) and
the pack's further attributes of the value (a termination clause's `for_convenience`: a fields answer holds the
value only).
Disagreement between two grounded values keeps the value the mode chose but sends it to review (rule
`contradiction`) with both values named and both quotes stored as evidence; against an ungrounded model answer
the pack's value stands. Shape `fields` only: items have no one value per field to compare.
"""

from __future__ import annotations

from collections.abc import Sequence

from extraction_assets.lib.extraction.chunk_merge import value_key
from extraction_assets.lib.extraction.grounding import ground
from extraction_assets.lib.models import CandidateItem
from extraction_assets.lib.schemas import SchemaVersion


def _best(candidates: Sequence[CandidateItem], field: str) -> CandidateItem | None:
    return max((c for c in candidates if c.item_type == field), key=lambda c: c.confidence, default=None)


def _grounded(candidate: CandidateItem, text: str) -> bool:
    return ground(candidate.evidence_span, text, candidate.span_hint) is not None


def with_agreement(
    schema: SchemaVersion,
    chosen: Sequence[CandidateItem],
    heuristic: Sequence[CandidateItem],
    model: Sequence[CandidateItem],
    text: str,
) -> list[CandidateItem]:
    """`chosen` (one candidate per field) with each field both extractors answered in `text` settled by their
    agreement."""
    if schema.shape != "fields":
        return list(chosen)
    settled = []
    for candidate in chosen:
        h, m = _best(heuristic, candidate.item_type), _best(model, candidate.item_type)
        if h is None or m is None or not _grounded(h, text):
            settled.append(candidate)
        elif value_key(h.value) == value_key(m.value):
            quoted = m if _grounded(m, text) else m.model_copy(update={"evidence_span": h.evidence_span})
            spans = dict.fromkeys([*m.more_evidence, h.evidence_span, *h.more_evidence])
            settled.append(
                quoted.model_copy(
                    update={
                        "value": {**h.value, **m.value},  # the pack's attributes a model's answer has no room for
                        "confidence": schema.model_band.high,
                        "more_evidence": [e for e in spans if e and e != quoted.evidence_span],
                        "extracted_by": "model",
                    }
                )
            )
        elif not _grounded(m, text):
            settled.append(h.model_copy(update={"extracted_by": "heuristic"}))  # keeps the heuristic band
        else:
            other = m if candidate.extracted_by == "heuristic" else h
            settled.append(
                candidate.model_copy(
                    update={
                        "contradiction": f"the heuristic pack says {h.value.get('value')!r}, "
                        f"the model says {m.value.get('value')!r}",
                        "more_evidence": list(dict.fromkeys([*candidate.more_evidence, other.evidence_span])),
                    }
                )
            )
    return settled
