"""What every invariant check reports: pass or fail, how many rows break it, and the first few of them."""

from collections.abc import Sequence

import dagster as dg


def violations_result(violations: Sequence[object], what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not violations,
        metadata={"violations": len(violations), "examples": dg.MetadataValue.json([str(v) for v in violations[:10]])},
        description=f"{len(violations)} {what}" if violations else None,
    )
