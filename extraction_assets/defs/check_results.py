"""What every invariant check reports: pass or fail, how many rows break it, and the first few of them."""

from collections.abc import Sequence

import dagster as dg

from extraction_assets.defs.resources import PipelineResource
from extraction_assets.lib.schemas import SchemaVersion, discover_schemas


def violations_result(violations: Sequence[object], what: str) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not violations,
        metadata={"violations": len(violations), "examples": dg.MetadataValue.json([str(v) for v in violations[:10]])},
        description=f"{len(violations)} {what}" if violations else None,
    )


def known_schemas(pipeline: PipelineResource) -> list[SchemaVersion]:
    return list(discover_schemas(pipeline.prompts_path)[0].values())
