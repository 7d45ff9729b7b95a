"""The code location's definitions as the tests hand them to `dg.materialize`, and what Dagster hands back narrowed to
what the tests read: a sensor tick's SensorResult, one asset's materialization.

Dagster types these loosely (a sensor may return a RunRequest, a SkipReason, an iterator ...; `Definitions.assets`
may hold cacheable definitions, which `materialize` does not take): a test that gets anything else fails here,
naming it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import dagster as dg

Materializable = dg.AssetsDefinition | dg.AssetSpec | dg.SourceAsset


def materializable(defs: dg.Definitions, checks: bool = True) -> list[Materializable]:
    """The code location's assets and (unless `checks` is false) asset checks, as `dg.materialize` takes them."""
    found: list[Materializable] = []
    for definition in [*(defs.assets or ()), *((defs.asset_checks or ()) if checks else ())]:
        assert isinstance(definition, dg.AssetsDefinition | dg.AssetSpec | dg.SourceAsset), definition
        found.append(definition)
    return found


def resources_with(defs: dg.Definitions, **overrides: Any) -> dict[str, Any]:
    """The code location's resources, some replaced (a fake extractor, a pipeline on another inbox)."""
    assert defs.resources is not None
    return {**defs.resources, **overrides}


def sensor_result(tick: object) -> dg.SensorResult:
    """What the project's sensors return from one evaluation: always a SensorResult."""
    assert isinstance(tick, dg.SensorResult), tick
    return tick


def run_requests(tick: object) -> Sequence[dg.RunRequest]:
    """The runs a sensor tick requests (none: an empty list, never None)."""
    return sensor_result(tick).run_requests or []


def materialization(event: dg.DagsterEvent) -> dg.AssetMaterialization:
    """The materialization an ASSET_MATERIALIZATION event carries."""
    return event.step_materialization_data.materialization


def scheduled_runs(evaluated: object) -> list[dg.RunRequest]:
    """The runs one evaluation of a schedule requests: the project's schedules give RunRequests, nothing else."""
    assert isinstance(evaluated, Iterable), evaluated
    runs: list[dg.RunRequest] = []
    for request in evaluated:
        assert isinstance(request, dg.RunRequest), request
        runs.append(request)
    return runs
