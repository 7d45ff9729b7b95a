"""What every invariant check reports: pass or fail, how many rows break it, and the first few of them; and, for a
check evaluated per partition inside a run of many, the materialization each evaluation is about."""

from collections.abc import Sequence
from typing import Any

import dagster as dg
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)


def _violations(violations: Sequence[object], what: str) -> dict[str, Any]:
    return {
        "metadata": {
            "violations": len(violations),
            "examples": dg.MetadataValue.json([str(v) for v in violations[:10]]),
        },
        "description": f"{len(violations)} {what}" if violations else None,
    }


def violations_result(
    violations: Sequence[object], what: str, check: dg.AssetCheckKey | None = None
) -> dg.AssetCheckResult:
    """`check` names the result when one step yields the results of several checks."""
    return dg.AssetCheckResult(
        passed=not violations,
        asset_key=check.asset_key if check else None,
        check_name=check.name if check else None,
        **_violations(violations, what),
    )


def violations_evaluation(
    violations: Sequence[object],
    what: str,
    check: dg.AssetCheckKey,
    partition: str,
    target: AssetCheckEvaluationTargetMaterializationData | None,
) -> dg.AssetCheckEvaluation:
    """One partition's result of a check, tied to that partition's materialization (the UI shows its status there).

    Never `blocking` for Dagster: a failed blocking evaluation stops every partition of the run, and a check holds
    back only its own partition's downstream work (see `review/assets.py`). Whether the check blocks is in its spec.
    """
    found = _violations(violations, what)
    return dg.AssetCheckEvaluation(
        asset_key=check.asset_key,
        check_name=check.name,
        passed=not violations,
        partition=partition,
        target_materialization_data=target,
        metadata=found["metadata"],
        description=found["description"],
    )


def materializations_of(
    context: dg.AssetExecutionContext, asset_key: str, partitions: Sequence[str]
) -> dict[str, AssetCheckEvaluationTargetMaterializationData]:
    """This run's materialization of each partition of `asset_key`, as a check evaluation's target."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset_key), asset_partitions=list(partitions)),
        limit=len(partitions),
    ).records
    return {
        str(r.partition_key): AssetCheckEvaluationTargetMaterializationData(
            storage_id=r.storage_id, run_id=r.run_id, timestamp=r.timestamp
        )
        for r in records
        if r.run_id == context.run_id and r.partition_key is not None
    }
