"""Where things are and which model to use (`ModelSettings`), read from the environment (see README's
Configuration)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pydantic import BaseModel, Field

PACKAGE_DIR = Path(__file__).resolve().parents[1]
PROJECT_DIR = PACKAGE_DIR.parent
SAMPLE_INBOX = PACKAGE_DIR / "sample_inbox"
DEFAULT_PROMPTS = PROJECT_DIR / "prompts"
DEFAULT_WAREHOUSE = Path(".data") / "warehouse.duckdb"
DEFAULT_SESSIONS = Path(".data") / "sessions"
# the model path's defaults, written once (`ModelSettings`, and the client's `LLMSettings`)
LLM_MODE: Final = "json_schema"  # instructor's mode: the endpoint constrains the answer to the response schema
LLM_TIMEOUT_S = 60.0  # a whole call: its requests, retries and re-asks
LLM_MAX_CONCURRENCY = 8  # documents in flight at once
LLM_HTTP_RETRIES = 4


class ModelSettings(BaseModel):
    """The model path, described once: read from the environment (`from_env`), held whole by `Settings.model`, shown
    and set as the `extractor` resource in the Dagster UI, and turned into an extractor (with the client's
    `LLMSettings`) by `extraction.build_extractor`. Nothing set: the offline heuristic. The endpoint's key is never
    held: only the name of the variable that holds it."""

    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"  # the variable that holds the endpoint's key: never the key itself
    llm_gguf: str | None = None  # a local GGUF model file: its server starts with the first call
    llm_threads: int | None = Field(default=None, ge=1)  # the local model's threads; None: the cores idle at start
    llm_mode: str = LLM_MODE
    llm_timeout_s: float = LLM_TIMEOUT_S
    llm_max_concurrency: int = LLM_MAX_CONCURRENCY
    llm_http_retries: int = LLM_HTTP_RETRIES
    # the endpoint's context window (prompt and answer): chunks are sized to fit it; a local model's, None: its default
    llm_context_tokens: int | None = None
    llm_disabled: bool = False  # the kill switch: the heuristic runs, whatever is set
    llm_refresh_cache: bool = False  # ask the model again instead of answering from the cache
    llm_budget_tokens: int | None = None  # a run's cap on model tokens; the rest stays pending for the next run
    llm_price_per_mtok_in: float | None = None  # the endpoint's prices, to report an estimated cost
    llm_price_per_mtok_out: float | None = None
    llm_batch: bool = False  # send uncached requests through the endpoint's Batch API

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> ModelSettings:
        return cls.model_validate(_picked(env, _MODEL_VARIABLES))

    def llm_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The endpoint's key, read from its variable when needed, so no configuration object holds it."""
        return (os.environ if env is None else env).get(self.llm_api_key_env, "").strip() or None

    @property
    def has_model(self) -> bool:
        """An endpoint and a model, or a local model, are set."""
        return bool((self.llm_base_url and self.llm_model) or self.llm_gguf)


class Settings(BaseModel):
    """The pipeline's configuration; every field has an offline default."""

    warehouse: Path = DEFAULT_WAREHOUSE
    inbox: Path = SAMPLE_INBOX
    prompts_dir: Path = DEFAULT_PROMPTS
    model: ModelSettings = ModelSettings()  # the model path, passed whole
    pii_policy: Path | None = None  # tenant PII policy YAML; None = the one bundled in the package
    max_file_mb: float | None = None  # the largest inbox file read; None = the readers' default (8 MB)
    sessions_dir: Path = DEFAULT_SESSIONS  # live interview sessions, `<tenant>/<session_id>.json[l]`
    session_light_model: str | None = None  # a small model for live sessions' light extraction; None: heuristic
    worker_niceness: int | None = Field(default=None, ge=0, le=19)  # worker processes' `nice` below the run; None: 10
    # worker processes a run's CPU-bound steps use (read, scrub, route and extract); None: one per usable core
    worker_processes: int | None = Field(default=None, ge=0)
    # extraction partitions per schema version (by a hash of doc_id, or of tenant and Message-ID); 1 = one run each
    shards: int = Field(default=1, ge=1)
    duckdb_memory_mb: int | None = Field(default=None, ge=64)  # DuckDB's memory limit per process; None: fitted
    duckdb_threads: int | None = Field(default=None, ge=1)  # DuckDB's threads per process; None: fitted
    # where the evaluation reports folder is served (`extraction-assets ui` serves it): eval_report links there
    reports_url: str | None = None
    automation_interval_s: int = Field(default=30, ge=1)  # how often the automation sensor looks for work to follow

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        return cls.model_validate({**_picked(env, _VARIABLES), "model": ModelSettings.from_env(env)})


def _picked(env: Mapping[str, str] | None, variables: Mapping[str, str]) -> dict[str, str]:
    """The fields whose variables are set (and not blank), by field name."""
    env = os.environ if env is None else env
    return {field: value for field, name in variables.items() if (value := env.get(name, "").strip())}


# each field and the variable that sets it (README, Configuration)
_MODEL_VARIABLES = {
    "llm_base_url": "EXTRACTION_LLM_BASE_URL",
    "llm_model": "EXTRACTION_LLM_MODEL",
    "llm_gguf": "EXTRACTION_LLM_GGUF",
    "llm_threads": "EXTRACTION_LLM_THREADS",
    "llm_mode": "EXTRACTION_LLM_MODE",
    "llm_timeout_s": "EXTRACTION_LLM_TIMEOUT",
    "llm_max_concurrency": "EXTRACTION_LLM_CONCURRENCY",
    "llm_context_tokens": "EXTRACTION_LLM_CONTEXT_TOKENS",
    "llm_disabled": "EXTRACTION_LLM_DISABLED",
    "llm_refresh_cache": "EXTRACTION_LLM_REFRESH_CACHE",
    "llm_budget_tokens": "EXTRACTION_LLM_BUDGET_TOKENS",
    "llm_price_per_mtok_in": "EXTRACTION_LLM_PRICE_PER_MTOK_IN",
    "llm_price_per_mtok_out": "EXTRACTION_LLM_PRICE_PER_MTOK_OUT",
    "llm_batch": "EXTRACTION_LLM_BATCH",
}
_VARIABLES = {
    "warehouse": "EXTRACTION_WAREHOUSE",
    "inbox": "EXTRACTION_INBOX",
    "prompts_dir": "EXTRACTION_PROMPTS",
    "pii_policy": "EXTRACTION_PII_POLICY",
    "max_file_mb": "EXTRACTION_MAX_FILE_MB",
    "sessions_dir": "EXTRACTION_SESSIONS",
    "session_light_model": "EXTRACTION_SESSION_LIGHT_MODEL",
    "worker_niceness": "EXTRACTION_WORKER_NICENESS",
    "worker_processes": "EXTRACTION_WORKER_PROCESSES",
    "shards": "EXTRACTION_SHARDS",
    "duckdb_memory_mb": "EXTRACTION_DUCKDB_MEMORY_MB",
    "duckdb_threads": "EXTRACTION_DUCKDB_THREADS",
    "reports_url": "EXTRACTION_REPORTS_URL",
    "automation_interval_s": "EXTRACTION_AUTOMATION_INTERVAL_S",
}
