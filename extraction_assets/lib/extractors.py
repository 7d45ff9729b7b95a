"""Extractors behind one contract: given scrubbed text and a schema version, propose candidate items.

The heuristic extractor is deterministic and free; model-backed extractors implement the same
protocol, so orchestration (model first, heuristic first, ...) never cares which one it holds.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from extraction_assets.lib.heuristics import get_pack, pack_version
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

ExtractedBy = Literal["heuristic", "model"]


class ExtractorRun(BaseModel):
    """What one extractor proposed for one document, and which extractor it really was."""

    candidates: list[CandidateItem]
    extracted_by: ExtractedBy
    extractor_version: str
    model: str | None = None
    outcome: str = "heuristic"
    error: str | None = None
    stats: dict[str, float] = Field(default_factory=dict)


class Extractor(Protocol):
    def version(self, schema: SchemaVersion) -> str:
        """The configured pipeline version: a change makes every document of the partition pending again."""
        ...

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun: ...


class HeuristicExtractor:
    """The offline default: the schema's heuristic pack, no network, same output every time."""

    def version(self, schema: SchemaVersion) -> str:
        return pack_version(schema.heuristic)

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        pack = get_pack(schema.heuristic)
        return ExtractorRun(
            candidates=pack.extract(doc, schema),
            extracted_by="heuristic",
            extractor_version=self.version(schema),
            outcome="heuristic",
        )
