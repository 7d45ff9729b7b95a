"""What every invariant check reports: pass or fail, how many rows break it, and the first few of them."""

from collections.abc import Sequence

import dagster as dg


def violations_result(
    violations: Sequence[object], what: str, check: dg.AssetCheckKey | None = None
) -> dg.AssetCheckResult:
    """`check` names the result when one step yields the results of several checks."""
    return dg.AssetCheckResult(
        passed=not violations,
        asset_key=check.asset_key if check else None,
        check_name=check.name if check else None,
        metadata={"violations": len(violations), "examples": dg.MetadataValue.json([str(v) for v in violations[:10]])},
        description=f"{len(violations)} {what}" if violations else None,
    )
