"""The pipeline's stages as plain Python: what each asset does, given a way to open the warehouse.

An asset body calls its stage and turns the report into Dagster metadata; the stage reads and writes the warehouse
through the `Connect` it is given (the Dagster resource's, a test's), batch by batch, and never imports Dagster.
"""

from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.stages.evaluate import (
    ChallengerReport,
    EvalRequest,
    EvalStageReport,
    compare_challengers,
    evaluate_version,
    reports_dir,
)
from extraction_assets.lib.stages.extract import (
    ExtractOptions,
    PartitionReport,
    extract_partition,
    idle_report,
    idle_versions,
    version_figures,
)
from extraction_assets.lib.stages.ingest import IngestReport, ingest_inbox
from extraction_assets.lib.stages.progress import Throttled
from extraction_assets.lib.stages.review import (
    AuditCheck,
    QueueReport,
    accept_audit_log,
    check_audit_log,
    refresh_review_queue,
    refresh_review_queues,
    rivals_outside,
    sync_version_roles,
)
from extraction_assets.lib.stages.scrub import ScrubProgress, ScrubReport, scrub_pending

__all__ = [
    "AuditCheck",
    "ChallengerReport",
    "Connect",
    "EvalRequest",
    "EvalStageReport",
    "ExtractOptions",
    "IngestReport",
    "PartitionReport",
    "QueueReport",
    "ScrubProgress",
    "ScrubReport",
    "Throttled",
    "accept_audit_log",
    "check_audit_log",
    "compare_challengers",
    "evaluate_version",
    "extract_partition",
    "idle_report",
    "idle_versions",
    "ingest_inbox",
    "refresh_review_queue",
    "refresh_review_queues",
    "reports_dir",
    "rivals_outside",
    "scrub_pending",
    "sync_version_roles",
    "version_figures",
]
