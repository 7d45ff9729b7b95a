"""How the heuristic and the model extractor combine, as each schema's front matter chooses.

- `heuristic_only`: the deterministic pack.
- `model_first`: the model; any model failure falls back to the pack.
- `heuristic_first`: the pack; the model only when the pack's weighted confidence is under
  the schema's threshold; the model fills missing and low-confidence fields, booleans are OR-merged;
  a model failure keeps the pack's result and records the error.
- `classify_then_extract`: one classification call, then one record call per module; a
  failed classification fails the document (dead-lettered with its reason); a failed module call falls back
  to the pack's record for that module and the document is extracted again next run (seed 001: a failed
  module extraction is retried), its records keyed by Message-ID so the retry replaces them.
Without a configured model every mode runs the pack, counted as `heuristic` (the offline path); with the kill
switch (`EXTRACTION_LLM_DISABLED`) on, the pack runs too, counted as `disabled` (the model was turned off).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

from extraction_assets.lib.extraction.extractors import ExtractorRun, HeuristicExtractor
from extraction_assets.lib.llm.client import CallStats, LLMClient, LLMError
from extraction_assets.lib.llm.prompting import build_messages
from extraction_assets.lib.llm.response_models import (
    candidate_from_record,
    candidates_from_fields,
    candidates_from_items,
    module_model,
    response_model,
)
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

DEFAULT_MODEL_THRESHOLD = 0.70
T = TypeVar("T", bound=BaseModel)


class ClassificationError(RuntimeError):
    """The model could not say which modules apply: the document cannot be routed and is marked failed."""


def weighted_confidence(schema: SchemaVersion, candidates: Iterable[CandidateItem]) -> float:
    """Seed 003's weighted confidence: each field's best confidence (0 when missing), weighted by the schema."""
    weights: dict[str, float] = schema.options.get("field_weights", {})
    best: dict[str, float] = defaultdict(float)
    for c in candidates:
        best[c.item_type] = max(best[c.item_type], c.confidence)
    total = sum(weights.get(f.name, 1.0) for f in schema.fields)
    score = sum(weights.get(f.name, 1.0) * best[f.name] for f in schema.fields)
    return round(score / total, 4) if total else 0.0


def merge(schema: SchemaVersion, heuristic: list[CandidateItem], model: list[CandidateItem]) -> list[CandidateItem]:
    """Field-level merge: the model fills missing and low-confidence fields; booleans are OR-merged."""
    if schema.shape != "fields":
        return [*heuristic, *model]
    merged = []
    for spec in schema.fields:
        h = max((c for c in heuristic if c.item_type == spec.name), key=lambda c: c.confidence, default=None)
        m = max((c for c in model if c.item_type == spec.name), key=lambda c: c.confidence, default=None)
        if spec.type == "boolean" and h is not None and m is not None:
            chosen = h if h.value.get("value") or not m.value.get("value") else m
        elif h is None or (m is not None and h.confidence < spec.confidence_threshold):
            chosen = m
        else:
            chosen = h
        if chosen is not None:
            merged.append(chosen)
    return merged


def _add(total: dict[str, float], stats: CallStats) -> None:
    total["calls"] = total.get("calls", 0) + stats.calls
    total["cache_hits"] = total.get("cache_hits", 0) + int(stats.cached)
    total["prompt_tokens"] = total.get("prompt_tokens", 0) + stats.prompt_tokens
    total["completion_tokens"] = total.get("completion_tokens", 0) + stats.completion_tokens
    total["latency_ms"] = total.get("latency_ms", 0) + stats.latency_ms


class OrchestratedExtractor:
    """The extractor the pipeline runs: heuristic and model combined by the schema's orchestration mode."""

    def __init__(self, client: LLMClient | None = None, kill_switch: bool = False) -> None:
        self.client = client
        self.kill_switch = kill_switch
        self.heuristic = HeuristicExtractor()
        self.concurrency = client.settings.max_concurrency if client else 1
        self.model = client.settings.model if client else None

    def preload_cache(self, entries: dict[str, dict[str, Any]]) -> None:
        if self.client:
            self.client.cache.preload(entries)

    def take_cache_entries(self) -> list[dict[str, Any]]:
        return self.client.cache.take_pending() if self.client else []

    def _model_active(self, schema: SchemaVersion) -> bool:
        return self.client is not None and not self.kill_switch and schema.orchestration != "heuristic_only"

    def version(self, schema: SchemaVersion) -> str:
        from extraction_assets.lib.heuristics import pack_version  # the packs (~1 s) load when first used

        pack = pack_version(schema.heuristic)
        if not self._model_active(schema):
            return pack
        assert self.client is not None
        return f"{schema.orchestration}:{self.client.settings.model}+{pack}"

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        pack = functools.cache(lambda: self.heuristic.extract(doc, schema))  # only where a mode needs it
        if not self._model_active(schema):
            outcome = "disabled" if self.kill_switch and schema.orchestration != "heuristic_only" else "heuristic"
            return pack().model_copy(update={"outcome": outcome})
        version = self.version(schema)
        stats: dict[str, float] = {}
        if schema.orchestration == "heuristic_first":
            return self._heuristic_first(doc, schema, pack(), version, stats)
        if schema.orchestration == "classify_then_extract":
            return self._classify_then_extract(doc, schema, pack, version, stats)
        try:
            candidates = self._model_candidates(doc, schema, stats)
        except LLMError as exc:
            return self._kept_heuristic(pack(), version, "fallback_used", exc, stats)
        return self._run(candidates, version, "model", stats)

    def _kept_heuristic(
        self, pack: ExtractorRun, version: str, outcome: str, exc: LLMError, stats: dict[str, float]
    ) -> ExtractorRun:
        """The model failed: the pack's result stands, with what the failed call cost and why it failed."""
        _add(stats, exc.stats)
        return pack.model_copy(
            update={
                "extractor_version": version,
                "model": self.model,  # tried: the status row says which model failed
                "outcome": outcome,
                "error": str(exc),
                "stats": stats,
            }
        )

    def _run(
        self, candidates: list[CandidateItem], version: str, outcome: str, stats: dict[str, float]
    ) -> ExtractorRun:
        assert self.client is not None
        return ExtractorRun(
            candidates=candidates,
            extracted_by="model",  # merged heuristic candidates carry their own extracted_by
            extractor_version=version,
            model=self.client.settings.model,
            outcome=outcome,
            stats=stats,
        )

    def _ask(
        self, doc: ExtractionInput, schema: SchemaVersion, output: type[T], task: str | None = None
    ) -> tuple[T, CallStats]:
        """One request about a document: the schema's prompt and mode, tagged to be found in the cache again."""
        assert self.client is not None
        messages = build_messages(schema, doc, output, task)
        tags = {"schema_version": schema.key, "doc_id": doc.doc_id}
        return self.client.complete(messages, output, tags, mode=schema.llm_mode)

    def _model_candidates(self, doc: ExtractionInput, schema: SchemaVersion, stats: dict[str, float]):
        output = response_model(schema)
        parsed, call = self._ask(doc, schema, output)
        _add(stats, call)
        if schema.shape == "fields":
            return candidates_from_fields(schema, parsed)
        return candidates_from_items(schema, parsed)

    def _heuristic_first(
        self, doc: ExtractionInput, schema: SchemaVersion, pack: ExtractorRun, version: str, stats: dict[str, float]
    ) -> ExtractorRun:
        score = weighted_confidence(schema, pack.candidates)
        stats["weighted_confidence"] = score
        if score >= float(schema.options.get("model_threshold", DEFAULT_MODEL_THRESHOLD)):
            return pack.model_copy(update={"extractor_version": version, "outcome": "skipped", "stats": stats})
        heuristic = [c.model_copy(update={"extracted_by": "heuristic"}) for c in pack.candidates]
        try:
            model = self._model_candidates(doc, schema, stats)
        except LLMError as exc:
            return self._kept_heuristic(pack, version, "failed", exc, stats)
        return self._run(merge(schema, heuristic, model), version, "model", stats)

    def _classify_then_extract(
        self,
        doc: ExtractionInput,
        schema: SchemaVersion,
        pack: Callable[[], ExtractorRun],
        version: str,
        stats: dict[str, float],
    ) -> ExtractorRun:
        routing = response_model(schema)
        try:
            parsed, call = self._ask(doc, schema, routing, task="Classify: list the modules that apply (or none).")
        except LLMError as exc:
            raise ClassificationError(f"classification failed: {exc}") from exc
        _add(stats, call)
        candidates: list[CandidateItem] = []
        fell_back: list[str] = []
        for module in dict.fromkeys(parsed.modules):  # type: ignore[attr-defined]
            output = module_model(schema, module)
            try:
                record, call = self._ask(doc, schema, output, task=f"Extract the {module} record.")
            except LLMError as exc:
                _add(stats, exc.stats)
                fell_back.append(f"{module}: {exc}")
                candidates += [
                    c.model_copy(update={"extracted_by": "heuristic"})
                    for c in pack().candidates
                    if c.item_type == module
                ]
                continue
            _add(stats, call)
            candidates.append(candidate_from_record(module, record, doc.record_key(module)))
        run = self._run(candidates, version, "fallback_used" if fell_back else "model", stats)
        return run.model_copy(update={"error": "; ".join(fell_back) or None, "retry": bool(fell_back)})
