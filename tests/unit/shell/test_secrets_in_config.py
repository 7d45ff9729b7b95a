"""The endpoint's key never reaches resource config, which the Dagster UI shows: only the variable's name does."""

from __future__ import annotations

import pytest

from extraction_assets.definitions import build_definitions
from extraction_assets.lib.settings import ModelSettings, Settings

SENTINEL = "sk-sentinel-7f3a9c1d-never-shown"


def test_no_loaded_resource_config_contains_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.setenv("EXTRACTION_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EXTRACTION_LLM_MODEL", "test-model")
    settings = Settings.from_env()
    assert SENTINEL not in settings.model_dump_json()

    resources = build_definitions(settings).get_repository_def().get_top_level_resources()
    shown = {name: resource.config_schema.default_value_as_json_str for name, resource in resources.items()}
    assert shown, "no resources loaded"
    assert not [name for name, config in shown.items() if SENTINEL in config]
    assert "OPENAI_API_KEY" in shown["extractor"]  # the UI names the variable instead


def test_the_key_still_reaches_the_client_at_run_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    settings = Settings(model=ModelSettings(llm_base_url="http://127.0.0.1:9/v1", llm_model="test-model"))
    resources = build_definitions(settings).resources
    assert resources is not None
    resource = resources["extractor"]
    llm = resource.process_config_and_initialize().llm_settings()
    assert llm is not None and llm.api_key == SENTINEL
