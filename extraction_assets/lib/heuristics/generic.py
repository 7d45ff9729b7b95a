"""Generic pack for user-defined schemas: a new prompt file is extracted offline without writing code.

Each field is found by one finder: a date, an amount, an e-mail address, a phone number, an
organisation, or keywords. The prompt file says which in its front matter
(`options: {generic: {when: [...], fields: {<field>: {find: ..., near: [...], keywords: {...}}}}}`);
without that, a field's type decides (date -> date, number -> amount, enum -> keywords over its
options) and other fields are left to the model. `when` lists phrases of which a document must hold
one to be read at all, so a schema for support requests leaves the rest of the inbox alone.
Scrubbed text holds placeholders such as `[EMAIL_1]` instead of addresses and phone numbers: those
are the values found, and their evidence maps back to the raw text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from extraction_assets.lib.heuristics.due_dates import parse_due_date
from extraction_assets.lib.heuristics.entities import (
    Found,
    find_amounts,
    find_organisations,
    find_placeholders,
)
from extraction_assets.lib.heuristics.generic_lexicon import NEGATORS
from extraction_assets.lib.heuristics.negation import Negation
from extraction_assets.lib.heuristics.phrases import any_phrase
from extraction_assets.lib.heuristics.segments import Segment, normalize_for_match, segment_text, segment_turns
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.schemas import FieldSpec, SchemaVersion

__all__ = ["GenericOptions", "GenericRule", "extract_generic", "generic_options", "score_confidence"]

Finder = Literal["date", "amount", "email", "phone", "organisation", "keywords"]
# A keyword right after a negation ("not urgent", "không gấp") does not count.
_NEGATION = Negation(NEGATORS, adjacent=True)
# Candidates kept per field: shape `fields` keeps the best one, shape `items` all (up to max_items).
MAX_CANDIDATES_PER_FIELD = 10


class GenericRule(BaseModel):
    """How the generic pack finds one field (front matter `options.generic.<field>`)."""

    model_config = ConfigDict(extra="forbid")

    find: Finder
    near: list[str] = Field(default_factory=list)  # words that mark the right mention ("refund" for an amount)
    only_near: bool = False  # ignore mentions whose clause holds none of the `near` words
    keywords: dict[str, list[str]] = Field(default_factory=dict)  # value -> phrases (find: keywords)


class GenericOptions(BaseModel):
    """The front matter's `options.generic`: an optional gate and the fields' rules."""

    model_config = ConfigDict(extra="forbid")

    when: list[str] = Field(default_factory=list)
    fields: dict[str, GenericRule] = Field(default_factory=dict)


@dataclass(frozen=True)
class _Hit:
    """A value, the span it was read from (None: the whole clause) and the clause around it."""

    value: Any
    clause: Segment
    span: Found | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def generic_options(schema: SchemaVersion) -> GenericOptions:
    """The schema's generic options, each field's rule declared or implied by its type.

    A ValueError names the prompt file's mistake (an unknown finder, a field the schema lacks, ...).
    """
    try:
        declared = GenericOptions.model_validate(schema.options.get("generic") or {})
    except ValidationError as exc:
        raise ValueError(f"{schema.key}: options.generic: {exc}") from None
    unknown = sorted(set(declared.fields) - {f.name for f in schema.fields})
    if unknown:
        raise ValueError(f"{schema.key}: options.generic.fields names fields the schema does not have: {unknown}")
    rules = {
        spec.name: rule
        for spec in schema.fields
        if (rule := declared.fields.get(spec.name) or _implied(spec)) is not None
    }
    return declared.model_copy(update={"fields": rules})


def _implied(spec: FieldSpec) -> GenericRule | None:
    if spec.type == "date":
        return GenericRule(find="date")
    if spec.type == "number":
        return GenericRule(find="amount")
    if spec.enum_options:
        return GenericRule(find="keywords")
    return None


def score_confidence(*, near: bool, unambiguous: bool) -> float:
    """0.60 for a value of the right kind; +0.10 when a `near` word is in its clause; +0.05 when the
    document holds only one distinct value for the field. Always in the heuristic band [0.60, 0.80]."""
    return round((60 + 10 * near + 5 * unambiguous) / 100, 2)


def _clauses(doc: ExtractionInput) -> list[Segment]:
    return segment_turns(doc.text, doc.turns) if doc.turns else segment_text(doc.text)


F = TypeVar("F", bound=Found)


def _spans(
    finder: Callable[[str, int, int], Sequence[F]], doc: ExtractionInput, clauses: list[Segment]
) -> Iterator[tuple[F, Segment]]:
    for clause in clauses:
        for found in finder(doc.text, clause.start, clause.end):
            yield found, clause


def _dates(doc: ExtractionInput, clauses: list[Segment], _rule: GenericRule, _spec: FieldSpec) -> list[_Hit]:
    return [_Hit(value=when.isoformat(), clause=c) for c in clauses if (when := parse_due_date(c.text, doc.doc_date))]


def _amounts(doc: ExtractionInput, clauses: list[Segment], _rule: GenericRule, spec: FieldSpec) -> list[_Hit]:
    hits = []
    for found, clause in _spans(find_amounts, doc, clauses):
        value: Any = found.text if spec.type == "string" else found.amount
        hits.append(_Hit(value=value, clause=clause, span=found, extra={"currency": found.currency}))
    return hits


def _placeholders(kind: str) -> Callable[[ExtractionInput, list[Segment], GenericRule, FieldSpec], list[_Hit]]:
    def finder(doc: ExtractionInput, clauses: list[Segment], _rule: GenericRule, _spec: FieldSpec) -> list[_Hit]:
        spans = _spans(lambda text, lo, hi: find_placeholders(text, kind, lo, hi), doc, clauses)
        return [_Hit(value=found.text, clause=clause, span=found) for found, clause in spans]

    return finder


def _organisations(doc: ExtractionInput, clauses: list[Segment], _rule: GenericRule, _spec: FieldSpec) -> list[_Hit]:
    return [_Hit(value=f.text, clause=c, span=f) for f, c in _spans(find_organisations, doc, clauses)]


def _keywords(doc: ExtractionInput, clauses: list[Segment], rule: GenericRule, spec: FieldSpec) -> list[_Hit]:
    """The value whose phrases a clause holds, unless negated ("not urgent"); an enum without declared
    phrases matches its options' words."""
    table = rule.keywords or {option: [option.replace("_", " ")] for option in spec.enum_options or []}
    patterns = {value: any_phrase(phrases) for value, phrases in table.items()}
    hits = []
    for clause in clauses:
        norm = normalize_for_match(clause.text)
        for value, pattern in patterns.items():
            match = next((m for m in pattern.finditer(norm) if not _NEGATION.negates(norm, m.start())), None)
            if match is not None:
                hits.append(_Hit(value=value, clause=clause, extra={"matched": match.group(0)}))
    return hits


_FINDERS: dict[str, Callable[[ExtractionInput, list[Segment], GenericRule, FieldSpec], list[_Hit]]] = {
    "date": _dates,
    "amount": _amounts,
    "email": _placeholders("EMAIL"),
    "phone": _placeholders("PHONE"),
    "organisation": _organisations,
    "keywords": _keywords,
}


def extract_generic(doc: ExtractionInput, schema: SchemaVersion) -> list[CandidateItem]:
    """Candidates for every field with a rule, in text order; the pipeline keeps the best per field
    (shape `fields`) or every one up to the cap (shape `items`)."""
    if schema.shape == "records":
        raise ValueError(f"{schema.key}: the generic pack extracts shape fields or items, not records")
    options = generic_options(schema)
    if not doc.text.strip() or not options.fields:
        return []
    if options.when and not any_phrase(options.when).search(normalize_for_match(doc.text)):
        return []
    clauses = _clauses(doc)
    candidates: list[CandidateItem] = []
    for spec in schema.fields:
        rule = options.fields.get(spec.name)
        if rule is None:
            continue
        near = any_phrase(rule.near) if rule.near else None
        hits = _FINDERS[rule.find](doc, clauses, rule, spec)
        if rule.only_near and near is not None:
            hits = [h for h in hits if near.search(normalize_for_match(h.clause.text))]
        hits = hits[:MAX_CANDIDATES_PER_FIELD]
        distinct = {repr(h.value) for h in hits}
        for hit in hits:
            span = hit.span or hit.clause
            candidates.append(
                CandidateItem(
                    item_type=spec.name,
                    title=f"{spec.name}: {hit.value}",
                    evidence_span=span.text,
                    span_hint=span.start,
                    more_evidence=[hit.clause.text] if hit.span is not None and hit.clause.text != span.text else [],
                    confidence=score_confidence(
                        near=near is not None and near.search(normalize_for_match(hit.clause.text)) is not None,
                        unambiguous=len(distinct) == 1,
                    ),
                    value={"value": hit.value, **hit.extra},
                    reasoning_summary=f"generic {rule.find} finder",
                )
            )
    return candidates
