"""The review queue, partitioned by schema version: derived from the items that need a person, of every shard.

It runs in the same run as its versions' extraction (one run per pass), every version of the run in one step, and
materializes the partitions it rebuilt: a version whose extraction failed a blocking check in this run keeps its
queue as it was, and the run says which version was held and why; the others go on. Rebuilt alone (from the UI, or
after the shards of a version), a version's blocking checks are evaluated first. The audit log's check is one of
its checks (`review/checks.py`): the log is one chain for every version, so it is checked once per run.
"""

from collections.abc import Iterator

import dagster as dg

from extraction_assets.defs.automation import AFTER_UPSTREAM
from extraction_assets.defs.extraction import checks as extraction_checks
from extraction_assets.defs.partitions import (
    EVERY_SHARD,
    POOL,
    schema_for_partition,
    schema_versions,
)
from extraction_assets.defs.resources import PipelineResource, WarehouseResource
from extraction_assets.defs.review.checks import AUDIT_SPEC, audit_log_result
from extraction_assets.lib.stages import refresh_review_queue, refresh_review_queues, rivals_outside, sync_version_roles


def _failed_in_run(context: dg.AssetExecutionContext) -> dict[str, list[str]] | None:
    """The blocking extraction checks each partition failed in this run; None when the run evaluated none (the
    queue runs without its extraction)."""
    evaluations = [
        entry.dagster_event.event_specific_data
        for entry in context.instance.all_logs(context.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        if entry.dagster_event is not None
    ]
    blocking = [e for e in evaluations if e.asset_check_key in extraction_checks.BLOCKING]
    if not blocking:
        return None
    failed: dict[str, list[str]] = {}
    for e in blocking:
        if not e.passed:
            failed.setdefault(e.partition, []).append(e.asset_check_key.to_user_string())
    return failed


@dg.asset(
    partitions_def=schema_versions,
    group_name="review",
    kinds={"duckdb", "python"},
    pool=POOL,
    deps=[dg.AssetDep(key, partition_mapping=EVERY_SHARD) for key in ("extracted_items", "grounded_evidence")],
    # in a pass it runs with its extraction; it follows an extraction that ran without it (automation, a shard's run)
    automation_condition=AFTER_UPSTREAM,
    backfill_policy=dg.BackfillPolicy.single_run(),  # its partitions are versions, never shards: always one run
    check_specs=[AUDIT_SPEC],
    output_required=False,
    description="Items that need a person, with the rules that sent them there, most urgent first.",
)
def review_queue(
    context: dg.AssetExecutionContext, warehouse: WarehouseResource, pipeline: PipelineResource
) -> Iterator[dg.AssetMaterialization | dg.AssetCheckResult]:
    from extraction_assets.lib.pii import markdown_table  # the detectors load with the step, not the code location

    in_run = _failed_in_run(context)
    with warehouse.connect() as con:  # challengers and promotions decide what each version queues
        changed = sync_version_roles(con, pipeline.prompts_path)
    if changed:
        context.log.info(f"schema version roles changed: {', '.join(changed)}")
    schemas = {
        partition: schema_for_partition(pipeline.prompts_path, partition) for partition in context.partition_keys
    }
    with warehouse.connect() as con:
        for partition, schema in list(schemas.items()):
            held = in_run.get(partition, []) if in_run is not None else extraction_checks.blocking_failures(con, schema)
            if held:
                context.log.warning(f"{partition}: review queue held, blocking checks failed: {', '.join(held)}")
                del schemas[partition]
        # every version's queue in one go: a statement each for all of them, not a statement each per version
        reports = refresh_review_queues(con, [s.key for s in schemas.values()], {s.key: s for s in schemas.values()})
    for partition, schema in schemas.items():
        report = reports[schema.key]
        figures = report.figures
        yield dg.AssetMaterialization(
            asset_key="review_queue",
            partition=partition,
            metadata={
                "dagster/row_count": report.queued,
                "by_rule": dg.MetadataValue.json(figures["by_rule"]),
                "items_by_status": dg.MetadataValue.json(figures["items_by_status"]),
                "groups": figures["groups"],  # decisions that clear the queue when each group is decided at once
                "added_by_reviewers": figures["added_by_reviewers"],
                "role": f"{figures['role']} (rivals: {', '.join(figures['rivals']) or 'none'})",
                "disagreements": figures["disagreements"],  # items queued because a rival version disagrees
                # each tenant's refit from its reviewers' decisions (how many it used), and the drafts it sent to review
                "tenant_refits": dg.MetadataValue.json(figures["tenant_refits"]),
                "sent_to_review_by_refits": figures["sent_to_review_by_refits"],
                "preview": dg.MetadataValue.md(
                    markdown_table(
                        ["type", "title", "conf", "reasons", "source"], [list(r.values()) for r in figures["preview"]]
                    )
                ),
            },
        )
    with warehouse.connect() as con:  # a challenger's rival compares against it: its disagreements follow
        for rival in rivals_outside(con, context.partition_keys):
            if refresh_review_queue(con, rival).rebuilt:
                context.log.info(f"{rival}: review queue rebuilt beside its rival version")
    if AUDIT_SPEC.key in context.selected_asset_check_keys:
        yield audit_log_result(context, warehouse)
