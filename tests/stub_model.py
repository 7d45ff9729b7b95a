"""A model client that answers without a server, and fails the calls a test names: classification or modules."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

from extraction_assets.lib.llm import CallStats, LLMClient, LLMError, LLMSettings, MemoryCache
from extraction_assets.lib.schemas import LLMMode

T = TypeVar("T", bound=BaseModel)


class StubModel(LLMClient):
    """Stands in for `LLMClient` in `OrchestratedExtractor`: classification says `modules`; a module's record
    quotes `evidence` (it must be in the document); `fail` names what raises (`classify`, `modules`)."""

    def __init__(self, modules: list[str], evidence: str, fail: set[str] | None = None) -> None:
        # not LLMClient's own __init__: no endpoint, no HTTP client; the settings only name the model
        self.settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="stub-model", max_concurrency=1)
        self.cache = MemoryCache()
        self.modules = modules
        self.evidence = evidence
        self.fail = fail or set()
        self.calls: list[str] = []

    def input_chars_that_fit(self, messages: list[dict[str, str]], assumed_context: int | None = None) -> int | None:
        return None  # an endpoint whose context is unknown: the schema's max_input_chars decides

    def complete(
        self,
        messages: list[dict[str, str]],
        output: type[T],
        tags: dict[str, str] | None = None,
        mode: LLMMode | None = None,
    ) -> tuple[T, CallStats]:
        step = "classify" if "modules" in output.model_fields else "modules"
        self.calls.append(step)
        if step in self.fail:
            raise LLMError(f"invalid JSON from the model ({step})", CallStats(calls=1))
        if step == "classify":
            return output(modules=self.modules), CallStats(calls=1)
        return output(evidence_spans=[self.evidence], confidence=0.9), CallStats(calls=1)
