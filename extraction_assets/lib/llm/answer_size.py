"""How much of a model's answer the client takes in, and how much of it a re-ask sends back (how long it may take:
`deadline.py`); an error answer is masked as it comes in.

A hostile or broken endpoint can answer with megabytes (a 5,000,000-character `owner_name`). Unbounded, the
client reads it all, and instructor's re-ask sends the invalid answer and its validation errors back with every
retry, so requests grew to 65 MB. The HTTP transport refuses a response body over MAX_RESPONSE_BYTES while
reading it (a 413 the openai client does not retry), and each re-ask turn is cut to MAX_REASK_CHARS.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from extraction_assets.lib.llm.deadline import attempt, bound_connections

MAX_RESPONSE_BYTES = 2 * 1024 * 1024  # a schema's answer is kilobytes: 50 items of short fields fit many times over
MAX_REASK_CHARS = 4000  # of the invalid answer and of the errors, per re-ask turn: enough to show what to fix


def _cut(text: str, limit: int = MAX_REASK_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]} [... {len(text) - limit} more characters cut]"


def reask_cap(original_turns: int) -> Callable[..., None]:
    """An instructor `completion:kwargs` hook: before each attempt, the turns a re-ask appended after the
    `original_turns` (the model's invalid answer, the validation errors) are cut in place."""

    def cap(*_: Any, **kwargs: Any) -> None:
        for turn in (kwargs.get("messages") or [])[original_turns:]:
            if isinstance(turn.get("content"), str):
                turn["content"] = _cut(turn["content"])
            for call in turn.get("tool_calls") or []:
                function = call.get("function") or {}
                if isinstance(function.get("arguments"), str):
                    function["arguments"] = _cut(function["arguments"])

    return cap


class _BoundedTransport:
    """Wraps the HTTP transport: reads a response body up to `max_bytes`, and answers 413 past it; the request and its
    whole answer within the request's timeout (`deadline.attempt`)."""

    def __init__(self, inner: Any, max_bytes: int) -> None:
        self.inner = inner
        self.max_bytes = max_bytes

    def handle_request(self, request: Any) -> Any:
        with attempt((request.extensions.get("timeout") or {}).get("read")):
            response = self.inner.handle_request(request)
            try:
                chunks = self._read(response)
            finally:
                response.close()
        if chunks is None:
            body = {"error": {"message": f"response body over {self.max_bytes} bytes refused", "type": "too_large"}}
            return type(response)(413, json=body, request=request)
        content = b"".join(chunks)
        if response.status_code >= 400:  # an error may echo what the provider was sent: masked before anything logs it
            content = _masked(content)
        return type(response)(
            response.status_code,
            headers=response.headers,
            content=content,
            request=request,
            extensions=response.extensions,
        )

    def _read(self, response: Any) -> list[bytes] | None:
        if int(response.headers.get("content-length") or 0) > self.max_bytes:
            return None
        chunks, size = [], 0
        stream: Iterator[bytes] = iter(response.stream)
        for chunk in stream:
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
        return chunks

    def close(self) -> None:
        self.inner.close()


def _masked(body: bytes) -> bytes:
    """An error body with every personal value the scrubber finds replaced by its placeholder: openai puts the text
    in its exception, and instructor logs that at ERROR level (to stderr, and to Dagster's compute log) before
    anything of ours sees it."""
    from extraction_assets.lib.pii import masked  # the detectors load with the first error body

    return masked(body.decode("utf-8", "replace")).encode("utf-8")


@cache
def _http() -> Any:
    """The httpx that openai's client is made of (httpx or httpx2)."""
    import openai  # the model client loads with the first call

    return sys.modules[openai.DefaultHttpxClient.__mro__[1].__module__.partition(".")[0]]


@cache
def _tls() -> Any:
    """One TLS context for every client of the process, as the transport would make it: making one loads the CA
    bundle (about 25 ms), and a pass makes a client per extractor."""
    return _http().create_ssl_context()


def bounded_http_client(max_bytes: int = MAX_RESPONSE_BYTES) -> Any:
    """openai's default HTTP client (its limits and timeouts) over a transport that refuses oversized bodies and keeps
    every call's deadlines (`deadline.py`)."""
    import openai

    transport = _http().HTTPTransport(verify=_tls())  # a BaseTransport of whichever httpx openai uses
    bound_connections(transport)
    return openai.DefaultHttpxClient(transport=_BoundedTransport(transport, max_bytes))  # type: ignore[arg-type]
