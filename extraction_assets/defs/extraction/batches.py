"""Batch backfills (`EXTRACTION_LLM_BATCH=1`) in Dagster: the sensor that starts a partition's extraction when one
of its batches has finished, so the documents it answered are extracted without anyone waiting on the batch (the
extraction's own batch steps are `lib/stages/batches.py`).
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from extraction_assets.defs.jobs import extract_job
from extraction_assets.defs.resources import ExtractorResource, WarehouseResource
from extraction_assets.lib.llm import LLMClient, retrieve_batch
from extraction_assets.lib.warehouse import open_batches


@dg.sensor(
    job=extract_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="With EXTRACTION_LLM_BATCH=1: polls the open Batch API batches; a finished one starts its "
    "partition's extraction, which stores the answers. Skips, saying why, when batch mode is off.",
)
def llm_batch_sensor(
    context: dg.SensorEvaluationContext, warehouse: WarehouseResource, extractor: ExtractorResource
) -> dg.SensorResult:
    """Polls open batches; a finished one starts its partition's extraction (once per batch and status)."""
    settings = extractor.llm_settings()
    if settings is None or not extractor.llm_batch:
        return dg.SensorResult(skip_reason="batch backfills are off (EXTRACTION_LLM_BATCH)")
    if not Path(warehouse.path).exists():
        return dg.SensorResult(skip_reason="no warehouse yet")
    with warehouse.connect(read_only=True) as con:
        waiting = open_batches(con)
    if not waiting:
        return dg.SensorResult(skip_reason="no open batch")
    client = LLMClient(settings)
    runs = []
    for batch in waiting:
        state = retrieve_batch(client.openai, batch["batch_id"])
        if state.finished:
            key = batch["schema_version"]
            runs.append(dg.RunRequest(partition_key=key, run_key=f"batch:{state.batch_id}:{state.status}"))
    if not runs:
        return dg.SensorResult(skip_reason=f"{len(waiting)} batches still in progress")
    return dg.SensorResult(run_requests=runs)
