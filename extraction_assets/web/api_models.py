"""The interview API's request and response bodies; the OpenAPI description is built from
these same models, so what is validated and what is documented cannot drift apart."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from extraction_assets.lib.review.corrections import MAX_NOTE_CHARS


class EvidenceOut(BaseModel):
    """One evidence span of a field. The quote is shown scrubbed (placeholders for personal data); the offsets
    are those of the raw transcript."""

    id: str
    turn_id: str | None = Field(description="the transcript turn holding the span")
    quote: str
    char_start: int
    char_end: int
    evidence_type: str = Field(description="user_quote, tool_selection, uploaded_artifact or system_observation")
    strength: Literal["strong", "medium", "weak"]
    match_kind: Literal["exact", "normalized", "fuzzy"]


class ExtractedFieldOut(BaseModel):
    """One output field of a session (an `extracted_items` row), with every evidence span."""

    id: str = Field(description="the item id, used by PATCH and history")
    session_id: str
    schema_field_id: str = Field(description="the output schema's field name")
    field_name: str
    value: Any = Field(description="the value in the field's type; null for a required field not answered")
    normalized_value: Any = None
    confidence: float
    probability_correct: float | None = Field(
        default=None, description="the calibrated probability that the value is right; null where not calibrated"
    )
    status: Literal["draft", "needs_review", "accepted", "rejected"]
    extracted_by: Literal["heuristic", "model", "human"]
    model: str | None
    schema_version_id: str = Field(description="the schema version the record is bound to, e.g. interview@v1")
    extractor_version: str
    reasoning_summary: str | None
    review_reasons: list[str]
    updated_by: str | None
    updated_at: datetime
    version: str = Field(
        description="the field's version: a PATCH names it (If-Match or `version`) and is refused with 409 when the "
        "field changed since"
    )
    evidence: list[EvidenceOut]


class SessionFieldsOut(BaseModel):
    session_id: str
    tenant_id: str
    status: Literal["in_progress", "completed"]
    schema_version_id: str
    fields: list[ExtractedFieldOut]


class FieldStateOut(BaseModel):
    """A field's coverage after the latest respondent turn (light extraction; never a stored record)."""

    field_name: str
    objective: str
    covered: bool
    confidence: float
    value: Any = None
    turn_id: str | None
    after_turn: str | None = Field(description="the latest respondent turn when it was computed")
    extractor: str = Field(description="heuristic, or the light model's name")
    updated_at: datetime


class SessionStateOut(BaseModel):
    """What the interview runtime reads to decide what to ask next."""

    session_id: str
    tenant_id: str
    status: Literal["in_progress", "completed"]
    schema_version_id: str
    objectives_covered: list[str]
    light_error: str | None = Field(description="why the last light extraction failed (the session went on)")
    fields: list[FieldStateOut]


class FieldPatch(BaseModel):
    """A reviewer's correction; a member left out is left as it is. Goes through the same rules and audit as the
    command line's `review correct`."""

    model_config = ConfigDict(extra="forbid")

    value: Any = None
    normalized_value: Any = None
    status: Literal["accepted", "rejected", "needs_review"] | None = None
    note: str | None = Field(default=None, description="why, for the audit trail", max_length=MAX_NOTE_CHARS)
    version: str | None = Field(
        default=None,
        description="the version of the field the change was made against (else the If-Match header): required",
    )


class PatchOut(BaseModel):
    changed: bool
    reason: str | None = Field(default=None, description="why nothing changed")
    audit_seq: int | None = Field(default=None, description="the audit_log entry of the change")
    field: ExtractedFieldOut | None = None


class ReExtractIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version_id: str = Field(description="the schema version to extract the session under, e.g. interview@v2")
    confirm: bool = Field(default=False, description="also overwrite accepted, rejected and human-corrected fields")


class ReExtractOut(BaseModel):
    session_id: str
    schema_version_id: str
    items_stored: int
    overwrote: int = Field(description="draft / needs_review fields replaced")
    overwrote_with_confirmation: int = Field(description="accepted, rejected or corrected fields replaced")


class ConfirmationNeeded(BaseModel):
    """409: the re-extraction would overwrite people's work; nothing was changed. Send `confirm: true` to go on."""

    error: str
    would_overwrite: int
    need_confirmation: int
    protected_by_status: dict[str, int]


class HistoryEntryOut(BaseModel):
    seq: int
    occurred_at: datetime
    actor: str
    action: str
    changes: dict[str, list[Any]] = Field(description="field -> [before, after]")
    note: str | None


class ErrorOut(BaseModel):
    error: str


class ConflictOut(BaseModel):
    """409: the field changed since the version the PATCH named; nothing was changed. The field as it is now."""

    error: str
    field: ExtractedFieldOut | None = None
