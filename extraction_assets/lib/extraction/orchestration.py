"""How the heuristic and the model extractor combine, as each schema's front matter chooses.

- `heuristic_only`: the deterministic pack.
- `model_first`: the model; any model failure falls back to the pack.
- `heuristic_first`: the pack; the model only when the pack's weighted confidence is under
  the schema's threshold; the model fills missing and low-confidence fields, booleans are OR-merged;
  a model failure keeps the pack's result and records the error.
- `classify_then_extract`: one classification call, then one record call per module; a
  failed classification fails the document (dead-lettered with its reason); a failed module call falls back
  to the pack's record for that module and the document is extracted again next run (a failed
  module extraction is retried), its records keyed by Message-ID so the retry replaces them.
In `model_first` and `heuristic_first`, a field the pack and the model both answer is settled by their
agreement (`agreement.py`).
A document longer than the schema's `max_input_chars` is asked about in chunks, concurrently (`chunking.py`, merged
in chunk order by `chunk_merge.py`); a failed chunk is asked once more before the mode's fallback applies to the
whole document, so a document is never stored half-read. `extraction_passes` > 1 asks each chunk again with what
was found so far, for what was missed; every pass is its own cached request.
Without a configured model every mode runs the pack, counted as `heuristic` (the offline path); with the kill
switch (`EXTRACTION_LLM_DISABLED`) on, the pack runs too, counted as `disabled` (the model was turned off).
"""

from __future__ import annotations

import functools
import json
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from extraction_assets.lib.extraction.agreement import with_agreement
from extraction_assets.lib.extraction.chunk_merge import merge_chunk_candidates
from extraction_assets.lib.extraction.chunking import Chunk, chunk_input, document_chunks
from extraction_assets.lib.extraction.extractors import ExtractorRun, HeuristicExtractor, heuristic_version
from extraction_assets.lib.llm.budget import Deferred, Prices
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
CHUNK_RETRIES = 1  # a chunk that failed is asked again this many times: losing it loses the whole document
MAX_FOUND_IN_PROMPT = 40  # items of earlier passes listed in a later pass's request
CLASSIFY = "Classify: list the modules that apply (or none)."
# a chunk's longest task line, to size chunks for a small context (a later pass's list of found items is not
# counted: a request it pushes over the context is refused by the client, with its reason)
PART_TASK = "Extract the module_name record. This is part 100 of 100 of a long document: extract what this part says."
MIN_CHUNK_CHARS = 500  # the schema's own lower bound: a context too small for this is refused request by request
T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")


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
        chosen: CandidateItem | None
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
    total["remembered_failures"] = total.get("remembered_failures", 0) + int(stats.remembered_failure)
    total["prompt_tokens"] = total.get("prompt_tokens", 0) + stats.prompt_tokens
    total["completion_tokens"] = total.get("completion_tokens", 0) + stats.completion_tokens
    total["latency_ms"] = total.get("latency_ms", 0) + stats.latency_ms


def _merge(total: dict[str, float], part: dict[str, float]) -> None:
    """One chunk's counted cost into the document's."""
    for key, value in part.items():
        total[key] = total.get(key, 0) + value


class OrchestratedExtractor:
    """The extractor the pipeline runs: heuristic and model combined by the schema's orchestration mode."""

    def __init__(self, client: LLMClient | None = None, kill_switch: bool = False) -> None:
        self.client = client
        self.kill_switch = kill_switch
        self.heuristic = HeuristicExtractor()
        self.concurrency = client.settings.max_concurrency if client else 1
        self.model = client.settings.model if client else None
        self.prices: Prices | None = client.settings.prices if client else None

    def preload_cache(self, entries: dict[str, dict[str, Any]]) -> None:
        if self.client:
            self.client.cache.preload(entries)

    def take_cache_entries(self) -> list[dict[str, Any]]:
        return self.client.cache.take_pending() if self.client else []

    def _model_active(self, schema: SchemaVersion) -> bool:
        return self.client is not None and not self.kill_switch and schema.orchestration != "heuristic_only"

    def version(self, schema: SchemaVersion) -> str:
        pack = heuristic_version(schema)
        if not self._model_active(schema):
            return pack
        assert self.client is not None
        return f"{schema.orchestration}:{self.client.settings.model}+{pack}"

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        pack = functools.cache(lambda: self.heuristic.extract(doc, schema))  # only where a mode needs it
        if not self._model_active(schema):
            outcome = "disabled" if self.kill_switch and schema.orchestration != "heuristic_only" else "heuristic"
            return pack().model_copy(update={"outcome": outcome})
        stats: dict[str, float] = {}
        try:
            return self._extract_with_model(doc, schema, pack, stats)
        except Deferred as deferred:  # the document stays pending; what it cost so far is still counted
            deferred.stats = stats
            raise

    def _extract_with_model(
        self, doc: ExtractionInput, schema: SchemaVersion, pack: Callable[[], ExtractorRun], stats: dict[str, float]
    ) -> ExtractorRun:
        version = self.version(schema)
        if schema.orchestration == "heuristic_first":
            return self._heuristic_first(doc, schema, pack(), version, stats)
        if schema.orchestration == "classify_then_extract":
            return self._classify_then_extract(doc, schema, pack, version, stats)
        try:
            candidates = self._model_candidates(doc, schema, stats)
        except LLMError as exc:
            return self._kept_heuristic(pack(), version, "fallback_used", exc, stats)
        if schema.shape == "fields":  # the pack is cheap: its answer is the model's second opinion
            candidates = with_agreement(schema, candidates, pack().candidates, candidates, doc.text)
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

    def _chunks(self, doc: ExtractionInput, schema: SchemaVersion, output: type[BaseModel]) -> list[Chunk]:
        """The document's chunks at the schema's `max_input_chars`, or smaller where the endpoint's context
        (`EXTRACTION_LLM_CONTEXT_TOKENS`, a local model's, else the schema's `context_tokens`) cannot hold a chunk
        that long with the prompt and the answer."""
        assert self.client is not None
        empty = doc.model_copy(update={"text": ""})
        schema_in_prompt = self.client.settings.schema_in_prompt
        messages = build_messages(schema, empty, output, PART_TASK, schema_in_prompt)
        fits = self.client.input_chars_that_fit(messages, schema.context_tokens)
        limit = schema.max_input_chars if fits is None else max(min(schema.max_input_chars, fits), MIN_CHUNK_CHARS)
        return document_chunks(doc, limit, schema.chunk_overlap_chars)

    def _ask(
        self, doc: ExtractionInput, schema: SchemaVersion, output: type[T], task: str | None = None
    ) -> tuple[T, CallStats]:
        """One request about a document: the schema's prompt and mode, tagged to be found in the cache again."""
        assert self.client is not None
        messages = build_messages(schema, doc, output, task, self.client.settings.schema_in_prompt)
        tags = {"schema_version": schema.key, "doc_id": doc.doc_id}
        return self.client.complete(messages, output, tags, mode=schema.llm_mode)

    def _model_candidates(
        self, doc: ExtractionInput, schema: SchemaVersion, stats: dict[str, float]
    ) -> list[CandidateItem]:
        """Every chunk, every pass; a short document in one pass is exactly one request, as before chunks."""
        output = response_model(schema)
        chunks = self._chunks(doc, schema, output)
        stats["chunks"] = stats.get("chunks", 0) + len(chunks)
        retries = CHUNK_RETRIES if len(chunks) > 1 else 0

        def passes(chunk: Chunk, cost: dict[str, float]) -> list[CandidateItem]:
            part = chunk_input(doc, chunk)
            found: list[CandidateItem] = []
            for number in range(1, schema.extraction_passes + 1):
                parsed, call = self._ask_chunk(part, schema, output, _task(schema, chunk, number, found), retries, cost)
                _add(cost, call)
                if schema.shape == "fields":
                    found += candidates_from_fields(schema, parsed)
                else:
                    found += candidates_from_items(schema, parsed)
            return found

        answers = _over_chunks(chunks, passes, stats, self.concurrency)
        if len(chunks) == 1 and schema.extraction_passes == 1:
            return answers[0][1]
        return merge_chunk_candidates(schema, answers)

    def _ask_chunk(
        self,
        part: ExtractionInput,
        schema: SchemaVersion,
        output: type[T],
        task: str | None,
        retries: int,
        stats: dict[str, float],
    ) -> tuple[T, CallStats]:
        """One chunk's request, asked again after a failure; what failed attempts cost is counted too."""
        for attempt in range(retries + 1):
            try:
                return self._ask(part, schema, output, task)
            except LLMError as exc:
                if attempt == retries:
                    raise
                _add(stats, exc.stats)
                stats["chunk_retries"] = stats.get("chunk_retries", 0) + 1
        raise AssertionError("unreachable")

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
        merged = with_agreement(schema, merge(schema, heuristic, model), heuristic, model, doc.text)
        return self._run(merged, version, "model", stats)

    def _classify_then_extract(
        self,
        doc: ExtractionInput,
        schema: SchemaVersion,
        pack: Callable[[], ExtractorRun],
        version: str,
        stats: dict[str, float],
    ) -> ExtractorRun:
        """Each chunk is classified; a module is extracted from the chunks that name it, its records merged."""
        chunks = self._chunks(doc, schema, response_model(schema))
        stats["chunks"] = stats.get("chunks", 0) + len(chunks)
        try:
            classified = self._each_chunk(doc, schema, chunks, response_model(schema), CLASSIFY, stats)
        except LLMError as exc:
            raise ClassificationError(f"classification failed: {exc}") from exc
        named: dict[str, list[Chunk]] = {}
        for chunk, answer in classified:
            for module in dict.fromkeys(answer.modules):  # type: ignore[attr-defined]
                named.setdefault(module, []).append(chunk)
        candidates: list[CandidateItem] = []
        fell_back: list[str] = []
        for module, where in named.items():
            task = f"Extract the {module} record."
            try:
                records = self._each_chunk(doc, schema, where, module_model(schema, module), task, stats)
            except LLMError as exc:
                _add(stats, exc.stats)
                fell_back.append(f"{module}: {exc}")
                candidates += [
                    c.model_copy(update={"extracted_by": "heuristic"})
                    for c in pack().candidates
                    if c.item_type == module
                ]
                continue
            found = [(chunk, [candidate_from_record(module, r, doc.record_key(module))]) for chunk, r in records]
            candidates += found[0][1] if len(chunks) == 1 else merge_chunk_candidates(schema, found)
        run = self._run(candidates, version, "fallback_used" if fell_back else "model", stats)
        return run.model_copy(update={"error": "; ".join(fell_back) or None, "retry": bool(fell_back)})

    def _each_chunk(
        self,
        doc: ExtractionInput,
        schema: SchemaVersion,
        chunks: list[Chunk],
        output: type[T],
        task: str,
        stats: dict[str, float],
    ) -> list[tuple[Chunk, T]]:
        """One request per chunk, a failed one asked again."""
        retries = CHUNK_RETRIES if chunks and chunks[0].count > 1 else 0

        def ask(chunk: Chunk, cost: dict[str, float]) -> T:
            answer, call = self._ask_chunk(
                chunk_input(doc, chunk), schema, output, _part_task(task, chunk), retries, cost
            )
            _add(cost, call)
            return answer

        return _over_chunks(chunks, ask, stats, self.concurrency)


def _over_chunks(
    chunks: list[Chunk],
    answer: Callable[[Chunk, dict[str, float]], R],
    stats: dict[str, float],
    concurrency: int,
) -> list[tuple[Chunk, R]]:
    """`answer` for every chunk, up to `concurrency` chunks at once (the client keeps the requests in flight, of
    all documents, within the same bound). Each chunk counts its cost apart, added in chunk order, and the
    answers come in chunk order, so nothing depends on which chunk finished first. A failure is raised once no
    chunk is in flight: the first in chunk order that is not a wait for a batch, else the batch wait (in batch
    mode every chunk's request joins the same batch: one batch round per pass, not one per chunk). Once a chunk
    has failed for good, the chunks not started yet are not asked: the document's outcome is settled."""
    settled = threading.Event()

    def attempt(chunk: Chunk) -> tuple[dict[str, float], R | None, LLMError | Deferred | None]:
        cost: dict[str, float] = {}
        if settled.is_set():
            return cost, None, None
        try:
            return cost, answer(chunk, cost), None
        except (LLMError, Deferred) as exc:
            if not (isinstance(exc, Deferred) and exc.reason == "batch"):
                settled.set()
            return cost, None, exc

    if len(chunks) > 1 and concurrency > 1:
        with ThreadPoolExecutor(min(len(chunks), concurrency), thread_name_prefix="chunk") as pool:
            results = list(pool.map(attempt, chunks))
    else:
        results = [attempt(chunk) for chunk in chunks]
    failures = [exc for _, _, exc in results if exc is not None]
    raised = next((e for e in failures if not (isinstance(e, Deferred) and e.reason == "batch")), None)
    raised = raised or next(iter(failures), None)
    for cost, _, exc in results:
        _merge(stats, cost)
        if isinstance(exc, LLMError) and exc is not raised:  # the raised one's cost is counted where it is caught
            _add(stats, exc.stats)
        elif isinstance(exc, Deferred) and exc.cost is not None:  # a request that ran out of time, raised or not
            _add(stats, exc.cost)
    if raised is not None:
        raise raised
    return [(chunk, cast(R, value)) for chunk, (_, value, _) in zip(chunks, results, strict=True)]


def _part_task(task: str, chunk: Chunk) -> str:
    """A task line, and for a chunk of a long document a second line saying which part it is."""
    if chunk.count == 1:
        return task
    return f"{task}\nThis is part {chunk.index + 1} of {chunk.count} of a long document: answer for this part."


def _task(schema: SchemaVersion, chunk: Chunk, number: int, found: list[CandidateItem]) -> str | None:
    """The request's first line: None (the default task) for a whole document's first pass, so its cache
    entries stay those of before chunks; else which part this is, and in later passes what was found."""
    if chunk.count == 1 and number == 1:
        return None
    task = f"Extract {schema.schema_name} data."
    if chunk.count > 1:
        task += f" This is part {chunk.index + 1} of {chunk.count} of a long document: extract what this part says."
    if number > 1:
        listed = [
            {"item_type": c.item_type, "evidence_span": c.evidence_span[:200]} for c in found[:MAX_FOUND_IN_PROMPT]
        ]
        task += (
            f" Pass {number}: these were found already: {json.dumps(listed, ensure_ascii=False)}."
            " Extract only what they miss."
        )
    return task
