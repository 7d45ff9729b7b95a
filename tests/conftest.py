"""Shared fixtures: a private copy of the sample inbox and a warehouse under tmp_path for each test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX, Settings


@pytest.fixture
def inbox(tmp_path: Path) -> Path:
    target = tmp_path / "inbox"
    shutil.copytree(SAMPLE_INBOX, target, ignore=shutil.ignore_patterns("README.md"))
    return target


@pytest.fixture
def prompts(tmp_path: Path) -> Path:
    target = tmp_path / "prompts"
    shutil.copytree(DEFAULT_PROMPTS, target)
    return target


@pytest.fixture
def settings(tmp_path: Path, inbox: Path, prompts: Path) -> Settings:
    return Settings(warehouse=tmp_path / "warehouse.duckdb", inbox=inbox, prompts_dir=prompts)
