"""Long documents in chunks: the CUAD dev contracts and the QMSum dev meetings through the fake endpoint.

For each dataset: requests and tokens per document with the schema's chunks (`max_input_chars` 12000,
overlap 400) against one whole-document request, and whether every gold span lies inside at least one chunk
(a span longer than a chunk cannot, and is counted apart). Chunks are cut as extraction cuts them: at the
document's own turns where it has them (a transcript's lines). The fake answers with the schema's heuristic pack
and counts a token per four characters, so token figures compare the two ways of asking, not a real model.
The model is asked for every document (`model_first`), whatever the schema's own mode.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

from evals.bench_inbox import evalsets_dir
from extraction_assets.fake_llm import FakeLLMServer
from extraction_assets.lib.evaluation import gold_document, load_registry, read_gold
from extraction_assets.lib.extraction import OrchestratedExtractor, document_chunks, extract_document, extraction_input
from extraction_assets.lib.llm import LLMClient, LLMSettings
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.schemas import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

# (dataset, schema, chunk settings): the defaults, and for meetings, whose gold evidence runs to thousands of
# characters (turn ranges: median 2,899; topics: median 7,389, 10% over 19,000), wider chunks with the widest
# overlap a schema allows (a quarter of a chunk), up to the 48,000 characters (about 12,000 tokens) a schema for
# long transcripts on a long-context model would set
RUNS = [
    ("cuad", "contract@v1", {}),
    ("qmsum_meetings", "pulse@v1", {}),
    ("qmsum_meetings", "pulse@v1", {"max_input_chars": 24_000, "chunk_overlap_chars": 6_000}),
    ("qmsum_meetings", "pulse@v1", {"max_input_chars": 48_000, "chunk_overlap_chars": 12_000}),
]
WHOLE = 10_000_000  # max_input_chars that keeps every document whole


def gold_spans(value: Any) -> Iterator[tuple[int, int]]:
    """Every {start, end} pair anywhere in a gold record (clause spans, evidence spans)."""
    if isinstance(value, dict):
        if isinstance(value.get("start"), int) and isinstance(value.get("end"), int):
            yield value["start"], value["end"]
        for inner in value.values():
            yield from gold_spans(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from gold_spans(inner)


def spans_by_part(gold: dict[str, Any]) -> Iterator[tuple[str, int, int]]:
    """Every gold span with the part of the record it belongs to (QMSum: `items`, the queries' evidence turns, and
    `topics`, the topic segments; CUAD: `categories`), since how long they run differs by part."""
    for part, value in gold.items():
        for start, end in gold_spans(value):
            yield part, start, end


def _measure(
    dataset: str, schema_key: str, chunking: dict[str, int], fake: FakeLLMServer
) -> dict[str, float | int | str]:
    entry = load_registry().entry(dataset)
    chunked = load_schema(DEFAULT_PROMPTS, schema_key).model_copy(update={"orchestration": "model_first", **chunking})
    whole = chunked.model_copy(update={"max_input_chars": WHOLE})
    settings = LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0, refresh_cache=True)
    figures: dict[str, list[int]] = {k: [] for k in ("requests", "tokens", "whole_tokens", "chars")}
    parts: dict[str, list[int]] = {}  # part -> [spans, in a chunk, longer than a chunk]
    for record in read_gold(evalsets_dir() / dataset / "dev.jsonl", None):
        if isinstance(record, str):
            continue
        doc = gold_document(entry, record)
        scrubbed = scrub_document(doc)
        chunks = document_chunks(extraction_input(doc, scrubbed), chunked.max_input_chars, chunked.chunk_overlap_chars)
        for part, start, end in spans_by_part(record.gold):
            s, e = scrubbed.offset_map.to_scrubbed(start, end)
            counts = parts.setdefault(part, [0, 0, 0])
            counts[0] += 1
            if e - s > chunked.max_input_chars:
                counts[2] += 1
            elif any(c.start <= s and e <= c.end for c in chunks):
                counts[1] += 1
        for schema, requests_key, tokens_key in ((chunked, "requests", "tokens"), (whole, None, "whole_tokens")):
            outcome = extract_document(doc, scrubbed, schema, OrchestratedExtractor(LLMClient(settings)))
            stats = outcome.stats
            figures[tokens_key].append(int(stats.get("prompt_tokens", 0) + stats.get("completion_tokens", 0)))
            if requests_key:
                figures[requests_key].append(int(stats.get("calls", 0)))
        figures["chars"].append(len(scrubbed.text))
    tokens, whole_tokens = sum(figures["tokens"]), sum(figures["whole_tokens"])
    return {
        "documents": len(figures["chars"]),
        "chars_median": int(statistics.median(figures["chars"])),
        "chars_max": max(figures["chars"]),
        "requests_per_document_mean": round(statistics.mean(figures["requests"]), 2),
        "requests_per_document_max": max(figures["requests"]),
        "tokens_per_document_mean": round(tokens / len(figures["tokens"])),
        "whole_document_tokens_per_document_mean": round(whole_tokens / len(figures["whole_tokens"])),
        "chunk_token_overhead": round(tokens / whole_tokens - 1, 4),
        "gold_spans": sum(c[0] for c in parts.values()),
        "gold_spans_in_a_chunk": sum(c[1] for c in parts.values()),
        "gold_spans_longer_than_a_chunk": sum(c[2] for c in parts.values()),
        **{f"gold_spans_{part}_in_a_chunk": f"{c[1]}/{c[0]} ({c[2]} longer than a chunk)" for part, c in parts.items()},
    }


def bench_chunks() -> dict[str, float | int | str]:
    flat: dict[str, float | int | str] = {}
    with FakeLLMServer() as fake:
        for dataset, key, chunking in RUNS:
            label = dataset + "".join(f"_{v}" for v in chunking.values())
            flat |= {f"{label}_{name}": value for name, value in _measure(dataset, key, chunking, fake).items()}
    flat["measured_on"] = (
        "the dev.jsonl of cuad (contract@v1) and qmsum_meetings (pulse@v1), model_first through the in-process fake "
        "endpoint (tokens = characters / 4), default chunks (max_input_chars 12000, overlap 400; qmsum also "
        "24000 / 6000 and 48000 / 12000, the figures named so) against one whole-document request; gold spans mapped "
        "to scrubbed offsets"
    )
    return flat
