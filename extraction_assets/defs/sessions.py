"""Live interview sessions: a sensor that sees a session file change within seconds, and the asset that runs the
session flow on what changed (light extraction into `session_state`, checkpoint drafts, post-session extraction).

The sensor only compares file stamps; the asset does the work, so every pass is a run with its logs."""

import hashlib
from pathlib import Path

import dagster as dg

from extraction_assets.defs.partitions import POOL
from extraction_assets.defs.resources import ExtractorResource, PipelineResource, WarehouseResource

SESSION_POLL_SECONDS = 5  # with a run's start-up, a completed session's records are stored well within 60 s
SESSION_RUN_PRIORITY = 10  # queued runs start highest priority first (Dagster's default is 0)


@dg.asset(
    group_name="sessions",
    kinds={"duckdb", "python"},
    pool=POOL,
    retry_policy=dg.RetryPolicy(max_retries=3, delay=SESSION_POLL_SECONDS),  # a failed final pass is tried again
    description=(
        "Live interview sessions (table `sessions`): light extraction into `session_state` after each new "
        "respondent turn, checkpoint drafts of covered objectives and post-session extraction into "
        "`extracted_items` when a session is completed."
    ),
)
def interview_sessions(
    context: dg.AssetExecutionContext,
    warehouse: WarehouseResource,
    pipeline: PipelineResource,
    extractor: ExtractorResource,
) -> dg.MaterializeResult:
    # the PII stack and the extractors load with the step, not with the code location
    from extraction_assets.lib.pii import key_from_env, load_policy, markdown_table
    from extraction_assets.lib.sessions import SessionEnv, light_extractor, sync_sessions

    env = SessionEnv(
        sessions_dir=pipeline.sessions_path,
        prompts_dir=pipeline.prompts_path,
        policy=load_policy(Path(pipeline.pii_policy) if pipeline.pii_policy else None),
        vault_key=key_from_env(),
        extractor=extractor.build(),
        light=light_extractor(extractor, pipeline.session_light_model, pipeline.prompts_path),
    )
    reports = sync_sessions(warehouse.connect, env)
    for r in reports:
        if r.light == "failed":
            context.log.warning(
                f"{r.tenant_id}/{r.session_id}: light extraction failed, the session goes on: {r.light_error}"
            )
        if r.error:
            context.log.warning(f"{r.tenant_id}/{r.session_id}: {r.error}")
    unfinished = [f"{r.tenant_id}/{r.session_id}" for r in reports if r.final_items is not None and r.error]
    if unfinished:  # everything else is stored; the retry (or the next change) does their final pass again
        raise dg.Failure(f"post-session extraction failed for {', '.join(unfinished)}; it is retried")
    delays = [r.final_delay_s for r in reports if r.final_delay_s is not None]
    return dg.MaterializeResult(
        metadata={
            "sessions_changed": len(reports),
            "light_failed": sum(r.light == "failed" for r in reports),
            "objectives_checkpointed": sum(len(r.checkpointed) for r in reports),
            "sessions_completed_now": len(delays),
            "max_completion_to_records_s": max(delays) if delays else 0.0,
            "sessions": dg.MetadataValue.md(
                markdown_table(
                    ["tenant", "session", "status", "new turns", "light", "checkpointed", "final items", "delay s"],
                    [
                        [
                            r.tenant_id,
                            r.session_id,
                            r.status,
                            r.new_respondent_turns,
                            r.light,
                            ", ".join(r.checkpointed),
                            r.final_items,
                            r.final_delay_s,
                        ]
                        for r in reports
                    ],
                )
            ),
        }
    )


session_job = dg.define_asset_job(
    "session_job",
    selection=[interview_sessions],
    description="Bring the live interview sessions up to date (light, checkpoint and post-session extraction).",
)


NO_SESSIONS = hashlib.sha256().hexdigest()[:32]  # the fingerprint of a folder without session files


def sessions_fingerprint(sessions_dir: Path) -> str:
    """The stamps of every session file (taken by the listing, no link followed), and the entries that may not be
    read: a change in any of them is a new fingerprint."""
    from extraction_assets.lib.sessions import session_files  # the sessions stack loads when the sensor ticks

    digest = hashlib.sha256()
    for entry in session_files(sessions_dir):
        stamp = entry.problem if entry.info is None else f"{entry.info.st_size}:{entry.info.st_mtime_ns}"
        digest.update(f"{entry.rel}:{stamp}\n".encode())
    return digest.hexdigest()[:32]


@dg.sensor(
    job=session_job,
    minimum_interval_seconds=SESSION_POLL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every 5 s: a live interview session file that grew or changed status runs session_job (light, "
    "checkpoint and post-session extraction). Skips when no session changed.",
)
def session_sensor(context: dg.SensorEvaluationContext, pipeline: PipelineResource) -> dg.SensorResult:
    """Every few seconds: a session file that grew, changed status or appeared starts a `session_job` run."""
    fingerprint = sessions_fingerprint(pipeline.sessions_path)
    if fingerprint == context.cursor or fingerprint == NO_SESSIONS:  # nothing changed, or nothing there at all
        return dg.SensorResult(skip_reason=f"no session file changed under {pipeline.sessions_dir}", cursor=fingerprint)
    # ahead of queued extraction runs for the one `duckdb` slot: a completed session's records are due within 60 s
    request = dg.RunRequest(run_key=f"sessions:{fingerprint}", tags={"dagster/priority": str(SESSION_RUN_PRIORITY)})
    return dg.SensorResult(run_requests=[request], cursor=fingerprint)
