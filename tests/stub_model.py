"""A model client that answers without a server, and fails the calls a test names: classification or modules."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pydantic import BaseModel

from extraction_assets.lib.llm import CallStats, LLMError, MemoryCache


class StubModel:
    """Stands in for `LLMClient` in `OrchestratedExtractor`: classification says `modules`; a module's record
    quotes `evidence` (it must be in the document); `fail` names what raises (`classify`, `modules`)."""

    def __init__(self, modules: list[str], evidence: str, fail: set[str] | None = None) -> None:
        self.settings = SimpleNamespace(model="stub-model", max_concurrency=1, prices=None, schema_in_prompt=True)
        self.cache = MemoryCache()
        self.modules = modules
        self.evidence = evidence
        self.fail = fail or set()
        self.calls: list[str] = []

    def input_chars_that_fit(self, messages: list[dict[str, str]], assumed_context: int | None = None) -> int | None:
        return None  # an endpoint whose context is unknown: the schema's max_input_chars decides

    def complete(
        self, messages: list[dict[str, str]], output: type[BaseModel], tags: Any = None, mode: Any = None
    ) -> tuple[BaseModel, CallStats]:
        step = "classify" if "modules" in output.model_fields else "modules"
        self.calls.append(step)
        if step in self.fail:
            raise LLMError(f"invalid JSON from the model ({step})", CallStats(calls=1))
        if step == "classify":
            return output(modules=self.modules), CallStats(calls=1)
        return output(evidence_spans=[self.evidence], confidence=0.9), CallStats(calls=1)
