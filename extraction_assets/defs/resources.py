"""Resources: where the warehouse, inbox and prompts are, and which extractor runs."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster as dg
import duckdb

from extraction_assets.lib.extractors import Extractor
from extraction_assets.lib.llm import LLMClient, LLMSettings
from extraction_assets.lib.local_model import LOCAL_EXTRA_BODY, LOCAL_MAX_TOKENS, local_base_url
from extraction_assets.lib.orchestration import OrchestratedExtractor
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse


class WarehouseResource(dg.ConfigurableResource):
    """The DuckDB file; connections are opened per batch and never held while waiting on a model."""

    path: str

    @contextmanager
    def connect(self, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
        with open_warehouse(Path(self.path), read_only=read_only) as con:
            yield con


class PipelineResource(dg.ConfigurableResource):
    """Inputs of the pipeline: the inbox (one folder per tenant) and the prompt files (schema versions)."""

    inbox: str
    prompts_dir: str
    pii_policy: str | None = None  # tenant PII policy YAML; None = the bundled one

    @property
    def inbox_path(self) -> Path:
        return Path(self.inbox)

    @property
    def prompts_path(self) -> Path:
        return Path(self.prompts_dir)


class ExtractorResource(dg.ConfigurableResource):
    """Which extractor runs: the deterministic heuristic unless a model endpoint (or a GGUF file) is configured."""

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key: str | None = None
    llm_gguf: str | None = None
    llm_mode: str = "json_schema"
    llm_timeout_s: float = 60.0
    llm_max_concurrency: int = 8
    llm_http_retries: int = 4
    refresh_cache: bool = False
    kill_switch: bool = False

    def llm_settings(self) -> LLMSettings | None:
        if self.llm_gguf:
            return LLMSettings(
                base_url=local_base_url(self.llm_gguf),
                model=self.llm_model or Path(self.llm_gguf).stem,
                mode="json_schema",  # the local server constrains decoding to the schema
                timeout_s=self.llm_timeout_s,
                max_concurrency=1,
                http_retries=0,  # a local server neither rate-limits nor recovers from a timeout by retrying
                validation_retries=0,
                max_tokens=LOCAL_MAX_TOKENS,
                extra_body=LOCAL_EXTRA_BODY,
                refresh_cache=self.refresh_cache,
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
            refresh_cache=self.refresh_cache,
        )

    def build(self) -> Extractor:
        settings = self.llm_settings()
        if settings is None:
            return OrchestratedExtractor(None)
        return OrchestratedExtractor(LLMClient(settings), kill_switch=self.kill_switch)


def resources_from_settings(settings: Settings) -> dict[str, dg.ConfigurableResource]:
    return {
        "warehouse": WarehouseResource(path=str(settings.warehouse)),
        "pipeline": PipelineResource(
            inbox=str(settings.inbox),
            prompts_dir=str(settings.prompts_dir),
            pii_policy=str(settings.pii_policy) if settings.pii_policy else None,
        ),
        "extractor": ExtractorResource(
            llm_base_url=settings.llm_base_url,
            llm_model=settings.llm_model,
            llm_api_key=settings.llm_api_key,
            llm_gguf=settings.llm_gguf,
            llm_mode=settings.llm_mode,
            llm_timeout_s=settings.llm_timeout_s,
            llm_max_concurrency=settings.llm_max_concurrency,
            refresh_cache=settings.llm_refresh_cache,
            kill_switch=settings.llm_disabled,
        ),
    }
