"""An offline `extraction-assets run` opens the warehouse once per step, not once per batch and check."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import held
from extraction_assets.runner import run_pipeline


def test_an_offline_run_opens_the_warehouse_once_per_step(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    holds: list[Path | str] = []
    own_opens: list[Path | str] = []
    hold, open_own = held.connect, held.open_warehouse
    monkeypatch.setattr(held, "connect", lambda path: holds.append(path) or hold(path))
    monkeypatch.setattr(
        held, "open_warehouse", lambda path, read_only=False: own_opens.append(path) or open_own(path, read_only)
    )

    steps = run_pipeline(settings, schema_keys=["pulse@v1"], instance=dg.DagsterInstance.ephemeral())

    assert all(step.success for step in steps)
    assert len(holds) == len(steps) == 2  # ingest, extract pulse@v1: every asset and check used the held file
    assert own_opens == []
    assert not held.is_held(settings.warehouse)


def test_a_run_with_a_model_endpoint_holds_nothing(settings: Settings) -> None:
    from extraction_assets.runner import _held_when_offline

    with _held_when_offline(settings):
        assert held.is_held(settings.warehouse)
    online = settings.model_copy(update={"llm_base_url": "http://127.0.0.1:9/v1", "llm_model": "m"})
    with _held_when_offline(online):
        assert not held.is_held(online.warehouse)
