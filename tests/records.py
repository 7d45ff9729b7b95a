"""Rows tests write: an outcome, and an item quoting its document once with that quote as its one exact evidence."""

from __future__ import annotations

from collections.abc import Sequence

from extraction_assets.lib.models import Document, EvidenceRecord, ExtractionOutcome, ItemRecord, ItemStatus


def quoted_item(
    doc: Document,
    item_id: str,
    quote: str,
    *,
    version: str = "pulse@v1",
    status: ItemStatus = "draft",
    item_type: str = "risk",
    confidence: float = 0.7,
    probability_correct: float | None = None,
) -> ItemRecord:
    return ItemRecord(
        item_id=item_id,
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        schema_version=version,
        item_type=item_type,
        value={},
        title=quote,
        confidence=confidence,
        probability_correct=probability_correct,
        status=status,
        extracted_by="heuristic",
        extractor_version="h1",
        model=None,
        review_reasons=["below_threshold: x"] if status == "needs_review" else [],
        evidence=[exact_evidence(doc, item_id, quote, version, f"ev-{item_id}")],
    )


def exact_evidence(doc: Document, item_id: str, quote: str, version: str, evidence_id: str) -> EvidenceRecord:
    """The quote's first place in the document, matched exactly."""
    start = doc.text.index(quote)
    return EvidenceRecord(
        evidence_id=evidence_id,
        item_id=item_id,
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        schema_version=version,
        char_start=start,
        char_end=start + len(quote),
        quote=quote,
        turn_id=None,
        match_kind="exact",
        strength="strong",
    )


def processed(
    doc: Document,
    version: str,
    items: Sequence[ItemRecord] = (),
    extractor_version: str = "h1",
    scrubber_version: str = "pii-v1",
) -> ExtractionOutcome:
    """The document's outcome under `version`, processed, holding `items`."""
    return ExtractionOutcome(
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        schema_version=version,
        status="processed",
        extractor_version=extractor_version,
        scrubber_version=scrubber_version,
        items=list(items),
    )
