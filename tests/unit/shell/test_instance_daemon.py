"""The UI's daemon looks for backfills and at sensors more often: Dagster's loops still read the values it sets."""

from __future__ import annotations

import inspect

import pytest
from dagster._daemon import backfill, controller, sensor

from extraction_assets.instance import daemon


def test_the_backfill_loop_reads_the_interval_at_each_start() -> None:
    source = inspect.getsource(backfill.execute_backfill_iteration_loop)
    assert "from dagster._daemon.controller import DEFAULT_DAEMON_INTERVAL_SECONDS" in source
    assert "DEFAULT_DAEMON_INTERVAL_SECONDS - loop_duration" in source
    assert controller.DEFAULT_DAEMON_INTERVAL_SECONDS == 30  # Dagster's own, untouched outside the daemon process


def test_the_sensor_loop_reads_its_sleep_at_each_turn() -> None:
    source = inspect.getsource(sensor.execute_sensor_iteration_loop)
    assert "MIN_INTERVAL_LOOP_TIME - loop_duration" in source
    assert sensor.MIN_INTERVAL_LOOP_TIME == 5


def test_main_sets_the_interval_before_dagster_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    monkeypatch.setenv("EXTRACTION_BACKFILL_POLL_S", "3")
    monkeypatch.setattr(controller, "DEFAULT_DAEMON_INTERVAL_SECONDS", 30)
    monkeypatch.setattr(sensor, "MIN_INTERVAL_LOOP_TIME", 5)
    monkeypatch.setattr(
        "dagster._daemon.cli.main",
        lambda: seen.extend([controller.DEFAULT_DAEMON_INTERVAL_SECONDS, sensor.MIN_INTERVAL_LOOP_TIME]),
    )
    daemon.main()
    assert seen == [3, daemon.SENSOR_LOOP_S]


@pytest.mark.parametrize(("value", "expected"), [(None, daemon.BACKFILL_POLL_S), ("0", 1), ("7", 7)])
def test_poll_seconds(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: int) -> None:
    if value is None:
        monkeypatch.delenv("EXTRACTION_BACKFILL_POLL_S", raising=False)
    else:
        monkeypatch.setenv("EXTRACTION_BACKFILL_POLL_S", value)
    assert daemon.poll_seconds() == expected
