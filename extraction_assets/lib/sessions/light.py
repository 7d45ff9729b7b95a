"""Lightweight extraction during a session: which fields the respondent has covered so far, and how surely.

It only feeds `session_state` (the interview runtime reads it to decide what to ask next); it never writes an
item. Offline it is the schema's heuristic pack; with `EXTRACTION_SESSION_LIGHT_MODEL` set (a small model on the
configured endpoint) it asks that model with its own prompt, `prompts/session_light.md`, never the final one.
Either way a field counts as covered only when the quote given for it is found in the transcript.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, Field

from extraction_assets.lib.extraction.factory import llm_settings
from extraction_assets.lib.extraction.grounding import ground, turn_for_span
from extraction_assets.lib.heuristics import get_pack
from extraction_assets.lib.llm.client import LLMClient
from extraction_assets.lib.llm.prompting import build_messages
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import ModelSettings

LIGHT_PROMPT = "session_light.md"


class FieldState(BaseModel):
    """One field's coverage after the latest respondent turn."""

    field_name: str
    objective: str
    covered: bool
    confidence: float = 0.0
    value: Any = None
    turn_id: str | None = None


class LightExtractor(Protocol):
    name: str  # `heuristic`, or the model's name

    def assess(self, doc: ExtractionInput, schema: SchemaVersion) -> list[FieldState]: ...


def _state(schema: SchemaVersion, found: dict[str, tuple[Any, float, str | None]]) -> list[FieldState]:
    """Every field of the schema, covered where a grounded value was found."""
    states = []
    for spec in schema.fields:
        value, confidence, turn_id = found.get(spec.name, (None, 0.0, None))
        states.append(
            FieldState(
                field_name=spec.name,
                objective=spec.objective_name,
                covered=spec.name in found,
                confidence=confidence,
                value=value,
                turn_id=turn_id,
            )
        )
    return states


def _grounded_turn(doc: ExtractionInput, quote: str | None, hint: int | None = None) -> tuple[bool, str | None]:
    located = ground(quote, doc.text, hint=hint) if quote and quote.strip() else None
    if located is None:
        return False, None
    return True, turn_for_span(doc.turns, located.start, located.end)


class HeuristicLight:
    """The schema's heuristic pack over the transcript so far: free, offline, the same answer every time."""

    name = "heuristic"

    def assess(self, doc: ExtractionInput, schema: SchemaVersion) -> list[FieldState]:
        found: dict[str, tuple[Any, float, str | None]] = {}
        for candidate in get_pack(schema.heuristic).extract(doc, schema):
            value = candidate.value.get("value") if set(candidate.value) == {"value"} else candidate.value
            grounded, turn_id = _grounded_turn(doc, candidate.evidence_span, candidate.span_hint)
            if grounded and value is not None:
                found[candidate.item_type] = (value, schema.heuristic_band.clamp(candidate.confidence), turn_id)
        return _state(schema, found)


class LightField(BaseModel):
    """A small model's answer for one field."""

    field: str
    covered: bool
    confidence: float = Field(ge=0.0, le=1.0)
    value: Any = None
    evidence_span: str | None = None


class LightAnswer(BaseModel):
    fields: list[LightField]


def light_instructions(prompts_dir: Path, schema: SchemaVersion) -> str:
    """The light prompt with the schema's fields listed (name, type, objective, description, hint)."""
    template = (prompts_dir / LIGHT_PROMPT).read_text(encoding="utf-8")
    lines = [
        f"- {f.name} ({f.type}{', one of ' + ', '.join(f.enum_options) if f.enum_options else ''}; "
        f"objective {f.objective_name}): {f.description} Signals: {' '.join(f.extraction_hint.split())}"
        for f in schema.fields
    ]
    return template.replace("{fields}", "\n".join(lines))


class ModelLight:
    """A small model asked with the light prompt; its quotes are checked against the transcript."""

    def __init__(self, client: Any, prompts_dir: Path) -> None:  # an `llm.LLMClient`
        self.client = client
        self.prompts_dir = prompts_dir
        self.name = str(client.settings.model)

    def assess(self, doc: ExtractionInput, schema: SchemaVersion) -> list[FieldState]:
        light = schema.model_copy(update={"instructions": light_instructions(self.prompts_dir, schema)})
        messages = build_messages(light, doc, LightAnswer, task="Say which fields the respondent has covered so far.")
        answer, _stats = self.client.complete(messages, LightAnswer, tags={"doc_id": doc.doc_id})
        names = {f.name for f in schema.fields}
        found: dict[str, tuple[Any, float, str | None]] = {}
        for field in answer.fields:
            grounded, turn_id = _grounded_turn(doc, field.evidence_span)
            if field.field in names and field.covered and grounded:
                found[field.field] = (field.value, schema.model_band.clamp(field.confidence), turn_id)
        return _state(schema, found)


def covered_objectives(states: list[FieldState]) -> list[str]:
    """Objectives all of whose fields are covered, in the schema's order."""
    by_objective: dict[str, bool] = {}
    for state in states:
        by_objective[state.objective] = by_objective.get(state.objective, True) and state.covered
    return [name for name, covered in by_objective.items() if covered]


def light_extractor(choice: ModelSettings, light_model: str | None, prompts_dir: Path) -> LightExtractor:
    """The small model on the configured endpoint when `light_model` is set, else the heuristic pack.

    `choice` is the pipeline's model path (`ModelSettings`, or the `extractor` resource, which is one); the light
    call is short (10 s at most, no re-ask), since a slow answer is worth less than the next turn.
    """
    settings = llm_settings(choice) if light_model else None
    if settings is None:
        return HeuristicLight()
    quick = settings.model_copy(
        update={"model": light_model, "timeout_s": min(settings.timeout_s, 10.0), "validation_retries": 0}
    )
    return ModelLight(LLMClient(quick), prompts_dir)
