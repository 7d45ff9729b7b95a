"""Refresh a schema version's review queue: rebuilt from its items, unless it is already in step with them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.warehouse import queue_in_step, rebuild_review_queue, review_queue_figures, row_count

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class QueueReport:
    """A version's queue after the refresh: its size, whether it was written, and the figures its
    materialization shows (`by_rule`, `items_by_status`, `preview`)."""

    version: str
    queued: int
    rebuilt: bool
    figures: dict[str, Any]


def refresh_review_queue(con: duckdb.DuckDBPyConnection, version: str) -> QueueReport:
    """A queue in step with its items (every idle pass) is not written again; any other is rebuilt from them."""
    in_step = queue_in_step(con, version)
    queued = row_count(con, "review_queue", version) if in_step else rebuild_review_queue(con, version)
    return QueueReport(version=version, queued=queued, rebuilt=not in_step, figures=review_queue_figures(con, version))
