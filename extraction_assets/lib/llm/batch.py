"""Backfills through the OpenAI Batch API: deferred requests -> one JSONL upload -> a batch -> answers in the cache.

A run in batch mode sends nothing to the chat endpoint for an uncached request: the client keeps the request
(`BatchRequest`, with the body instructor would have sent) and its document stays pending. The run then uploads
the requests as one JSONL file (`purpose="batch"`) and creates a batch on `/v1/chat/completions`. A later run
(or the sensor that polls) retrieves the batch; once it is completed, or expired or cancelled with part of its
output, every answered line becomes an `llm_cache` entry and extraction answers from the cache. A failed line,
or a line an expired batch never reached, leaves its request uncached: the next run defers it again.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel

if TYPE_CHECKING:
    import openai

ENDPOINT: Final = "/v1/chat/completions"
COMPLETION_WINDOW: Final = "24h"
FINISHED = frozenset({"completed", "expired", "cancelled", "failed"})  # nothing more will be answered
_FENCED = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


class BatchRequest(BaseModel):
    """A request the client did not send: its cache key, what the cache entry needs, and the chat body."""

    request_hash: str
    model: str
    mode: str
    messages: list[dict[str, str]]
    tags: dict[str, str]
    body: dict[str, Any]


class BatchState(BaseModel):
    batch_id: str
    status: str
    output_file_id: str | None = None
    error_file_id: str | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def jsonl(requests: list[BatchRequest]) -> bytes:
    """The Batch API's input file: one line per request, keyed by its request hash."""
    lines = [
        json.dumps({"custom_id": r.request_hash, "method": "POST", "url": ENDPOINT, "body": r.body}, ensure_ascii=False)
        for r in {r.request_hash: r for r in requests}.values()
    ]
    return ("\n".join(lines) + "\n").encode("utf-8")


def submit_batch(raw: openai.OpenAI, requests: list[BatchRequest], metadata: dict[str, str]) -> BatchState:
    uploaded = raw.files.create(file=("requests.jsonl", jsonl(requests)), purpose="batch")
    batch = raw.batches.create(
        input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window=COMPLETION_WINDOW, metadata=metadata
    )
    return BatchState(batch_id=batch.id, status=batch.status)


def retrieve_batch(raw: openai.OpenAI, batch_id: str) -> BatchState:
    batch = raw.batches.retrieve(batch_id)
    return BatchState(
        batch_id=batch.id, status=batch.status, output_file_id=batch.output_file_id, error_file_id=batch.error_file_id
    )


def batch_answers(
    raw: openai.OpenAI, state: BatchState, requests: dict[str, BatchRequest]
) -> tuple[list[dict[str, Any]], list[str]]:
    """Cache entries for the batch's answered lines, and the request hashes of lines that failed."""
    entries: list[dict[str, Any]] = []
    failed: list[str] = []
    if state.output_file_id:
        for line in raw.files.content(state.output_file_id).text.splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            request = requests.get(row.get("custom_id", ""))
            if request is None:
                continue
            response = row.get("response") or {}
            parsed = _parsed(response.get("body") or {}) if response.get("status_code") == 200 else None
            if parsed is None:
                failed.append(request.request_hash)
                continue
            entries.append(_entry(request, state.batch_id, response["body"], parsed))
    if state.error_file_id:
        for line in raw.files.content(state.error_file_id).text.splitlines():
            if line.strip() and (custom_id := json.loads(line).get("custom_id")) in requests:
                failed.append(custom_id)
    return entries, failed


def _parsed(completion: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON object a completion holds (tool call arguments, or the message, fenced or not)."""
    try:
        message = completion["choices"][0]["message"]
    except (KeyError, IndexError, TypeError):
        return None
    calls = message.get("tool_calls") or []
    text = calls[0]["function"]["arguments"] if calls else (message.get("content") or "")
    if fenced := _FENCED.search(text):
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _entry(request: BatchRequest, batch_id: str, completion: dict[str, Any], parsed: dict[str, Any]) -> dict[str, Any]:
    usage = completion.get("usage") or {}
    return {
        "request_hash": request.request_hash,
        "model": request.model,
        "mode": request.mode,
        "request": {"messages": request.messages},
        "response": {"parsed": parsed, "raw": completion, "batch_id": batch_id},
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
        "latency_ms": None,
        **request.tags,
    }
