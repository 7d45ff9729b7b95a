"""Extractors behind one contract: given scrubbed text and a schema version, propose candidate items.

The heuristic extractor is deterministic and free; model-backed extractors implement the same
protocol, so orchestration (model first, heuristic first, ...) never cares which one it holds.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from extraction_assets.lib.llm.budget import Prices
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
    retry: bool = False  # a part failed (a module's record): what was found is stored, the document runs again


class Extractor(Protocol):
    concurrency: int  # documents it can usefully work on at once (a model endpoint: many; CPU-bound: one)
    model: str | None  # the model it may call, None offline
    prices: Prices | None  # the model's prices per million tokens, to estimate a run's cost

    def version(self, schema: SchemaVersion) -> str:
        """The configured pipeline version: a change makes every document of the partition pending again."""
        ...

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun: ...

    def preload_cache(self, entries: dict[str, dict[str, Any]]) -> None:
        """Cached model answers for the documents about to be extracted."""
        ...

    def take_cache_entries(self) -> list[dict[str, Any]]:
        """Model responses obtained since the last call, to be stored with the batch they served."""
        ...


def heuristic_version(schema: SchemaVersion) -> str:
    """The schema's pack version, with its calibration's fingerprint where the version is calibrated: a new pack or
    a refit that changes how items are scored makes the partition's documents pending again."""
    from extraction_assets.lib.heuristics import pack_version  # the registry only: no pack loads

    pack = pack_version(schema.heuristic)
    calibration = schema.calibration
    return f"{pack}+{calibration.tag}" if calibration is not None and calibration.status == "calibrated" else pack


class HeuristicExtractor:
    """The offline default: the schema's heuristic pack, no network, same output every time."""

    concurrency = 1
    model: str | None = None
    prices: Prices | None = None

    def preload_cache(self, entries: dict[str, dict[str, Any]]) -> None:
        return None

    def take_cache_entries(self) -> list[dict[str, Any]]:
        return []

    def version(self, schema: SchemaVersion) -> str:
        return heuristic_version(schema)

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        from extraction_assets.lib.heuristics import get_pack  # not with the code location: the pack loads here

        pack = get_pack(schema.heuristic)
        return ExtractorRun(
            candidates=pack.extract(doc, schema),
            extracted_by="heuristic",
            extractor_version=self.version(schema),
            outcome="heuristic",
        )
