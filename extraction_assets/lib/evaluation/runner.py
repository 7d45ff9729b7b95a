"""Run one dataset through the production code path and score it.

Each gold record becomes a `Document` (tenant `eval-<dataset>`), is scrubbed by `pipeline.scrub_document`
and extracted by `pipeline.extract_documents` with the configured extractor, exactly as the extraction
asset does; only the scoring is eval-specific. For `entity_spans` datasets the scrubber itself is
what is scored. Nothing is written here: callers store the result and the model responses.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from extraction_assets.lib.calibration import Judged, ReviewFigures, review_figures
from extraction_assets.lib.evaluation.gold import GoldRecord, count_records, read_gold
from extraction_assets.lib.evaluation.lift import DocumentPlacement, lift_interval, pooled_lift
from extraction_assets.lib.evaluation.metrics import (
    MICRO,
    Calibration,
    FieldCounts,
    FieldScore,
    calibration,
    field_scores,
    mean,
    percentile,
    ratio,
)
from extraction_assets.lib.evaluation.registry import DatasetEntry
from extraction_assets.lib.evaluation.scoring import (
    DocumentScore,
    FieldOutcome,
    Mark,
    Placement,
    Prediction,
    Verdict,
    score_document,
)
from extraction_assets.lib.extraction.extractors import Extractor
from extraction_assets.lib.extraction.pipeline import extract_documents
from extraction_assets.lib.llm.budget import estimated_cost
from extraction_assets.lib.models import Document, ExtractionInput, ExtractionOutcome, Turn
from extraction_assets.lib.pii.batch import scrub_document
from extraction_assets.lib.pii.scrubber import SCRUBBER_VERSION, scrub
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.warehouse.connection import batched, now

EVAL_BATCH = 32
Progress = Callable[[int, int], None]
Collect = Callable[[GoldRecord, list[Verdict]], None]  # every judged item of a document, with its features


class ModelCache(Protocol):
    """Where model answers live between runs (the warehouse's `llm_cache`), read and written per batch."""

    def load(self, model: str, doc_ids: list[str]) -> dict[str, dict[str, Any]]: ...

    def store(self, entries: list[dict[str, Any]]) -> None: ...


NOTES = {
    "evidence_turns": (
        "Precision is not defined here: the gold lists only what annotators asked about, not every "
        "decision or risk. Recall counts gold items whose evidence turns hold an item of the mapped type."
    ),
    "entity_spans": (
        "The scrubber is scored, not an extractor: spans match one to one when their overlap is at least "
        "half their union; grounding and review rates do not apply."
    ),
}


class EvalConfigError(ValueError):
    """A dataset that cannot be scored against a schema version; the message says why."""


class DocumentSample(BaseModel):
    """One document as the HTML report shows it: text, gold and predicted spans, per-field verdicts."""

    record_id: str
    text: str
    status: str
    error: str | None = None
    gold_marks: list[Mark]
    predicted_marks: list[Mark]
    outcomes: list[FieldOutcome]


class PlacementField(BaseModel):
    field: str
    items: int
    hits: int  # items inside gold evidence of their field
    hit_rate: float | None
    chance: float | None  # mean over the items of the share of their document's turns the gold evidence covers
    lift: float | None  # hit_rate / chance: 1 is no better than an item on a random turn
    # the lift's 95% interval, a bootstrap over documents (`lift.lift_interval`): few items make a wide one
    lift_low: float | None = None
    lift_high: float | None = None


class PlacementFigures(BaseModel):
    """Mode `evidence_turns`: how many items a document gets, and whether they land where the gold says the thing
    is discussed more often than chance."""

    documents: int
    items_per_document: float | None
    items_per_document_max: int
    documents_over_cap: int  # documents with more items than the cap
    cap: int
    fields: list[PlacementField] = Field(default_factory=list)
    pooled: PlacementField | None = None
    # every document's judged items, pooled over fields, in dataset order: what a lift over several files is
    # bootstrapped from
    by_document: list[DocumentPlacement] = Field(default_factory=list)


MEETING_ITEM_CAP = 4  # a meeting is worth at most this many items


class ConfidenceNote(BaseModel):
    """What the version's confidence means, as the report says it: calibrated (its threshold, the cost it was chosen
    for and the figures measured at fit time, cross-validated by document) or not, and why."""

    status: str  # calibrated, not_calibrated, none (no calibration file)
    reason: str = ""
    threshold: float | None = None
    review: str | None = None
    data: list[str] = Field(default_factory=list)  # the labelled files it was fitted on
    not_calibrated: dict[str, str] = Field(default_factory=dict)
    cross_validated: dict[str, Any] = Field(default_factory=dict)  # pooled over every labelled file
    in_sample: dict[str, Any] = Field(default_factory=dict)


def confidence_note(schema: SchemaVersion | None) -> ConfidenceNote | None:
    if schema is None:
        return None
    calibration = schema.calibration
    if calibration is None:
        return ConfidenceNote(status="none", reason="no calibration file: confidences are the pack's rule constants")
    figures = calibration.figures
    return ConfidenceNote(
        status=calibration.status,
        reason=calibration.reason,
        threshold=calibration.threshold,
        review=calibration.review.describe() if calibration.review else None,
        data=[d["file"] for d in calibration.provenance.data] if calibration.provenance else [],
        not_calibrated=calibration.not_calibrated,
        cross_validated=figures.get("cross_validated", {}).get("all", {}),
        in_sample=figures.get("in_sample", {}).get("all", {}),
    )


def placement_figures(placements: list[list[Placement]], items_per_doc: list[int]) -> PlacementFigures:
    """Items a document and, per field and pooled, hits against chance with the lift's bootstrap interval;
    `placements` holds each document's judged items (an empty list for a document with none)."""

    def per_document(name: str | None) -> list[DocumentPlacement]:
        return [
            DocumentPlacement(
                items=len(members), hits=sum(p.hit for p in members), chance=round(sum(p.chance for p in members), 6)
            )
            for doc in placements
            for members in [[p for p in doc if name is None or p.field == name]]
        ]

    def summary(name: str, documents: list[DocumentPlacement]) -> PlacementField:
        items = sum(d.items for d in documents)
        hits = sum(d.hits for d in documents)
        chance = sum(d.chance for d in documents) / items if items else None
        rate = hits / items if items else None
        lift = pooled_lift(documents) if items else None
        interval = lift_interval(documents) if items else None
        return PlacementField(
            field=name,
            items=items,
            hits=hits,
            hit_rate=None if rate is None else round(rate, 4),
            chance=None if chance is None else round(chance, 4),
            lift=None if lift is None else round(lift, 2),
            lift_low=interval[0] if interval else None,
            lift_high=interval[1] if interval else None,
        )

    names = list(dict.fromkeys(p.field for doc in placements for p in doc))
    pooled = per_document(None)
    return PlacementFigures(
        documents=len(items_per_doc),
        items_per_document=round(sum(items_per_doc) / len(items_per_doc), 2) if items_per_doc else None,
        items_per_document_max=max(items_per_doc, default=0),
        documents_over_cap=sum(n > MEETING_ITEM_CAP for n in items_per_doc),
        cap=MEETING_ITEM_CAP,
        fields=[summary(n, per_document(n)) for n in names],
        pooled=summary("pooled", pooled),
        by_document=pooled,
    )


class EvalResult(BaseModel):
    dataset: str
    schema_version: str
    extractor: str
    model: str | None
    mode: str
    source: str
    run_at: datetime
    documents: int
    documents_failed: int = 0
    records_invalid: int = 0
    document_limit: int | None = None
    fields: list[FieldScore]
    grounding_rate: float | None = None
    hallucination_rate: float | None = None
    needs_review_rate: float | None = None
    items_proposed: int = 0
    items_stored: int = 0
    items_dropped: int = 0
    calibration: Calibration
    review: ReviewFigures | None = None  # mode `fields`: what review does with wrong values (figures and curve)
    confidence: ConfidenceNote | None = None  # whether the version's confidence is calibrated, and its fit's figures
    placement: PlacementFigures | None = None  # mode `evidence_turns`: items per document, hits against chance
    latency_ms_mean: float | None = None
    latency_ms_p95: float | None = None
    wall_seconds: float = 0.0
    model_calls: int = 0
    cache_hits: int = 0
    remembered_failures: int = 0  # cached answers that had failed validation: not asked again
    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated_cost: float | None = None  # at the endpoint's configured prices; None without prices
    documents_pending: int = 0  # left unextracted by the token budget (their gold counts as missed)
    chunks: int = 0  # model requests' chunks (a document longer than max_input_chars is several)
    examples: int = 0  # few-shot examples in the schema version's prompt file (shown to a model before each document)
    recall_per_pass: list[float | None] = Field(default_factory=list)  # micro recall after pass 1, 2, ...
    notes: list[str] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)
    samples: list[DocumentSample] = Field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        """The JSON scripts read: every figure, per-field scores keyed by field, no document text."""
        data = self.model_dump(mode="json", exclude={"samples", "fields"})
        data["fields"] = {
            f.field: f.model_dump(mode="json", exclude={"field"}) for f in self.fields if f.field != MICRO
        }
        data["overall"] = next(f.model_dump(mode="json", exclude={"field"}) for f in self.fields if f.field == MICRO)
        return data


class _Timed:
    """The extractor, with the time each document's extraction took (it may run several at once)."""

    def __init__(self, inner: Extractor) -> None:
        self.inner = inner
        self.elapsed_ms: dict[str, float] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> Any:
        started = time.perf_counter()
        try:
            return self.inner.extract(doc, schema)
        finally:
            self.elapsed_ms[doc.doc_id] = (time.perf_counter() - started) * 1000


def line_turns(text: str) -> list[Turn]:
    """One turn per line; a `Speaker: ` prefix becomes the speaker and is left out of the turn's span."""
    turns, pos = [], 0
    for number, line in enumerate(text.split("\n")):
        speaker, sep, _ = line.partition(": ")
        offset = len(speaker) + len(sep) if sep and 0 < len(speaker) <= 60 else 0
        if line.strip():
            turns.append(
                Turn(turn_id=f"t{number}", start=pos + offset, end=pos + len(line), speaker=speaker if offset else None)
            )
        pos += len(line) + 1
    return turns


def gold_document(entry: DatasetEntry, record: GoldRecord) -> Document:
    tenant = f"eval-{entry.name}"
    return Document(
        doc_id=Document.make_id(tenant, entry.document_kind, record.text),
        tenant_id=tenant,
        source_uri=f"{entry.name}#{record.id}",
        kind=entry.document_kind,
        text=record.text,
        turns=line_turns(record.text) if entry.turns == "lines" else [],
        metadata={"gold_id": record.id},
    )


def _item_predictions(outcome: ExtractionOutcome) -> list[Prediction]:
    """Stored items with evidence; a required field's null placeholder predicts nothing."""
    return [
        Prediction(
            field=item.item_type,
            value=item.value,
            quote=item.evidence[0].quote,
            confidence=item.confidence,
            spans=[(ev.char_start, ev.char_end) for ev in item.evidence],
            status=item.status,
            probability=item.probability_correct,
            features=item.evidence_features,
            reasons=item.review_reasons,
        )
        for item in outcome.items
        if item.evidence
    ]


def _scrubber_predictions(text: str) -> list[Prediction]:
    return [
        Prediction(field=d.kind, confidence=d.score, spans=[(d.start, d.end)], quote=text[d.start : d.end])
        for d in scrub(text).detections
    ]


def check_fields(entry: DatasetEntry, schema: SchemaVersion) -> list[str]:
    """Messages for registry fields naming schema fields this version does not have (they predict nothing)."""
    known = {f.name for f in schema.fields}
    return [
        f"{entry.name}: field {name!r} maps {sorted(set(m.schema_fields) - known)}, which {schema.key} does not "
        f"have (its fields: {', '.join(sorted(known))}); they predict nothing"
        for name, m in entry.fields.items()
        if set(m.schema_fields) - known
    ]


class _Tally:
    """Running totals over the documents of one evaluation."""

    def __init__(self, entry: DatasetEntry) -> None:
        self.counts: dict[str, FieldCounts] = {
            name: FieldCounts(fp=None if entry.mode == "evidence_turns" else 0) for name in entry.fields
        }
        self.pairs: list[tuple[float, bool]] = []
        self.judged: list[Judged] = []
        self.placements: list[list[Placement]] = []  # per document
        self.items_per_doc: list[int] = []
        self.latencies: list[float] = []
        self.totals: dict[str, int] = dict.fromkeys(
            ("documents", "failed", "pending", "invalid", "proposed", "stored", "dropped", "needs_review"), 0
        )
        self.cost: dict[str, int] = dict.fromkeys(
            ("calls", "cache_hits", "remembered_failures", "prompt_tokens", "completion_tokens", "chunks"), 0
        )
        self.models: set[str] = set()
        self.messages: list[str] = []
        self.with_gold: list[DocumentSample] = []  # documents with gold spans are shown first
        self.without_gold: list[DocumentSample] = []

    def add(
        self, record: GoldRecord, score: DocumentScore, latency_ms: float, outcome: ExtractionOutcome | None
    ) -> None:
        self.totals["documents"] += 1
        for name, counts in score.counts.items():
            self.counts[name].add(counts)
        self.pairs += score.calibration
        self.judged += [
            Judged(
                field=v.prediction.field,  # the schema field: what a calibration is fitted per
                confidence=v.prediction.confidence,
                probability=v.prediction.probability,
                queued=v.prediction.status == "needs_review",
                correct=v.correct,
            )
            for v in score.verdicts
        ]
        self.placements.append(score.placements)
        self.latencies.append(latency_ms)
        if outcome is not None:
            self.items_per_doc.append(sum(1 for i in outcome.items if i.evidence))
            self.totals["failed"] += outcome.status == "failed"
            self.totals["pending"] += outcome.status == "pending"
            self.totals["proposed"] += outcome.proposed
            self.totals["dropped"] += outcome.dropped
            self.totals["stored"] += sum(1 for i in outcome.items if i.evidence)
            self.totals["needs_review"] += sum(1 for i in outcome.items if i.evidence and i.status == "needs_review")
            for key in self.cost:
                self.cost[key] += int(outcome.stats.get(key, 0) or 0)
            if outcome.model:
                self.models.add(outcome.model)
            if outcome.status == "failed":
                self.messages.append(f"{record.id}: extraction failed: {outcome.error}")

    def sample(self, record: GoldRecord, score: DocumentScore, outcome: ExtractionOutcome | None, keep: int) -> None:
        shelf = self.with_gold if score.gold_marks else self.without_gold
        if len(shelf) >= keep:
            return
        shelf.append(
            DocumentSample(
                record_id=record.id,
                text=record.text,
                status=outcome.status if outcome else "processed",
                error=outcome.error if outcome else None,
                gold_marks=score.gold_marks,
                predicted_marks=score.predicted_marks,
                outcomes=score.outcomes,
            )
        )


def _records(path: Path, limit: int | None, tally: _Tally) -> Iterator[GoldRecord]:
    for record in read_gold(path, limit):
        if isinstance(record, str):
            tally.totals["invalid"] += 1
            tally.messages.append(record)
        else:
            yield record


def run_eval(
    entry: DatasetEntry,
    path: Path,
    schema: SchemaVersion | None,
    extractor: Extractor | None,
    *,
    schema_key: str | None = None,
    limit: int | None = None,
    samples: int = 5,
    on_progress: Progress | None = None,
    cache: ModelCache | None = None,
    per_pass: bool = True,
    collect: Collect | None = None,
) -> EvalResult:
    """Score `path` (records in the gold format) under the entry's mapping.

    Item modes need the schema version and an extractor; `entity_spans` scores `pii.scrub` and needs
    neither (`schema_key` then names the version reported). Raises EvalConfigError when the pair
    cannot be scored (a missing file, a schema that does not read this kind of document).
    A schema with `extraction_passes` > 1 is also scored with its first 1, 2, ... passes only
    (`recall_per_pass`); those requests are the full run's first passes, answered from the cache.
    """
    result = _run_eval(entry, path, schema, extractor, schema_key, limit, samples, on_progress, cache, collect)
    if not per_pass or schema is None or schema.extraction_passes == 1 or entry.mode == "entity_spans":
        return result
    earlier = [
        run_eval(
            entry,
            path,
            schema.model_copy(update={"extraction_passes": passes}),
            extractor,
            limit=limit,
            samples=0,
            cache=cache,
            per_pass=False,
        )
        for passes in range(1, schema.extraction_passes)
    ]
    return result.model_copy(update={"recall_per_pass": [_micro_recall(r) for r in [*earlier, result]]})


def _micro_recall(result: EvalResult) -> float | None:
    return next((f.recall for f in result.fields if f.field == MICRO), None)


def _run_eval(
    entry: DatasetEntry,
    path: Path,
    schema: SchemaVersion | None,
    extractor: Extractor | None,
    schema_key: str | None,
    limit: int | None,
    samples: int,
    on_progress: Progress | None,
    cache: ModelCache | None,
    collect: Collect | None = None,
) -> EvalResult:
    if not path.is_file():
        raise EvalConfigError(f"{entry.name}: {path} does not exist")
    scrubber_only = entry.mode == "entity_spans"
    if not scrubber_only and (schema is None or extractor is None):
        raise EvalConfigError(f"{entry.name}: mode {entry.mode!r} needs a schema version and an extractor")
    if schema is not None and not scrubber_only and not schema.reads_kind(entry.document_kind):
        raise EvalConfigError(
            f"{entry.name}: {schema.key} does not extract documents of kind {entry.document_kind!r} "
            f"(it reads {', '.join(schema.document_kinds)})"
        )
    tally = _Tally(entry)
    if schema is not None and not scrubber_only:
        tally.messages += check_fields(entry, schema)
    total = count_records(path, limit)
    started = time.perf_counter()
    timed = _Timed(extractor) if extractor is not None and not scrubber_only else None
    done = 0
    for batch in batched(list(_records(path, limit, tally)), EVAL_BATCH):
        docs = [gold_document(entry, record) for record in batch]
        outcomes: list[ExtractionOutcome | None]
        scrub_ms: list[float] = []
        if timed is None or schema is None:
            predictions, outcomes = [], []
            for record in batch:
                tick = time.perf_counter()
                predictions.append(_scrubber_predictions(record.text))
                scrub_ms.append((time.perf_counter() - tick) * 1000)
                outcomes.append(None)
        else:
            if cache is not None and timed.model:  # answers from earlier runs: a re-run calls nothing
                timed.preload_cache(cache.load(timed.model, [doc.doc_id for doc in docs]))
            scrubbed = {}
            for doc in docs:
                tick = time.perf_counter()
                scrubbed[doc.doc_id] = scrub_document(doc)
                scrub_ms.append((time.perf_counter() - tick) * 1000)
            extracted = extract_documents(docs, scrubbed, schema, timed)
            if cache is not None:
                cache.store(timed.take_cache_entries())
            predictions = [_item_predictions(o) for o in extracted]
            outcomes = list(extracted)
        for record, doc, preds, outcome, ms in zip(batch, docs, predictions, outcomes, scrub_ms, strict=True):
            score = score_document(entry, record, preds)
            if collect is not None:
                collect(record, score.verdicts)
            extract_ms = timed.elapsed_ms.get(doc.doc_id, 0.0) if timed is not None else 0.0
            tally.add(record, score, ms + extract_ms, outcome)
            tally.sample(record, score, outcome, samples)
        done += len(batch)
        if on_progress is not None and done + tally.totals["invalid"] < total:
            on_progress(done + tally.totals["invalid"], total)
    if on_progress is not None:
        on_progress(total, total)
    return _result(entry, path, schema, extractor, schema_key, limit, samples, tally, time.perf_counter() - started)


def _result(
    entry: DatasetEntry,
    path: Path,
    schema: SchemaVersion | None,
    extractor: Extractor | None,
    schema_key: str | None,
    limit: int | None,
    samples: int,
    tally: _Tally,
    wall_seconds: float,
) -> EvalResult:
    scrubber_only = entry.mode == "entity_spans"
    totals = tally.totals
    key = schema.key if schema is not None else (schema_key or entry.schema_version)
    version = SCRUBBER_VERSION if scrubber_only or extractor is None or schema is None else extractor.version(schema)
    model = ", ".join(sorted(tally.models)) or (None if scrubber_only else getattr(extractor, "model", None))
    return EvalResult(
        dataset=entry.name,
        schema_version=key,
        extractor=version,
        model=model,
        mode=entry.mode,
        source=str(path),
        run_at=now(),
        documents=totals["documents"],
        documents_failed=totals["failed"],
        records_invalid=totals["invalid"],
        document_limit=limit,
        fields=field_scores(tally.counts, {n: m.compare.value for n, m in entry.fields.items()}),
        grounding_rate=None if scrubber_only else ratio(totals["proposed"] - totals["dropped"], totals["proposed"]),
        hallucination_rate=None if scrubber_only else ratio(totals["dropped"], totals["proposed"]),
        needs_review_rate=None if scrubber_only else ratio(totals["needs_review"], totals["stored"]),
        items_proposed=totals["proposed"],
        items_stored=totals["stored"],
        items_dropped=totals["dropped"],
        calibration=calibration([] if entry.mode == "evidence_turns" else tally.pairs),
        review=review_figures(tally.judged) if entry.mode == "fields" else None,
        confidence=None if scrubber_only else confidence_note(schema),
        placement=placement_figures(tally.placements, tally.items_per_doc) if entry.mode == "evidence_turns" else None,
        latency_ms_mean=mean(tally.latencies),
        latency_ms_p95=percentile(tally.latencies, 0.95),
        wall_seconds=round(wall_seconds, 2),
        model_calls=tally.cost["calls"],
        cache_hits=tally.cost["cache_hits"],
        remembered_failures=tally.cost["remembered_failures"],
        prompt_tokens=tally.cost["prompt_tokens"],
        completion_tokens=tally.cost["completion_tokens"],
        estimated_cost=estimated_cost(
            extractor.prices if extractor else None, tally.cost["prompt_tokens"], tally.cost["completion_tokens"]
        ),
        documents_pending=totals["pending"],
        chunks=tally.cost["chunks"],
        examples=len(schema.examples) if schema is not None else 0,
        notes=[NOTES[entry.mode]] if entry.mode in NOTES else [],
        messages=tally.messages,
        samples=(tally.with_gold + tally.without_gold)[:samples],
    )
