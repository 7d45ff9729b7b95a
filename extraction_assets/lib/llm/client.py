"""The model client: instructor + openai against any OpenAI-compatible endpoint, with a response cache.

Transport retries (429 with Retry-After, 5xx, timeouts) are the openai client's exponential backoff;
validation retries are instructor's re-ask, which feeds the validation error back to the model.
Every failure surfaces as `LLMError`, so orchestration can fall back instead of failing. A call has `timeout_s` in all,
retries and re-asks included, to its answer's last byte (`deadline.py`): past it the call raises `Deferred("deadline")`
and its document stays pending for the next run; once as many calls in a row as may be in flight at once have run out
of time, the endpoint is taken for stuck and the run's remaining requests are not sent (`Deferred("endpoint_stuck")`).
A request reserves its estimated tokens in the run's budget before it is sent and settles them with its real usage;
one the budget no longer allows raises `Deferred` before anything is sent (see `budget.py`).
instructor and openai (about 1 s to import) load when the first client is built, not with the code location.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from extraction_assets.lib.llm.answer_size import bounded_http_client, reask_cap
from extraction_assets.lib.llm.batch import BatchRequest
from extraction_assets.lib.llm.budget import (
    BYTES_PER_TOKEN,
    COMPLETION_RESERVE,
    Deferred,
    Prices,
    TokenBudget,
    estimate_tokens,
)
from extraction_assets.lib.llm.deadline import CallOutlived, call_deadline
from extraction_assets.lib.llm.response_models import schema_json
from extraction_assets.lib.llm.validator_check import install as check_models_once
from extraction_assets.lib.schemas import LLMMode as Mode
from extraction_assets.lib.settings import LLM_HTTP_RETRIES, LLM_MAX_CONCURRENCY, LLM_MODE, LLM_TIMEOUT_S

if TYPE_CHECKING:
    import instructor

T = TypeVar("T", bound=BaseModel)

INSTRUCTOR_MODES: dict[Mode, str] = {
    "json_schema": "JSON_SCHEMA",
    "json": "JSON",
    "tools": "TOOLS",
    "md_json": "MD_JSON",
}


class LLMSettings(BaseModel):
    """How to reach the model; `max_concurrency` documents are in flight at once.

    `mode` is the endpoint's default; a schema version may choose its own (`llm_mode` in its front matter).
    """

    base_url: str
    model: str
    api_key: str = "not-needed"
    mode: Mode = LLM_MODE  # the defaults are the model path's (`settings.ModelSettings`), written once
    timeout_s: float = Field(default=LLM_TIMEOUT_S, gt=0)  # a whole call: its requests, retries and re-asks, every byte
    max_concurrency: int = Field(default=LLM_MAX_CONCURRENCY, ge=1, le=256)
    http_retries: int = Field(default=LLM_HTTP_RETRIES, ge=0, le=10)
    validation_retries: int = Field(default=1, ge=0, le=5)
    max_tokens: int | None = Field(default=None, ge=16)  # a bound on each answer: small models can ramble
    extra_body: dict[str, Any] = Field(default_factory=dict)
    refresh_cache: bool = False
    budget_tokens: int | None = Field(default=None, ge=0)  # a run's cap on prompt + completion tokens
    prices: Prices | None = None  # to report an estimated cost
    batch: bool = False  # uncached requests wait for a Batch API backfill instead of being sent (`batch.py`)
    # the endpoint's context window (prompt and answer), when known: a request that cannot fit is refused unsent
    context_tokens: int | None = Field(default=None, ge=256)
    schema_in_prompt: bool = True  # False where the endpoint constrains decoding to the response schema


class CallStats(BaseModel):
    """What one logical request cost: model calls made (0 when cached), tokens and time."""

    cached: bool = False
    remembered_failure: bool = False  # a cached answer that failed validation before: not asked again
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0


class LLMError(RuntimeError):
    """The model could not give a valid answer (provider error, timeout, invalid or schema-violating JSON).

    `stats` holds what the failed attempt still cost (calls, tokens, time).
    """

    def __init__(self, message: str, stats: CallStats | None = None) -> None:
        super().__init__(message)
        self.stats = stats or CallStats()


class MemoryCache:
    """Answers by request hash: preloaded per batch from the warehouse; new entries wait in `pending` until
    the caller stores them with the batch they served."""

    def __init__(self, entries: dict[str, dict[str, Any]] | None = None) -> None:
        self.entries = dict(entries or {})
        self.pending: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def get(self, request_hash: str) -> dict[str, Any] | None:
        with self._lock:
            return self.entries.get(request_hash)

    def put(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self.entries[entry["request_hash"]] = entry
            self.pending.append(entry)

    def preload(self, entries: dict[str, dict[str, Any]]) -> None:
        with self._lock:
            self.entries.update(entries)

    def take_pending(self) -> list[dict[str, Any]]:
        with self._lock:
            pending, self.pending = self.pending, []
            return pending


def request_hash(model: str, mode: str, messages: Sequence[dict[str, str]], output: type[BaseModel]) -> str:
    payload = json.dumps(
        {"model": model, "mode": mode, "messages": list(messages), "schema": schema_json(output)},
        sort_keys=True,
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class LLMClient:
    """One client per run; thread-safe, so documents (and a long document's chunks) can be asked concurrently."""

    def __init__(self, settings: LLMSettings, cache: MemoryCache | None = None) -> None:
        self.settings = settings
        self.cache = cache or MemoryCache()
        self.budget = TokenBudget(settings.budget_tokens)
        self.deferred: dict[str, BatchRequest] = {}  # batch mode: requests kept for the next batch
        import openai  # the model client loads with the first call

        self.openai = openai.OpenAI(  # also the files and batches of batch backfills
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout_s,
            max_retries=settings.http_retries,
            http_client=bounded_http_client(),  # an answer over MAX_RESPONSE_BYTES is refused, not read
        )
        self._clients: dict[str, instructor.Instructor] = {}
        self._lock = threading.Lock()
        # requests in flight, whoever asks (documents, and the chunks of a long one): at most `max_concurrency`
        self._in_flight = threading.BoundedSemaphore(settings.max_concurrency)
        self._outlived = 0  # calls in a row that ran out of time (see `endpoint_stuck`)
        self._instructor(settings.mode)  # now: its first use imports all of openai's resources (~0.5 s)

    def _instructor(self, mode: Mode) -> instructor.Instructor:
        """One instructor client per mode, sharing one HTTP connection pool, each sending through `_post_completion`."""
        import instructor  # with the first call

        check_models_once()
        with self._lock:
            if mode not in self._clients:
                chosen, provider = instructor.Mode[INSTRUCTOR_MODES[mode]], instructor.Provider.OPENAI
                create = instructor.patch(create=self._post_completion, mode=chosen, provider=provider)
                self._clients[mode] = instructor.Instructor(
                    client=self.openai, create=create, mode=chosen, provider=provider
                )
            return self._clients[mode]

    def _post_completion(self, extra_body: dict[str, Any] | None = None, **params: Any) -> Any:
        """`chat.completions.create` as instructor calls it, without openai's per-request walk of the parameters
        through its TypedDict annotations (a fifth of a call's client CPU, and 16 calls in flight share one
        interpreter). What instructor passes is plain JSON already (string messages, the response format or tools
        it built), which that walk returns unchanged: the body sent is the same (a unit test compares them), and
        retries, timeouts, authentication and parsing the answer stay the openai client's (`post` is its documented
        way to any endpoint)."""
        from openai.types.chat import ChatCompletion  # with the first call

        return self.openai.post("/chat/completions", body={**params, **(extra_body or {})}, cast_to=ChatCompletion)

    def complete(
        self,
        messages: list[dict[str, str]],
        output: type[T],
        tags: dict[str, str] | None = None,
        mode: Mode | None = None,
    ) -> tuple[T, CallStats]:
        """One logical request; `tags` (schema_version, doc_id) are stored with the answer to find it again.

        `mode` overrides the endpoint's default (a schema's choice); it is part of the request's hash.
        """
        mode = mode or self.settings.mode
        key = request_hash(self.settings.model, mode, messages, output)
        if not self.settings.refresh_cache and (hit := self.cache.get(key)) is not None:
            if (failed := hit.get("response", {}).get("failed")) is not None:
                raise LLMError(f"remembered failure: {failed}", CallStats(cached=True, remembered_failure=True))
            try:
                return output.model_validate(hit["response"]["parsed"]), CallStats(cached=True)
            except (KeyError, ValueError) as exc:
                if "batch_id" in hit.get("response", {}):  # asking again would get the same batch answer
                    raise LLMError(f"the batch answer does not fit the schema: {str(exc)[:300]}") from exc
                # an entry from another schema shape: ask the model again
        self._check_fits(messages)
        if self.settings.batch:
            self._defer(key, mode, messages, output, tags or {})
        with self._in_flight:
            if self.endpoint_stuck:
                raise Deferred("endpoint_stuck")
            return self._send(key, mode, messages, output, tags or {})

    @property
    def endpoint_stuck(self) -> bool:
        """Whether the last calls, as many as may be in flight at once, all ran out of time: the run sends no more."""
        return self._outlived >= max(2, self.settings.max_concurrency)

    def _send(
        self, key: str, mode: Mode, messages: list[dict[str, str]], output: type[T], tags: dict[str, str]
    ) -> tuple[T, CallStats]:
        """The request to the endpoint, its cost held in the budget while it runs; the answer goes to the cache."""
        estimate = self._reserve(messages, output)
        stats = CallStats()
        usage: list[Any] = []

        def on_response(response: Any) -> None:
            stats.calls += 1
            if getattr(response, "usage", None) is not None:
                usage.append(response.usage)

        from instructor.core.hooks import Hooks  # with the first call

        hooks = Hooks()
        hooks.on("completion:response", on_response)
        hooks.on("completion:kwargs", reask_cap(len(messages)))  # a re-ask never sends a huge answer back
        started = time.perf_counter()
        try:
            limits: dict[str, Any] = {"max_tokens": self.settings.max_tokens} if self.settings.max_tokens else {}
            with call_deadline(self.settings.timeout_s):
                parsed, completion = self._instructor(mode).chat.completions.create_with_completion(
                    model=self.settings.model,
                    # instructor appends re-ask turns and edits turns in place; a turn is a plain role/content dict
                    messages=[dict(m) for m in messages],  # type: ignore[misc]
                    response_model=output,
                    max_retries=self.settings.validation_retries,
                    hooks=hooks,
                    extra_body=self.settings.extra_body or None,
                    **limits,
                )
        except CallOutlived:  # its document waits for the next run; the answers it got so far are cached
            _settle(stats, usage, started)
            self.budget.settle(estimate, stats.prompt_tokens + stats.completion_tokens)
            with self._lock:
                self._outlived += 1
            deferred = Deferred("deadline")
            deferred.cost = stats
            raise deferred from None
        except Exception as exc:  # provider, transport, JSON and validation errors alike
            self._outlived = 0
            _settle(stats, usage, started)
            self.budget.settle(estimate, stats.prompt_tokens + stats.completion_tokens)
            reason = f"{type(exc).__name__}: {str(exc)[:500]}"
            if answer_failed(exc):  # the same request would get the same answer: remembered like a good one
                self.cache.put(self._entry(key, mode, messages, {"failed": reason}, stats, tags))
            raise LLMError(reason, stats) from exc
        self._outlived = 0
        _settle(stats, usage, started)
        self.budget.settle(estimate, stats.prompt_tokens + stats.completion_tokens)
        answer = {"parsed": parsed.model_dump(mode="json"), "raw": _dump(completion)}
        self.cache.put(self._entry(key, mode, messages, answer, stats, tags))
        return parsed, stats

    def _entry(
        self,
        key: str,
        mode: Mode,
        messages: list[dict[str, str]],
        response: dict[str, Any],
        stats: CallStats,
        tags: dict[str, str],
    ) -> dict[str, Any]:
        """An `llm_cache` row: the request, what came back (an answer, or why none was valid), its cost."""
        return {
            "request_hash": key,
            "model": self.settings.model,
            "mode": mode,
            "request": {"messages": messages},
            "response": response,
            "prompt_tokens": stats.prompt_tokens,
            "completion_tokens": stats.completion_tokens,
            "latency_ms": stats.latency_ms,
            **tags,
        }

    def input_chars_that_fit(self, messages: list[dict[str, str]], assumed_context: int | None = None) -> int | None:
        """How many characters of document text can join `messages` (a request without its document) within the
        endpoint's context (else the `assumed_context` a schema names), answer included, by the budget's
        estimate; None when neither is known."""
        context = self.settings.context_tokens or assumed_context
        if context is None:
            return None
        room = context - estimate_tokens([m.get("content") or "" for m in messages], self._answer)
        return max(room, 0) * BYTES_PER_TOKEN

    @property
    def _answer(self) -> int:
        return self.settings.max_tokens or COMPLETION_RESERVE

    def _check_fits(self, messages: list[dict[str, str]]) -> None:
        """Refuse, before anything is sent, a request whose prompt and answer cannot fit the endpoint's context: a
        server would reject it, cut the answer short, or spend minutes on a prompt it must then drop."""
        if self.settings.context_tokens is None:
            return
        needed = estimate_tokens([m.get("content") or "" for m in messages], self._answer)
        if needed > self.settings.context_tokens:
            raise LLMError(
                f"request not sent: about {needed} tokens with its answer, over the endpoint's context of "
                f"{self.settings.context_tokens} tokens (chunk the document smaller: max_input_chars)"
            )

    def _reserve(self, messages: list[dict[str, str]], output: type[BaseModel]) -> int:
        """Hold the request's estimated tokens in the run's budget (nothing to estimate without a budget)."""
        if self.budget.limit is None:
            return 0
        texts = [m.get("content") or "" for m in messages] + [schema_json(output)]
        estimate = estimate_tokens(texts, self.settings.max_tokens)
        self.budget.reserve(estimate)
        return estimate

    def _defer(
        self, key: str, mode: Mode, messages: list[dict[str, str]], output: type[BaseModel], tags: dict[str, str]
    ) -> None:
        """Keep the request, with the body instructor would send, for the next batch; its document waits. The
        request holds its estimate in the run's budget, so a run submits no more than it may spend."""
        with self._lock:
            known = key in self.deferred
        if not known:
            self._reserve(messages, output)
        import instructor  # with the first call
        from instructor.processing.response import handle_response_model

        _, kwargs = handle_response_model(
            output, mode=instructor.Mode[INSTRUCTOR_MODES[mode]], messages=[dict(m) for m in messages]
        )
        body = {"model": self.settings.model, **kwargs, **self.settings.extra_body}
        if self.settings.max_tokens:
            body["max_tokens"] = self.settings.max_tokens
        request = BatchRequest(
            request_hash=key, model=self.settings.model, mode=mode, messages=messages, tags=tags, body=body
        )
        with self._lock:
            self.deferred[key] = request
        raise Deferred("batch")

    def take_deferred(self) -> list[BatchRequest]:
        with self._lock:
            deferred, self.deferred = list(self.deferred.values()), {}
            return deferred


def answer_failed(exc: BaseException) -> bool:
    """Whether the model answered and no answer was valid after the re-asks (invalid JSON, a schema violation, an
    answer cut at its token bound): asking the same request again would pay for the same failure. A provider or
    transport error (timeout, 429, 5xx, refused connection) is not: the next run asks again."""
    import openai  # with the first call
    from instructor.core.exceptions import IncompleteOutputException

    answered = False
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, openai.APIError | TimeoutError | ConnectionError):
            return False
        answered = answered or isinstance(seen, ValidationError | json.JSONDecodeError | IncompleteOutputException)
        seen = seen.__cause__ or seen.__context__
    return answered


def _settle(stats: CallStats, usage: list[Any], started: float) -> None:
    """Fill in what a request cost; a request that got no response still made one call."""
    stats.latency_ms = round((time.perf_counter() - started) * 1000, 1)
    stats.calls = max(stats.calls, 1)
    stats.prompt_tokens = sum(int(getattr(u, "prompt_tokens", 0) or 0) for u in usage)
    stats.completion_tokens = sum(int(getattr(u, "completion_tokens", 0) or 0) for u in usage)


def _dump(completion: Any) -> Any:
    try:
        return completion.model_dump(mode="json")
    except AttributeError:
        return str(completion)
