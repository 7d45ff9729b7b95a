"""Long documents in chunks: the CUAD dev contracts and the QMSum dev meetings through the fake endpoint.

For each dataset and chunk size: requests and tokens per document in chunks against one whole-document request,
and whether the evidence an item would quote lies whole in at least one chunk: for QMSum every turn inside a
gold evidence span or topic (a turn is what an item quotes; a topic segment runs to thousands of characters and
is no evidence), for CUAD every gold clause span. Chunks are cut as extraction cuts them: at the document's own
turns where it has them (a transcript's lines). The fake answers with the schema's heuristic pack and counts a
token per four characters, so token figures compare the two ways of asking, not a real model. The model is asked
for every document (`model_first`), whatever the schema's own mode.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from typing import Any

from evals.bench_inbox import evalsets_dir
from evals.fake_llm import FakeLLMServer
from extraction_assets.lib.evaluation import gold_document, load_registry, read_gold
from extraction_assets.lib.extraction import OrchestratedExtractor, document_chunks, extract_document, extraction_input
from extraction_assets.lib.llm import LLMClient, LLMSettings
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

# (dataset, schema, chunk size): the default (12,000 characters, about 3,000 tokens), half of it (what an 8k-token
# endpoint leaves beside the contract schema's prompt and answer) and twice it; overlap at the default, 400
SIZES = (12_000, 6_000, 24_000)
RUNS = [
    (dataset, schema, size)
    for dataset, schema in (("cuad", "contract@v1"), ("qmsum_meetings", "pulse@v1"))
    for size in SIZES
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


def evidence_targets(dataset: str, gold: dict[str, Any], turns: list[tuple[int, int]]) -> set[tuple[int, int]]:
    """What must lie whole in a chunk, in the gold's offsets: CUAD's clause spans; QMSum's turns inside a gold
    span (each turn once)."""
    spans = set(gold_spans(gold))
    if dataset == "cuad":
        return spans
    return {(ts, te) for s, e in spans for ts, te in turns if s <= ts and te <= e}


def _measure(dataset: str, schema_key: str, size: int, fake: FakeLLMServer) -> dict[str, float | int | str]:
    entry = load_registry().entry(dataset)
    chunked = load_schema(DEFAULT_PROMPTS, schema_key).model_copy(
        update={"orchestration": "model_first", "max_input_chars": size}
    )
    whole = chunked.model_copy(update={"max_input_chars": WHOLE})
    settings = LLMSettings(base_url=fake.base_url, model="fake-model", http_retries=0, refresh_cache=True)
    figures: dict[str, list[int]] = {k: [] for k in ("requests", "tokens", "whole_tokens", "chars")}
    reach = [0, 0, 0]  # targets, whole in a chunk, longer than a chunk
    for record in read_gold(evalsets_dir() / dataset / "dev.jsonl", None):
        if isinstance(record, str):
            continue
        doc = gold_document(entry, record)
        scrubbed = scrub_document(doc)
        part = extraction_input(doc, scrubbed)
        chunks = document_chunks(part, chunked.max_input_chars, chunked.chunk_overlap_chars)
        turns = [scrubbed.offset_map.to_raw(t.start, t.end) for t in part.turns]
        for start, end in evidence_targets(dataset, record.gold, turns):
            s, e = scrubbed.offset_map.to_scrubbed(start, end)
            reach[0] += 1
            if e - s > chunked.max_input_chars:
                reach[2] += 1
            elif any(c.start <= s and e <= c.end for c in chunks):
                reach[1] += 1
        for schema, requests_key, tokens_key in ((chunked, "requests", "tokens"), (whole, None, "whole_tokens")):
            outcome = extract_document(doc, scrubbed, schema, OrchestratedExtractor(LLMClient(settings)))
            stats = outcome.stats
            figures[tokens_key].append(int(stats.get("prompt_tokens", 0) + stats.get("completion_tokens", 0)))
            if requests_key:
                figures[requests_key].append(int(stats.get("calls", 0)))
        figures["chars"].append(len(scrubbed.text))
    tokens, whole_tokens = sum(figures["tokens"]), sum(figures["whole_tokens"])
    what = "gold_spans" if dataset == "cuad" else "gold_evidence_turns"
    return {
        "documents": len(figures["chars"]),
        "chars_median": int(statistics.median(figures["chars"])),
        "chars_max": max(figures["chars"]),
        "requests_per_document_mean": round(statistics.mean(figures["requests"]), 2),
        "requests_per_document_max": max(figures["requests"]),
        "tokens_per_document_mean": round(tokens / len(figures["tokens"])),
        "whole_document_tokens_per_document_mean": round(whole_tokens / len(figures["whole_tokens"])),
        "chunk_token_overhead": round(tokens / whole_tokens - 1, 4),
        f"{what}_whole_in_a_chunk": f"{reach[1]}/{reach[0] - reach[2]} ({reach[2]} longer than a chunk)",
        f"{what}_whole_in_a_chunk_share": round(reach[1] / max(reach[0] - reach[2], 1), 4),
    }


def bench_chunks() -> dict[str, float | int | str]:
    flat: dict[str, float | int | str] = {}
    with FakeLLMServer() as fake:
        for dataset, key, size in RUNS:
            flat |= {f"{dataset}_{size}_{name}": value for name, value in _measure(dataset, key, size, fake).items()}
    flat["measured_on"] = (
        "the dev.jsonl of cuad (contract@v1) and qmsum_meetings (pulse@v1), model_first through the in-process fake "
        "endpoint (tokens = characters / 4), chunks of max_input_chars 12000 (the default), 6000 and 24000 "
        "(overlap 400, the default), each named so, against one whole-document request; gold spans and turns mapped "
        "to scrubbed offsets"
    )
    return flat
