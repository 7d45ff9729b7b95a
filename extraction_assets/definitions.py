"""The code location: every Dagster object, wired in one place.

The wiring is explicit rather than `load_from_defs_folder`: the resources are built from `Settings`,
which tests and the CLI pass in (a temporary warehouse, another inbox), and this list is the one
table of contents of the code location.

Every job runs its steps in the run's own process (`in_process_executor`): they all write through the one
DuckDB writer (pool `duckdb`, limit 1), so a process per step bought nothing but a fresh import of the code
location for each step. A DuckLake warehouse takes many writers, so there a run may also spread its steps over
processes (`multi_or_in_process_executor`, multiprocess unless the run config picks `in_process`).
"""

import dagster as dg

from extraction_assets.defs.automation import automation_sensor
from extraction_assets.defs.evaluation.assets import eval_comparison, eval_report
from extraction_assets.defs.evaluation.challenger import challenger_comparison, challenger_job
from extraction_assets.defs.extraction.assets import extracted_items_and_evidence
from extraction_assets.defs.extraction.batches import llm_batch_sensor
from extraction_assets.defs.ingest import checks as ingest_checks
from extraction_assets.defs.ingest.assets import raw_documents, scrubbed_documents
from extraction_assets.defs.jobs import JOBS
from extraction_assets.defs.mail_sensor import live_mail_job, mail_sensor
from extraction_assets.defs.partitions import LAKE
from extraction_assets.defs.resources import resources_from_settings
from extraction_assets.defs.review.assets import review_queue
from extraction_assets.defs.schedules import ingest_schedule, nightly_extract_schedule
from extraction_assets.defs.sensors import inbox_sensor, schema_version_sensor
from extraction_assets.defs.sessions import interview_sessions, session_job, session_sensor
from extraction_assets.lib.settings import Settings

ASSETS = [
    raw_documents,
    scrubbed_documents,
    extracted_items_and_evidence,
    review_queue,
    eval_report,
    eval_comparison,
    challenger_comparison,
    interview_sessions,
]
# the extraction invariants and the audit log's check are their assets' own check specs (evaluated per partition
# by the step that materializes them, see `defs/extraction/checks.py`); ingest's checks are checks of their own
CHECKS = dg.load_asset_checks_from_modules([ingest_checks])


def build_definitions(settings: Settings | None = None) -> dg.Definitions:
    """Definitions for the given settings (tests pass a temporary warehouse); the environment otherwise."""
    return dg.Definitions(
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[*JOBS, session_job, live_mail_job, challenger_job],
        sensors=[schema_version_sensor, inbox_sensor, automation_sensor, llm_batch_sensor, session_sensor, mail_sensor],
        schedules=[ingest_schedule, nightly_extract_schedule],
        resources=resources_from_settings(settings or Settings.from_env()),
        executor=dg.multi_or_in_process_executor if LAKE else dg.in_process_executor,
    )


defs = build_definitions()
