"""Which extractor runs: the deterministic heuristic unless a model endpoint (or a GGUF file) is configured
(`settings.ModelSettings`, the model path described once).

The Dagster resource and the CLI build their extractor here, so the CLI never imports the Dagster layer.
"""

from __future__ import annotations

from pathlib import Path

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
from extraction_assets.lib.settings import ModelSettings


def prices(model: ModelSettings) -> Prices | None:
    """Both prices or none: a cost from half a price list would mislead."""
    if model.llm_price_per_mtok_in is None or model.llm_price_per_mtok_out is None:
        return None
    return Prices(per_mtok_in=model.llm_price_per_mtok_in, per_mtok_out=model.llm_price_per_mtok_out)


def llm_settings(model: ModelSettings) -> LLMSettings | None:
    """What the model client needs to reach the configured model; None: no model is configured."""
    if model.llm_gguf:
        context = model.llm_context_tokens or LOCAL_CONTEXT_TOKENS  # the local server's context, prompt and answer
        return LLMSettings(
            base_url=local_base_url(model.llm_gguf, context, model.llm_threads),
            model=model.llm_model or Path(model.llm_gguf).stem,
            mode="json_schema",  # the local server constrains decoding to the schema
            timeout_s=model.llm_timeout_s,
            max_concurrency=1,
            http_retries=0,  # a local server neither rate-limits nor recovers from a timeout by retrying
            validation_retries=0,
            max_tokens=LOCAL_MAX_TOKENS,
            extra_body=LOCAL_EXTRA_BODY,
            context_tokens=context,  # chunks are sized to fit it; a request that cannot is refused
            schema_in_prompt=False,  # the server's grammar holds the answer to the schema
            refresh_cache=model.llm_refresh_cache,
            budget_tokens=model.llm_budget_tokens,
            prices=prices(model),
        )
    if not (model.llm_base_url and model.llm_model):
        return None
    return LLMSettings(
        base_url=model.llm_base_url,
        model=model.llm_model,
        api_key=model.llm_api_key() or "not-needed",
        mode=model.llm_mode,  # type: ignore[arg-type]
        timeout_s=model.llm_timeout_s,
        max_concurrency=model.llm_max_concurrency,
        http_retries=model.llm_http_retries,
        context_tokens=model.llm_context_tokens,
        refresh_cache=model.llm_refresh_cache,
        budget_tokens=model.llm_budget_tokens,
        prices=prices(model),
        batch=model.llm_batch,
    )


def build_extractor(model: ModelSettings, batch: bool = True) -> Extractor:
    """The extractor a run uses. `batch=False` sends requests at once even with batch backfills on: an evaluation
    waits for its answers."""
    settings = llm_settings(model)
    if settings is None:
        return OrchestratedExtractor(None)
    if not batch:
        settings = settings.model_copy(update={"batch": False})
    return OrchestratedExtractor(LLMClient(settings), kill_switch=model.llm_disabled)
