"""Typed records passed between the pipeline's stages.

These are the contract between readers, the scrubber, extractors, grounding,
review and the warehouse; nothing here knows about Dagster or DuckDB.
"""

from __future__ import annotations

import hashlib
import json
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from extraction_assets.lib.offsets import OffsetMap

DocumentKind = Literal["text", "pulse", "email", "chat", "transcript"]
MatchKind = Literal["exact", "normalized", "fuzzy"]
Strength = Literal["strong", "medium", "weak"]
ItemStatus = Literal["draft", "needs_review", "accepted", "rejected"]
ExtractionStatus = Literal["processed", "partial", "failed", "pending"]  # a document's, per schema version


def stable_id(*parts: object, length: int = 24) -> str:
    """A short deterministic hex id from the given parts (re-runs reproduce it)."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8"))
    return digest.hexdigest()[:length]


RoutingOutcome = Literal["auto_approve", "manual_review", "deep_analysis"]


class Turn(BaseModel):
    """One speaker turn (or pulse answer slot) with its span in the document text."""

    model_config = ConfigDict(frozen=True)

    turn_id: str
    start: int
    end: int
    speaker: str | None = None
    timestamp: str | None = None
    question: str | None = None


# Metadata that tells records apart when their text does not: a check-in's author and date, a chat's channel.
RECORD_IDENTITY_KEYS = ("author", "date", "channel")
SESSION_KEY = "session_id"  # metadata of a live session's transcript (lib/sessions): the session is the identity


class OcrWord(BaseModel):
    """One word an OCR engine read in an image: where it is in the document's text and in the image (pixels)."""

    word_no: int  # 1, 2, ... in reading order
    char_start: int
    char_end: int  # text[char_start:char_end] is the word
    x: int  # pixels from the image's left edge
    y: int  # pixels from its top edge
    width: int
    height: int
    confidence: float  # the engine's, 0-100


class Document(BaseModel):
    """A readable input document; `text` is the raw text every offset refers to."""

    doc_id: str
    tenant_id: str
    source_uri: str
    kind: DocumentKind
    text: str
    turns: list[Turn] = Field(default_factory=list)
    doc_date: date | None = None
    title: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    ocr_words: list[OcrWord] = Field(default_factory=list)  # images only: each word's box (table ocr_words)

    @staticmethod
    def make_id(tenant_id: str, kind: str, text: str, metadata: dict[str, Any] | None = None) -> str:
        """Content hash scoped by tenant, plus the record's own identity where its text does not carry it.

        The same text in another tenant is another document. Two people's check-ins with the same answers,
        or one person's on two days, are two documents: their author and date (`RECORD_IDENTITY_KEYS` of
        the metadata) are part of the id. The same file twice is one document. A live interview session
        (`session_id` in the metadata, set only by `lib/sessions`) is one record however far its transcript has grown.
        """
        if metadata and metadata.get(SESSION_KEY):  # a live session's transcript grows: its id is the session's
            return stable_id(tenant_id, kind, "session", metadata[SESSION_KEY])
        identity = [f"{k}={metadata[k]}" for k in RECORD_IDENTITY_KEYS if metadata and metadata.get(k)]
        return stable_id(tenant_id, kind, text, *identity) if identity else stable_id(tenant_id, kind, text)


class ReadFailure(BaseModel):
    """A file (or one record of a file) that could not become a Document, or that was skipped by rule."""

    tenant_id: str
    source_uri: str
    reason: str
    skipped: bool = False  # skipped by rule (a hidden file or folder, the inbox's README): counted, not broken


class CandidateItem(BaseModel):
    """An item an extractor proposes, before its evidence is located.

    `key` gives the item its identity when a quote should not: a field name (shape `fields`) or a
    record key such as a Message-ID plus module (shape `records`), so a re-delivered message or a
    re-worded quote updates the same item instead of adding one.
    """

    item_type: str
    title: str
    evidence_span: str
    confidence: float
    value: dict[str, Any] = Field(default_factory=dict)
    span_hint: int | None = None  # offset in the extractor's text where it saw the span
    more_evidence: list[str] = Field(default_factory=list)  # further verbatim spans supporting the item
    evidence_type: str = "user_quote"
    key: str | None = None
    reasoning_summary: str | None = None
    contradiction: str | None = None  # why statements in the document disagree about this item
    denial: str | None = None  # the speaker denied this conclusion
    extracted_by: str | None = None  # "heuristic" or "model" when a merged run mixes both; else the run's
    # the evidence the extractor weighed (which rule fired, rivals, value sanity): what a calibration turns into the
    # probability of being right (`lib/calibration`); empty where the extractor reports none (a model's answer)
    features: dict[str, float] = Field(default_factory=dict)


class Grounding(BaseModel):
    """Where a quote was found in a text, and how faithfully."""

    start: int
    end: int
    match_kind: MatchKind
    strength: Strength
    score: float


class DeadLetter(BaseModel):
    """Anything that failed, with the stage and reason; never silently dropped. Its reason and detail may quote a
    document (a parser's error, an ungrounded span): the writer masks them (`warehouse.insert_dead_letters`)."""

    stage: str
    tenant_id: str
    source_uri: str
    reason: str
    doc_id: str | None = None
    schema_version: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)

    @property
    def dead_letter_id(self) -> str:
        detail = json.dumps(self.detail, sort_keys=True, default=str)
        return stable_id(
            self.stage, self.tenant_id, self.source_uri, self.doc_id, self.schema_version, self.reason, detail
        )


EXTRACTOR_METADATA = ("message_id", "language")  # document facts an extractor may see (no PII)


class ExtractionInput(BaseModel):
    """What an extractor sees: scrubbed text, with turns re-based onto it."""

    doc_id: str
    tenant_id: str
    kind: DocumentKind
    text: str
    turns: list[Turn] = Field(default_factory=list)
    doc_date: date | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)  # only EXTRACTOR_METADATA keys: never raw PII

    def record_key(self, module: str) -> str:
        """Shape `records`: one record per message and module, upserted by the Message-ID."""
        return f"{self.metadata.get('message_id') or self.doc_id}:{module}"


class EvidenceRecord(BaseModel):
    """A located quote: `quote == raw_documents.text[char_start:char_end]` always holds."""

    evidence_id: str
    item_id: str
    doc_id: str
    tenant_id: str
    schema_version: str
    char_start: int
    char_end: int
    quote: str
    turn_id: str | None
    match_kind: MatchKind
    strength: Strength
    evidence_type: str = "user_quote"
    match_score: float = 100.0


class ItemRecord(BaseModel):
    """One stored item; its evidence rows travel with it so both are written in one transaction."""

    item_id: str
    doc_id: str
    tenant_id: str
    schema_version: str
    item_type: str
    value: dict[str, Any]
    title: str
    confidence: float
    status: ItemStatus
    extracted_by: str
    extractor_version: str
    model: str | None
    review_reasons: list[str] = Field(default_factory=list)
    reasoning_summary: str | None = None
    evidence: list[EvidenceRecord] = Field(default_factory=list)
    probability_correct: float | None = None  # the version's calibration of its features; None: not calibrated
    evidence_features: dict[str, float] = Field(default_factory=dict)  # what the probability was computed from


class RoutingDecision(BaseModel):
    """Seed 003's routing of one document under one schema version, with what it was decided from."""

    outcome: RoutingOutcome
    weighted_confidence: float
    flags: list[str] = Field(default_factory=list)  # clause fields found that call for deep analysis
    missing_fields: list[str] = Field(default_factory=list)  # weighted fields without a grounded value
    reasons: list[str] = Field(default_factory=list)


class ExtractionOutcome(BaseModel):
    """Everything one document's extraction produced; written to the warehouse as one unit."""

    doc_id: str
    tenant_id: str
    schema_version: str
    # pending: not written, the next run extracts it; partial: stored, but a part failed (a module's record
    # fell back), so it is extracted again next run
    status: ExtractionStatus
    extractor_version: str
    scrubber_version: str
    model: str | None = None
    outcome: str = "heuristic"
    error: str | None = None
    items: list[ItemRecord] = Field(default_factory=list)
    dead_letters: list[DeadLetter] = Field(default_factory=list)
    proposed: int = 0
    dropped: int = 0
    capped: int = 0
    stats: dict[str, float] = Field(default_factory=dict)
    routing: RoutingDecision | None = None  # schemas with `options.routing` only


class ScrubbedDocument(BaseModel):
    """The text an extractor may see, and the map back to the raw text that evidence cites."""

    doc_id: str
    tenant_id: str
    text: str
    offset_map: OffsetMap
    pii_counts: dict[str, int]
    scrubber_version: str
    policy: dict[str, Any] = Field(default_factory=dict)  # the tenant policy it was scrubbed with (audit)
