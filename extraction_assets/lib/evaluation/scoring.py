"""Score one document's predictions against its gold record, in the registry entry's mode.

- `fields`: one value per field. A correct prediction is a true positive; a wrong or unexpected one a
  false positive; a gold value not predicted correctly a false negative (so a wrong value is both).
  Sets count member by member; booleans count "yes" as the positive class; `span_overlap` asks
  whether the item's evidence overlaps a gold span.
- `evidence_turns`: gold items are not exhaustive, so only recall is defined: a gold item is found
  when an item of a mapped type has evidence overlapping the item's gold evidence.
- `entity_spans`: predicted and gold spans matched one to one by `spans` (per type).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from extraction_assets.lib.evaluation.comparators import (
    is_truthy,
    normalize_text,
    set_members,
    spans_overlap,
    values_match,
)
from extraction_assets.lib.evaluation.gold import GoldRecord, GoldSpan, resolve, selected, spans_at
from extraction_assets.lib.evaluation.metrics import FieldCounts
from extraction_assets.lib.evaluation.registry import DEFAULT_ATTRIBUTE, Comparator, DatasetEntry, FieldMapping
from extraction_assets.lib.evaluation.spans import Span, match_spans

SPAN_MIN_IOU = 0.5  # entity spans: the matching rule `spans` documents


class Prediction(BaseModel):
    """One predicted item (or PII detection), reduced to what scoring needs; spans are raw-text offsets."""

    field: str
    value: dict[str, Any] = Field(default_factory=dict)
    quote: str = ""
    confidence: float
    spans: list[tuple[int, int]] = Field(default_factory=list)
    status: str = "draft"
    probability: float | None = None  # the calibrated probability of being right, where the version has one
    features: dict[str, float] = Field(default_factory=dict)  # the evidence features it was computed from
    reasons: list[str] = Field(default_factory=list)  # its review reasons

    @property
    def certainty(self) -> float:
        """What the item states about being right: its probability, else its confidence."""
        return self.confidence if self.probability is None else self.probability

    def value_for(self, attribute: str) -> Any:
        """The item's value under `attribute`; an item without a `value` stands for its evidence quote."""
        value = self.value.get(attribute)
        if (value is None or value == "") and attribute == DEFAULT_ATTRIBUTE:
            return self.quote
        return value


class Mark(BaseModel):
    """A highlighted span in the report: which field, and for predictions whether it was right."""

    start: int
    end: int
    label: str
    correct: bool | None = None
    detail: str = ""


class FieldOutcome(BaseModel):
    """What a reviewer sees for one field of one document."""

    field: str
    gold: list[str]
    predicted: list[str]
    counts: FieldCounts


class Verdict(BaseModel):
    """A prediction the gold can judge, under the registry field that judged it."""

    field: str
    prediction: Prediction
    correct: bool


class Placement(BaseModel):
    """Mode `evidence_turns`: whether an item landed inside gold evidence of its field, and the chance that an item
    on a random turn of the same document would (the share of its turns the gold evidence covers)."""

    field: str
    hit: bool
    chance: float


class DocumentScore(BaseModel):
    counts: dict[str, FieldCounts]
    calibration: list[tuple[float, bool]] = Field(default_factory=list)
    verdicts: list[Verdict] = Field(default_factory=list)
    placements: list[Placement] = Field(default_factory=list)
    gold_marks: list[Mark] = Field(default_factory=list)
    predicted_marks: list[Mark] = Field(default_factory=list)
    outcomes: list[FieldOutcome] = Field(default_factory=list)


def _present(value: Any) -> bool:
    return value not in (None, "", [], {})


def _is_negative(value: Any) -> bool:
    return value is False or normalize_text(value) in {"", "no", "false", "none", "0"}


def _score_field(name: str, mapping: FieldMapping, record: GoldRecord, predictions: list[Prediction]) -> DocumentScore:
    gold_values = [v for v in resolve(record.gold, mapping.gold or "") if _present(v)]
    gold_spans = spans_at(record.gold, mapping.spans, name) if mapping.spans else []
    preds = [p for p in predictions if p.field in mapping.schema_fields]
    values = [p.value_for(mapping.attribute) for p in preds]
    compare = mapping.compare
    if compare == Comparator.SET:
        gold_set = {m for v in gold_values for m in set_members(v, mapping.split)}
        pred_sets = [set(set_members(v, mapping.split)) for v in values]
        predicted = set().union(*pred_sets) if pred_sets else set()
        counts = FieldCounts(tp=len(predicted & gold_set), fp=len(predicted - gold_set), fn=len(gold_set - predicted))
        verdicts = [bool(members & gold_set) for members in pred_sets]
    elif compare == Comparator.BOOLEAN:
        gold_yes = any(is_truthy(v, mapping.truthy) for v in gold_values)
        said = [not _is_negative(v) for v in values]
        verdicts = [yes == gold_yes for yes in said]
        said_yes = any(said)
        counts = FieldCounts(
            tp=int(gold_yes and said_yes), fp=int(said_yes and not gold_yes), fn=int(gold_yes and not said_yes)
        )
    elif compare == Comparator.SPAN_OVERLAP:
        verdicts = [any(spans_overlap(s, (g.start, g.end)) for s in p.spans for g in gold_spans) for p in preds]
        counts = _scalar_counts(bool(gold_spans), bool(preds), any(verdicts))
    else:
        verdicts = [any(values_match(v, g, mapping) for g in gold_values) for v in values]
        counts = _scalar_counts(bool(gold_values), bool(preds), any(verdicts))
    return DocumentScore(
        counts={name: counts},
        calibration=[(p.certainty, ok) for p, ok in zip(preds, verdicts, strict=True)],
        verdicts=[Verdict(field=name, prediction=p, correct=ok) for p, ok in zip(preds, verdicts, strict=True)],
        gold_marks=[Mark(start=s.start, end=s.end, label=name) for s in gold_spans],
        predicted_marks=_marks(name, preds, verdicts, mapping.attribute),
        outcomes=[
            FieldOutcome(
                field=name, gold=[str(v) for v in gold_values], predicted=[str(v) for v in values], counts=counts
            )
        ],
    )


def _scalar_counts(gold_present: bool, predicted: bool, correct: bool) -> FieldCounts:
    return FieldCounts(tp=int(correct), fp=int(predicted and not correct), fn=int(gold_present and not correct))


def _marks(name: str, preds: list[Prediction], verdicts: Sequence[bool | None], attribute: str) -> list[Mark]:
    marks = []
    for pred, ok in zip(preds, verdicts, strict=True):
        detail = f"{pred.value_for(attribute)!s:.200} (confidence {pred.confidence:.2f}, {pred.status})"
        marks += [Mark(start=s, end=e, label=name, correct=ok, detail=detail) for s, e in pred.spans]
    return marks


def _gold_items(entry: DatasetEntry, record: GoldRecord, name: str, mapping: FieldMapping) -> list[list[GoldSpan]]:
    items = [item for item in resolve(record.gold, entry.items or "") if selected(item, mapping.select)]
    return [spans_at(item, entry.item_spans, name) for item in items]


def _score_evidence(
    name: str, mapping: FieldMapping, entry: DatasetEntry, record: GoldRecord, predictions: list[Prediction]
) -> DocumentScore:
    gold_items = _gold_items(entry, record, name, mapping)
    preds = [p for p in predictions if p.field in mapping.schema_fields]
    found = [
        any(spans_overlap(s, (g.start, g.end)) for g in spans for p in preds for s in p.spans) for spans in gold_items
    ]
    counts = FieldCounts(tp=sum(found), fp=None, fn=len(found) - sum(found))
    # an item outside every gold item's evidence is not judged: the gold is not exhaustive
    verdicts: list[bool | None] = [
        any(spans_overlap(s, (g.start, g.end)) for s in p.spans for spans in gold_items for g in spans) or None
        for p in preds
    ]
    chance = _turn_coverage(record.text, [(g.start, g.end) for spans in gold_items for g in spans])
    return DocumentScore(
        counts={name: counts},
        placements=[Placement(field=name, hit=bool(ok), chance=chance) for ok in verdicts],
        gold_marks=[Mark(start=g.start, end=g.end, label=name) for spans in gold_items for g in spans],
        predicted_marks=_marks(name, preds, verdicts, mapping.attribute),
        outcomes=[
            FieldOutcome(
                field=name,
                gold=[f"{len(gold_items)} gold items, {sum(found)} found"],
                predicted=[p.quote[:120] for p in preds],
                counts=counts,
            )
        ],
    )


def _turn_coverage(text: str, gold: list[tuple[int, int]]) -> float:
    """The share of the document's non-empty lines (its turns) that overlap a gold span."""
    lines, pos = [], 0
    for line in text.split("\n"):
        if line.strip():
            lines.append((pos, pos + len(line)))
        pos += len(line) + 1
    inside = sum(1 for line in lines if any(spans_overlap(line, g) for g in gold))
    return inside / len(lines) if lines else 0.0


def _score_entities(
    name: str, mapping: FieldMapping, entry: DatasetEntry, record: GoldRecord, predictions: list[Prediction]
) -> DocumentScore:
    gold = [Span(name, g.start, g.end) for spans in _gold_items(entry, record, name, mapping) for g in spans]
    found = [(p, Span(name, s, e)) for p in predictions if p.field in mapping.schema_fields for s, e in p.spans]
    pairs = match_spans(gold, [span for _, span in found], SPAN_MIN_IOU)
    hit = {pi for _, pi in pairs}
    counts = FieldCounts(tp=len(pairs), fp=len(found) - len(pairs), fn=len(gold) - len(pairs))
    return DocumentScore(
        counts={name: counts},
        calibration=[(p.confidence, i in hit) for i, (p, _) in enumerate(found)],
        gold_marks=[Mark(start=g.start, end=g.end, label=name) for g in gold],
        predicted_marks=[
            Mark(start=s.start, end=s.end, label=name, correct=i in hit, detail=f"confidence {p.confidence:.2f}")
            for i, (p, s) in enumerate(found)
        ],
        outcomes=[
            FieldOutcome(
                field=name,
                gold=[record.text[g.start : g.end] for g in gold],
                predicted=[record.text[s.start : s.end] for _, s in found],
                counts=counts,
            )
        ],
    )


def score_document(entry: DatasetEntry, record: GoldRecord, predictions: list[Prediction]) -> DocumentScore:
    """Every registry field of one document, merged into one score."""
    total = DocumentScore(counts={})
    for name, mapping in entry.fields.items():
        if entry.mode == "fields":
            part = _score_field(name, mapping, record, predictions)
        elif entry.mode == "evidence_turns":
            part = _score_evidence(name, mapping, entry, record, predictions)
        else:
            part = _score_entities(name, mapping, entry, record, predictions)
        total.counts.update(part.counts)
        total.calibration += part.calibration
        total.verdicts += part.verdicts
        total.placements += part.placements
        total.gold_marks += part.gold_marks
        total.predicted_marks += part.predicted_marks
        total.outcomes += part.outcomes
    return total
