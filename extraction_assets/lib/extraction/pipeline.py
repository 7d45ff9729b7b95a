"""Per-document steps of extraction: extract, ground, cap and review (scrubbing comes before, in `pii`).

Assets and the CLI call these; they hold no connection and no Dagster context, so every step is
tested directly and a failure of one document never touches another.
"""

from __future__ import annotations

import gc
import re
import unicodedata
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from extraction_assets.lib.calibration.model import band_confidence
from extraction_assets.lib.extraction.answer_bounds import bound_value, bounded_title, suspicious
from extraction_assets.lib.extraction.extractors import Extractor, ExtractorRun
from extraction_assets.lib.extraction.grounding import TurnIndex, ground
from extraction_assets.lib.extraction.review_rules import review_reasons
from extraction_assets.lib.extraction.routing import route_document
from extraction_assets.lib.llm.budget import Deferred
from extraction_assets.lib.llm.deadline import abandon_calls, resume_calls
from extraction_assets.lib.models import (
    EXTRACTOR_METADATA,
    CandidateItem,
    DeadLetter,
    Document,
    EvidenceRecord,
    ExtractionInput,
    ExtractionOutcome,
    ItemRecord,
    ScrubbedDocument,
    stable_id,
)
from extraction_assets.lib.schemas import SchemaVersion

_SPACES = re.compile(r"\s+")


def extraction_input(doc: Document, scrubbed: ScrubbedDocument) -> ExtractionInput:
    """The scrubbed text with the document's turns re-based onto it (a turn the scrub did not move is kept as it is:
    a transcript has a thousand turns and most documents no masked value)."""
    offset_map = scrubbed.offset_map
    turns = list(doc.turns)
    if offset_map.replacements:
        for i, turn in enumerate(turns):
            start, end = offset_map.to_scrubbed(turn.start, turn.end)
            if (start, end) != (turn.start, turn.end):
                turns[i] = turn.model_copy(update={"start": start, "end": end})
    return ExtractionInput(
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        kind=doc.kind,
        text=scrubbed.text,
        turns=turns,
        doc_date=doc.doc_date,
        metadata={k: doc.metadata[k] for k in EXTRACTOR_METADATA if k in doc.metadata},
    )


def _span_key(quote: str) -> str:
    return _SPACES.sub(" ", unicodedata.normalize("NFKC", quote).casefold()).strip()


def item_id_for(doc_id: str, schema_version: str, item_type: str, quote: str) -> str:
    """Deterministic: the same item found again in a re-run gets the same id, so re-runs upsert."""
    return stable_id(doc_id, schema_version, item_type, _span_key(quote))


def _evidence_for(
    doc: Document,
    scrubbed: ScrubbedDocument,
    turns: TurnIndex,
    span: str,
    hint: int | None,
    evidence_type: str,
) -> EvidenceRecord | None:
    """Locate a span in the scrubbed text and express it in raw-text offsets; ids are set by the caller."""
    located = ground(span, scrubbed.text, hint=hint)
    if located is None:
        return None
    start, end = scrubbed.offset_map.to_raw(located.start, located.end)
    quote = doc.text[start:end]
    if not quote.strip():
        return None
    return EvidenceRecord(
        evidence_id="",
        item_id="",
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        schema_version="",
        char_start=start,
        char_end=end,
        quote=quote,
        turn_id=turns.turn_for_span(start, end),
        match_kind=located.match_kind,
        strength=located.strength,
        evidence_type=evidence_type,
        match_score=located.score,
    )


def _identity(doc: Document, schema: SchemaVersion, candidate: CandidateItem, quote: str) -> str:
    """Items are keyed by field (shape fields), by record key (shape records) or by their quote (shape items)."""
    if schema.shape == "fields":
        return stable_id(doc.doc_id, schema.key, candidate.item_type, "field")
    if candidate.key:
        return stable_id(doc.tenant_id, schema.key, candidate.item_type, "key", candidate.key)
    return item_id_for(doc.doc_id, schema.key, candidate.item_type, quote)


def _dropped(doc: Document, schema: SchemaVersion, run: ExtractorRun, candidate: CandidateItem) -> DeadLetter:
    return DeadLetter(
        stage="grounding",
        tenant_id=doc.tenant_id,
        source_uri=doc.source_uri,
        doc_id=doc.doc_id,
        schema_version=schema.key,
        reason="evidence span not found in the source text",
        detail={
            "item_type": candidate.item_type,
            "evidence_span": candidate.evidence_span[:500],
            "extractor_version": run.extractor_version,
        },
    )


def _record(
    doc: Document, schema: SchemaVersion, run: ExtractorRun, candidate: CandidateItem, evidence: list[EvidenceRecord]
) -> ItemRecord:
    item_id = _identity(doc, schema, candidate, evidence[0].quote)
    evidence = sorted(
        {
            (ev.char_start, ev.char_end): ev.model_copy(
                update={
                    "item_id": item_id,
                    "schema_version": schema.key,
                    "evidence_id": stable_id(item_id, ev.char_start, ev.char_end),
                }
            )
            for ev in evidence
        }.values(),
        key=lambda ev: ev.char_start,
    )
    extracted_by = candidate.extracted_by or run.extracted_by
    band = schema.model_band if extracted_by == "model" else schema.heuristic_band
    probability, threshold = _calibrated(schema, candidate, extracted_by)
    if probability is None:
        confidence = band.clamp(candidate.confidence)
    else:  # the probability placed in the band: monotone, never outside it, never 1.0
        confidence = band.clamp(band_confidence(band.low, band.high, probability))
    value: dict[str, Any] = dict(candidate.value)
    title = candidate.title.strip()[:200] or evidence[0].quote[:120]
    reasons = review_reasons(
        schema.field(candidate.item_type),
        confidence,
        evidence,
        value,
        contradiction=candidate.contradiction,
        denial=candidate.denial,
        probability=probability,
        threshold=threshold,
    )
    if extracted_by == "model":  # what a model returns is bounded, and an echoed instruction is never a draft
        title = bounded_title(title)
        value, cut = bound_value(value)
        reasons += [f"type_violation: {problem}" for problem in cut]
        reasons += suspicious(title, value, evidence, doc.text, schema.instructions)
    return ItemRecord(
        item_id=item_id,
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        schema_version=schema.key,
        item_type=candidate.item_type,
        value=value,
        title=title,
        confidence=confidence,
        status="needs_review" if reasons else "draft",
        extracted_by=extracted_by,
        extractor_version=run.extractor_version,
        model=run.model if extracted_by == "model" else None,
        review_reasons=reasons,
        reasoning_summary=candidate.reasoning_summary,
        evidence=evidence,
        probability_correct=probability,
        evidence_features=dict(candidate.features),
    )


def _calibrated(
    schema: SchemaVersion, candidate: CandidateItem, extracted_by: str
) -> tuple[float | None, float | None]:
    """(probability of being right, the version's review threshold) where the version's calibration covers this
    field and the item's features came from the pack it was fitted on; (None, None) elsewhere (a model's answer, a
    field or version without enough labelled data): today's confidence and threshold then decide."""
    calibration = schema.calibration
    if calibration is None or extracted_by == "model" or not candidate.features:
        return None, None
    fitted = calibration.field(candidate.item_type)
    if fitted is None:
        return None, None
    return fitted.probability(candidate.features), calibration.threshold


def missing_required_fields(
    doc: Document, schema: SchemaVersion, run: ExtractorRun, found: set[str]
) -> list[ItemRecord]:
    """A required field with no grounded value still gets a record: value null, no evidence, needs_review."""
    if schema.shape != "fields":
        return []
    placeholders = []
    for spec in schema.fields:
        if not spec.required or spec.name in found:
            continue
        candidate = CandidateItem(item_type=spec.name, title=f"{spec.name}: not found", evidence_span="", confidence=0)
        reasons = review_reasons(spec, 0.0, [], {"value": None})
        placeholders.append(
            ItemRecord(
                item_id=_identity(doc, schema, candidate, ""),
                doc_id=doc.doc_id,
                tenant_id=doc.tenant_id,
                schema_version=schema.key,
                item_type=spec.name,
                value={"value": None},
                title=candidate.title,
                confidence=0.0,
                status="needs_review",
                extracted_by=run.extracted_by,
                extractor_version=run.extractor_version,
                model=run.model,
                review_reasons=reasons,
                reasoning_summary="required field: no value with verbatim evidence was found",
            )
        )
    return placeholders


def ground_candidates(
    doc: Document, scrubbed: ScrubbedDocument, schema: SchemaVersion, run: ExtractorRun
) -> tuple[list[ItemRecord], list[DeadLetter], int]:
    """Locate every candidate's evidence; drop (and report) the ones that do not ground; cap the rest.

    Shape `fields` keeps the most confident grounded value per field and adds null placeholders for
    required fields; the cap is `max_items`. Returns (items, dead letters for dropped candidates,
    number cut by the cap).
    """
    items: dict[str, ItemRecord] = {}
    dropped: list[DeadLetter] = []
    turns = TurnIndex(doc.turns)
    for candidate in run.candidates:
        primary = _evidence_for(
            doc, scrubbed, turns, candidate.evidence_span, candidate.span_hint, candidate.evidence_type
        )
        if primary is None:
            dropped.append(_dropped(doc, schema, run, candidate))
            continue
        extra = [
            _evidence_for(doc, scrubbed, turns, span, None, candidate.evidence_type) for span in candidate.more_evidence
        ]
        record = _record(doc, schema, run, candidate, [primary, *[e for e in extra if e is not None]])
        if record.item_id not in items or items[record.item_id].confidence < record.confidence:
            items[record.item_id] = record
    ranked = sorted(items.values(), key=lambda i: (-i.confidence, i.evidence[0].char_start))
    kept = ranked[: schema.max_items]
    kept += missing_required_fields(doc, schema, run, {i.item_type for i in kept})
    kept.sort(key=lambda i: (i.evidence[0].char_start if i.evidence else len(doc.text), i.item_type))
    return kept, dropped, max(0, len(ranked) - schema.max_items)


def extract_document(
    doc: Document, scrubbed: ScrubbedDocument, schema: SchemaVersion, extractor: Extractor
) -> ExtractionOutcome:
    """One document under one schema version; an extractor error marks it failed, never half-done.

    A model request the run may not send (budget spent, or waiting in a batch) leaves the document pending:
    nothing of it is written but the answers it already obtained, which the next run reuses from the cache.
    """
    base: dict[str, Any] = {
        "doc_id": doc.doc_id,
        "tenant_id": doc.tenant_id,
        "schema_version": schema.key,
        "extractor_version": extractor.version(schema),
        "scrubber_version": scrubbed.scrubber_version,
    }
    try:
        run = extractor.extract(extraction_input(doc, scrubbed), schema)
        items, dropped, capped = ground_candidates(doc, scrubbed, schema, run)
        routing = route_document(schema, items)
    except Deferred as deferred:
        return ExtractionOutcome(**base, status="pending", outcome=f"pending_{deferred.reason}", stats=deferred.stats)
    except Exception as exc:  # one document's failure must not stop the batch
        reason = f"{type(exc).__name__}: {exc}"
        letter = DeadLetter(
            stage="extract",
            tenant_id=doc.tenant_id,
            source_uri=doc.source_uri,
            doc_id=doc.doc_id,
            schema_version=schema.key,
            reason=reason[:1000],
        )
        return ExtractionOutcome(**base, status="failed", error=reason, dead_letters=[letter], outcome="failed")
    if run.error:
        dropped.append(
            DeadLetter(
                stage="model",
                tenant_id=doc.tenant_id,
                source_uri=doc.source_uri,
                doc_id=doc.doc_id,
                schema_version=schema.key,
                reason=run.error[:1000],
                detail={"outcome": run.outcome},
            )
        )
    return ExtractionOutcome(
        **base,
        status="partial" if run.retry else "processed",
        model=run.model,
        outcome=run.outcome,
        error=run.error,
        items=items,
        dead_letters=dropped,
        proposed=len(run.candidates),
        dropped=sum(1 for d in dropped if d.stage == "grounding"),
        capped=capped,
        stats=run.stats,
        routing=routing,
    )


def extract_stream(
    pairs: Iterable[tuple[Document, ScrubbedDocument]], schema: SchemaVersion, extractor: Extractor
) -> Iterator[ExtractionOutcome]:
    """Outcomes in input order, `extractor.concurrency` documents in flight (model calls wait on the network).

    The input is read lazily and the caller may store outcomes between two of them: loading the next
    documents and committing finished ones overlap with the model calls still running. When the stream stops early
    (an interrupt, a failed batch write), documents not started are dropped and model calls in flight are given up
    at once: they wait for the next run, and the stop waits on no endpoint.
    """
    if extractor.concurrency <= 1:
        for doc, clean in pairs:
            yield extract_document(doc, clean, schema, extractor)
        return
    gc.freeze()  # a full collection stops every thread: keep it from rescanning what exists before the stage
    window = extractor.concurrency * 4
    with ThreadPoolExecutor(max_workers=extractor.concurrency, thread_name_prefix="extract") as pool:
        running: deque[Future[ExtractionOutcome]] = deque()
        try:
            for doc, clean in pairs:
                running.append(pool.submit(extract_document, doc, clean, schema, extractor))
                if len(running) >= window:
                    yield running.popleft().result()
            while running:
                yield running.popleft().result()
        except BaseException:  # including the generator's close and Dagster's interrupt
            abandon_calls()
            try:
                pool.shutdown(wait=True, cancel_futures=True)
            finally:
                resume_calls()  # every call of this stream has ended: later ones run as usual
            raise


def extract_documents(
    docs: Sequence[Document],
    scrubbed: Mapping[str, ScrubbedDocument],
    schema: SchemaVersion,
    extractor: Extractor,
) -> list[ExtractionOutcome]:
    return list(extract_stream(((doc, scrubbed[doc.doc_id]) for doc in docs), schema, extractor))
