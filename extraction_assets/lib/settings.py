"""Where things are and which model to use, read from the environment (see README's Configuration)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

PACKAGE_DIR = Path(__file__).resolve().parents[1]
PROJECT_DIR = PACKAGE_DIR.parent
SAMPLE_INBOX = PACKAGE_DIR / "sample_inbox"
DEFAULT_PROMPTS = PROJECT_DIR / "prompts"
DEFAULT_WAREHOUSE = Path(".data") / "warehouse.duckdb"
DEFAULT_SESSIONS = Path(".data") / "sessions"


class Settings(BaseModel):
    """The pipeline's configuration; every field has an offline default."""

    warehouse: Path = DEFAULT_WAREHOUSE
    inbox: Path = SAMPLE_INBOX
    prompts_dir: Path = DEFAULT_PROMPTS
    llm_base_url: str | None = None
    llm_model: str | None = None
    llm_api_key_env: str = "OPENAI_API_KEY"  # the variable that holds the endpoint's key: never the key itself
    llm_gguf: str | None = None
    llm_threads: int | None = Field(default=None, ge=1)  # the local model's threads; None: the cores idle at start
    llm_mode: str = "json_schema"
    llm_timeout_s: float = 60.0
    llm_max_concurrency: int = 8
    llm_context_tokens: int | None = None  # the endpoint's context window: chunks are sized to fit it
    llm_disabled: bool = False
    llm_refresh_cache: bool = False
    llm_budget_tokens: int | None = None  # a run's cap on model tokens; the rest stays pending for the next run
    llm_price_per_mtok_in: float | None = None  # the endpoint's prices, to report an estimated cost
    llm_price_per_mtok_out: float | None = None
    llm_batch: bool = False  # send uncached requests through the endpoint's Batch API
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
        env = os.environ if env is None else env

        def pick(name: str) -> str | None:
            value = env.get(name, "").strip()
            return value or None

        values: dict[str, object] = {
            "warehouse": pick("EXTRACTION_WAREHOUSE"),
            "inbox": pick("EXTRACTION_INBOX"),
            "prompts_dir": pick("EXTRACTION_PROMPTS"),
            "llm_base_url": pick("EXTRACTION_LLM_BASE_URL"),
            "llm_model": pick("EXTRACTION_LLM_MODEL"),
            "llm_gguf": pick("EXTRACTION_LLM_GGUF"),
            "llm_threads": pick("EXTRACTION_LLM_THREADS"),
            "llm_mode": pick("EXTRACTION_LLM_MODE"),
            "llm_timeout_s": pick("EXTRACTION_LLM_TIMEOUT"),
            "llm_max_concurrency": pick("EXTRACTION_LLM_CONCURRENCY"),
            "llm_context_tokens": pick("EXTRACTION_LLM_CONTEXT_TOKENS"),
            "llm_disabled": pick("EXTRACTION_LLM_DISABLED"),
            "llm_refresh_cache": pick("EXTRACTION_LLM_REFRESH_CACHE"),
            "llm_budget_tokens": pick("EXTRACTION_LLM_BUDGET_TOKENS"),
            "llm_price_per_mtok_in": pick("EXTRACTION_LLM_PRICE_PER_MTOK_IN"),
            "llm_price_per_mtok_out": pick("EXTRACTION_LLM_PRICE_PER_MTOK_OUT"),
            "llm_batch": pick("EXTRACTION_LLM_BATCH"),
            "pii_policy": pick("EXTRACTION_PII_POLICY"),
            "max_file_mb": pick("EXTRACTION_MAX_FILE_MB"),
            "sessions_dir": pick("EXTRACTION_SESSIONS"),
            "session_light_model": pick("EXTRACTION_SESSION_LIGHT_MODEL"),
            "worker_niceness": pick("EXTRACTION_WORKER_NICENESS"),
            "worker_processes": pick("EXTRACTION_WORKER_PROCESSES"),
            "shards": pick("EXTRACTION_SHARDS"),
            "duckdb_memory_mb": pick("EXTRACTION_DUCKDB_MEMORY_MB"),
            "duckdb_threads": pick("EXTRACTION_DUCKDB_THREADS"),
            "reports_url": pick("EXTRACTION_REPORTS_URL"),
            "automation_interval_s": pick("EXTRACTION_AUTOMATION_INTERVAL_S"),
        }
        return cls.model_validate({k: v for k, v in values.items() if v is not None})

    def llm_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The endpoint's key, read from its variable when needed, so no configuration object holds it."""
        return (os.environ if env is None else env).get(self.llm_api_key_env, "").strip() or None

    @property
    def model_configured(self) -> bool:
        return bool((self.llm_base_url and self.llm_model) or self.llm_gguf)
