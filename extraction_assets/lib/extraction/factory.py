"""Which extractor runs: the deterministic heuristic unless a model endpoint (or a GGUF file) is configured.

The Dagster resource and the CLI build their extractor here, so the CLI never imports the Dagster layer.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from extraction_assets.lib.extraction.extractors import Extractor
from extraction_assets.lib.extraction.orchestration import OrchestratedExtractor
from extraction_assets.lib.llm.budget import Prices
from extraction_assets.lib.llm.client import LLMClient, LLMSettings
from extraction_assets.lib.llm.local_model import (
    LOCAL_CONTEXT_TOKENS,
    LOCAL_EXTRA_BODY,
    LOCAL_MAX_TOKENS,
    local_base_url,
)
from extraction_assets.lib.settings import Settings


class ExtractorChoice(BaseModel):
    """The endpoint, model and limits of the model path; nothing set means the offline heuristic."""

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_gguf: str | None = None
    llm_gguf_context: int = LOCAL_CONTEXT_TOKENS  # the local server's context, prompt and answer
    llm_gguf_threads: int | None = None  # the local server's threads; None: the cores idle when it starts
    llm_mode: str = "json_schema"
    llm_timeout_s: float = 60.0
    llm_max_concurrency: int = 8
    llm_context_tokens: int | None = None  # the endpoint's context (prompt and answer); None: not known
    llm_http_retries: int = 4
    refresh_cache: bool = False
    kill_switch: bool = False
    llm_budget_tokens: int | None = None
    llm_price_per_mtok_in: float | None = None
    llm_price_per_mtok_out: float | None = None
    llm_batch: bool = False

    @classmethod
    def from_settings(cls, settings: Settings) -> ExtractorChoice:
        return cls(
            llm_base_url=settings.llm_base_url,
            llm_model=settings.llm_model,
            llm_api_key=settings.llm_api_key(),
            llm_gguf=settings.llm_gguf,
            llm_mode=settings.llm_mode,
            llm_timeout_s=settings.llm_timeout_s,
            llm_max_concurrency=settings.llm_max_concurrency,
            llm_context_tokens=settings.llm_context_tokens,
            llm_gguf_context=settings.llm_context_tokens or LOCAL_CONTEXT_TOKENS,
            llm_gguf_threads=settings.llm_threads,
            refresh_cache=settings.llm_refresh_cache,
            kill_switch=settings.llm_disabled,
            llm_budget_tokens=settings.llm_budget_tokens,
            llm_price_per_mtok_in=settings.llm_price_per_mtok_in,
            llm_price_per_mtok_out=settings.llm_price_per_mtok_out,
            llm_batch=settings.llm_batch,
        )

    def prices(self) -> Prices | None:
        """Both prices or none: a cost from half a price list would mislead."""
        if self.llm_price_per_mtok_in is None or self.llm_price_per_mtok_out is None:
            return None
        return Prices(per_mtok_in=self.llm_price_per_mtok_in, per_mtok_out=self.llm_price_per_mtok_out)

    def llm_settings(self) -> LLMSettings | None:
        if self.llm_gguf:
            return LLMSettings(
                base_url=local_base_url(self.llm_gguf, self.llm_gguf_context, self.llm_gguf_threads),
                model=self.llm_model or Path(self.llm_gguf).stem,
                mode="json_schema",  # the local server constrains decoding to the schema
                timeout_s=self.llm_timeout_s,
                max_concurrency=1,
                http_retries=0,  # a local server neither rate-limits nor recovers from a timeout by retrying
                validation_retries=0,
                max_tokens=LOCAL_MAX_TOKENS,
                extra_body=LOCAL_EXTRA_BODY,
                context_tokens=self.llm_gguf_context,  # chunks are sized to fit it; a request that cannot is refused
                schema_in_prompt=False,  # the server's grammar holds the answer to the schema
                refresh_cache=self.refresh_cache,
                budget_tokens=self.llm_budget_tokens,
                prices=self.prices(),
            )
        if not (self.llm_base_url and self.llm_model):
            return None
        return LLMSettings(
            base_url=self.llm_base_url,
            model=self.llm_model,
            api_key=self.llm_api_key or "not-needed",
            mode=self.llm_mode,  # type: ignore[arg-type]
            timeout_s=self.llm_timeout_s,
            max_concurrency=self.llm_max_concurrency,
            http_retries=self.llm_http_retries,
            context_tokens=self.llm_context_tokens,
            refresh_cache=self.refresh_cache,
            budget_tokens=self.llm_budget_tokens,
            prices=self.prices(),
            batch=self.llm_batch,
        )

    def build(self, batch: bool = True) -> Extractor:
        """`batch=False` sends requests at once even with batch backfills on: an evaluation waits for its answers."""
        settings = self.llm_settings()
        if settings is None:
            return OrchestratedExtractor(None)
        if not batch:
            settings = settings.model_copy(update={"batch": False})
        return OrchestratedExtractor(LLMClient(settings), kill_switch=self.kill_switch)
