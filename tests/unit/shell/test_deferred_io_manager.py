"""The runs' IO manager: Dagster's default one, made only when an output is stored or an input loaded."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.defs import resources
from extraction_assets.defs.resources import deferred_io_manager, resources_from_settings
from extraction_assets.lib.settings import Settings


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every default IO manager the deferred one makes."""
    makes: list[object] = []
    make = resources.default_job_io_manager_with_fs_io_manager_schema.resource_fn

    def counted(context: dg.InitResourceContext) -> object:
        makes.append(manager := make(context))  # type: ignore[call-arg]
        return manager

    monkeypatch.setattr(resources.default_job_io_manager_with_fs_io_manager_schema, "_resource_fn", counted)
    return makes


def test_a_run_that_stores_no_output_never_makes_the_default_io_manager(made: list[object]) -> None:
    @dg.asset
    def counted() -> dg.MaterializeResult:
        return dg.MaterializeResult(metadata={"rows": 3})

    with dg.instance_for_test() as instance:
        result = dg.materialize([counted], instance=instance, resources={"io_manager": deferred_io_manager})
    assert result.success
    assert made == []


def test_an_output_is_stored_and_loaded_as_the_default_io_manager_does(made: list[object]) -> None:
    @dg.asset
    def upstream() -> int:
        return 3

    @dg.asset
    def downstream(upstream: int) -> int:
        return upstream + 1

    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [upstream, downstream], instance=instance, resources={"io_manager": deferred_io_manager}
        )
        assert result.success and result.output_for_node("downstream") == 4
        stored = {p.name for p in Path(instance.storage_directory()).rglob("*")}
    assert {"upstream", "downstream"} <= stored
    assert len(made) == 1 and type(made[0]).__name__ == "PickledObjectFilesystemIOManager"


def test_every_run_gets_it() -> None:
    assert resources_from_settings(Settings())["io_manager"] is deferred_io_manager
