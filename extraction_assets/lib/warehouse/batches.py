"""Batch API backfills in the warehouse: the batches a run submitted, and their answers stored in the cache."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.warehouse.connection import insert_rows, now, rows_as_dicts, to_json, transaction
from extraction_assets.lib.warehouse.extraction import insert_cache_entries

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb


def record_batch(
    con: duckdb.DuckDBPyConnection,
    batch_id: str,
    status: str,
    schema_version: str,
    model: str,
    requests: Sequence[dict[str, Any]],
) -> None:
    stamp = now()
    insert_rows(
        con,
        "llm_batches",
        [
            {
                "batch_id": batch_id,
                "schema_version": schema_version,
                "model": model,
                "status": status,
                "request_count": len(requests),
                "request_hashes": to_json([r["request_hash"] for r in requests]),
                "requests": to_json(list(requests)),
                "answered": 0,
                "failed": 0,
                "submitted_at": stamp,
                "checked_at": stamp,
                "ingested_at": None,
            }
        ],
    )


def open_batches(con: duckdb.DuckDBPyConnection, schema_version: str | None = None) -> list[dict[str, Any]]:
    """Batches whose answers are not stored yet (of one partition, or all), oldest first."""
    return rows_as_dicts(
        con,
        "SELECT batch_id, schema_version, model, status FROM llm_batches WHERE ingested_at IS NULL "
        "AND (? IS NULL OR schema_version = ?) ORDER BY submitted_at",
        [schema_version, schema_version],
    )


def batch_requests(con: duckdb.DuckDBPyConnection, batch_id: str) -> list[dict[str, Any]]:
    row = con.execute("SELECT requests FROM llm_batches WHERE batch_id = ?", [batch_id]).fetchone()
    return json.loads(row[0]) if row else []


def waiting_request_hashes(con: duckdb.DuckDBPyConnection, schema_version: str) -> set[str]:
    """Requests already in a batch that has not been stored: a run does not submit them again."""
    rows = con.execute(
        "SELECT request_hashes FROM llm_batches WHERE ingested_at IS NULL AND schema_version = ?", [schema_version]
    ).fetchall()
    return {h for (hashes,) in rows for h in json.loads(hashes)}


def update_batch_status(con: duckdb.DuckDBPyConnection, batch_id: str, status: str) -> None:
    con.execute("UPDATE llm_batches SET status = ?, checked_at = ? WHERE batch_id = ?", [status, now(), batch_id])


def store_batch_answers(
    con: duckdb.DuckDBPyConnection, batch_id: str, status: str, entries: Sequence[dict[str, Any]], failed: int
) -> None:
    """A finished batch: its answers go to `llm_cache` and the batch is marked stored, in one transaction."""
    stamp = now()
    with transaction(con):
        insert_cache_entries(con, entries)
        con.execute(
            "UPDATE llm_batches SET status = ?, answered = ?, failed = ?, checked_at = ?, ingested_at = ? "
            "WHERE batch_id = ?",
            [status, len(entries), failed, stamp, stamp, batch_id],
        )
