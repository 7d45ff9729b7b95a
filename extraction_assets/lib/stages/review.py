"""The review queue's step: refresh a schema version's queue (rebuilt from its items unless already in step with
them), and check the audit trail once for every version."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.review import check_chain, keep_outside_head, read_kept_heads, record_head
from extraction_assets.lib.review.audit import OUTSIDE_HEAD_SUFFIX, ChainReport, KeptHead
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.warehouse import (
    beside_warehouse,
    bring_queues_in_step,
    is_lake,
    rebuild_review_queue,
    review_queue_figures,
    transaction,
)

if TYPE_CHECKING:
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion


@dataclass(frozen=True)
class QueueReport:
    """A version's queue after the refresh: its size, whether it was written, and the figures its
    materialization shows (`by_rule`, `items_by_status`, `preview`)."""

    queued: int
    rebuilt: bool
    figures: dict[str, Any]


def sync_version_roles(con: duckdb.DuckDBPyConnection, prompts_dir: Path) -> list[str]:
    """Each schema version's role (current, challenger, superseded) from its prompt file and the promotions made,
    written where it changed; the versions whose role changed."""
    from extraction_assets.lib.prompt_files import discover_schemas
    from extraction_assets.lib.review.challengers import sync_roles

    return sync_roles(con, discover_schemas(prompts_dir)[0].values())


def rivals_outside(con: duckdb.DuckDBPyConnection, versions: Sequence[str]) -> list[str]:
    """The versions a challenger or current version among `versions` is compared with, not among them: their queues'
    disagreement rows move with these versions' items."""
    from extraction_assets.lib.review.challengers import read_roles

    roles = read_roles(con)
    return sorted({r for v in versions if v in roles for r in roles[v].rivals} - set(versions))


def refresh_review_queue(
    con: duckdb.DuckDBPyConnection, version: str, schema: SchemaVersion | None = None
) -> QueueReport:
    """One version's `refresh_review_queues`."""
    return refresh_review_queues(con, [version], {version: schema} if schema is not None else None)[version]


def refresh_review_queues(
    con: duckdb.DuckDBPyConnection, versions: Sequence[str], schemas: Mapping[str, SchemaVersion] | None = None
) -> dict[str, QueueReport]:
    """Each version's queue brought in step with its items: one in step (every idle pass) is not written again; one
    behind them only by new items is extended by their groups' rows; any other is rebuilt from them. With a
    version's schema (`schemas`), what its tenants' decisions taught is applied first (`review.lessons.teach`: a
    refit where decisions moved, and the drafts a tenant's refit doubts sent to review).

    Every version's fingerprint is read in one statement, and their figures in a statement each for all of them: a
    pass pays the planning of a query once, not once a version; a version whose fingerprint is the one recorded for
    its queue costs nothing more."""
    from extraction_assets.lib.review.challengers import queued_disagreements, read_roles
    from extraction_assets.lib.review.lessons import teach

    listed = list(dict.fromkeys(versions))
    lessons = {v: teach(con, schemas[v]) for v in listed if schemas and v in schemas}
    steps = bring_queues_in_step(con, listed)
    for version in [v for v, step in steps.items() if step == "out of step"]:
        rebuild_review_queue(con, version)
    roles = read_roles(con)
    figures = review_queue_figures(con, listed)
    disagreements = queued_disagreements(con, listed)  # the queues were just refreshed
    reports = {}
    for version in listed:
        role, taught, found = roles.get(version), lessons.get(version), figures[version]
        queued = found.pop("queued")
        found |= {
            "role": role.role if role else "current",
            "rivals": role.rivals if role else [],
            "disagreements": disagreements[version],
            "tenant_refits": taught.fits if taught else {},
            "sent_to_review_by_refits": taught.sent_to_review if taught else 0,
        }
        reports[version] = QueueReport(queued=queued, rebuilt=steps[version] != "in step", figures=found)
    return reports


@dataclass(frozen=True)
class AuditCheck:
    """The audit log's chain as checked, and whether its moved head was recorded in the warehouse."""

    report: ChainReport
    recorded: bool


def check_audit_log(connect: Connect, warehouse: str | Path) -> AuditCheck:
    """Read the whole log with readers sharing the file, then record a head that moved in a short transaction (an
    idle run writes nothing), and keep it signed beside the warehouse and in the user's config folder too (where the
    data are local files)."""
    kept = _kept_heads(warehouse)
    with connect(read_only=True) as con:
        report = check_chain(con, kept)
    recorded = False
    if report.intact and report.head != report.previous:
        with connect() as con, transaction(con):
            recorded = record_head(con, report)
    keep_outside_head(kept, report)
    return AuditCheck(report=report, recorded=recorded)


def accept_audit_log(connect: Connect, warehouse: str | Path) -> AuditCheck:
    """Sign the log as it stands where a head kept outside the warehouse is missing or does not verify (a lost head
    file, a warehouse last checked before heads were signed). Refused, nothing written, when the log fails anything
    else: a row that does not recompute, or a log that no longer extends a head that verifies, is an erasure, not a
    lost head."""
    kept = _kept_heads(warehouse)
    verified = [outside.model_copy(update={"required": False}) for outside in kept if outside.problem is None]
    with connect() as con, transaction(con):
        report = check_chain(con, verified)
        recorded = record_head(con, report)
    keep_outside_head(kept, report)
    return AuditCheck(report=report, recorded=recorded)


def _kept_heads(warehouse: str | Path) -> list[KeptHead]:
    outside = beside_warehouse(warehouse, OUTSIDE_HEAD_SUFFIX)
    return read_kept_heads(outside, required=not is_lake(warehouse)) if outside else []
