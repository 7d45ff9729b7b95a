"""Evaluation results in the warehouse (`eval_runs`, `eval_metrics`), so a version's history can be plotted.

A run is keyed by (dataset, schema version, extractor version, model, run time); storing the same run
again replaces it, in one transaction with its metrics.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from extraction_assets.lib.evaluation.metrics import MICRO
from extraction_assets.lib.evaluation.runner import EvalResult
from extraction_assets.lib.models import stable_id
from extraction_assets.lib.warehouse.connection import insert_rows, open_warehouse, rows_as_dicts, transaction
from extraction_assets.lib.warehouse.extraction import cache_entries_for, insert_cache_entries


def run_id_for(result: EvalResult) -> str:
    return stable_id(result.dataset, result.schema_version, result.extractor, result.model, result.run_at.isoformat())


def store_eval(con: duckdb.DuckDBPyConnection, result: EvalResult, report_path: str | None = None) -> str:
    """Write the run and its per-field metrics; returns the run id."""
    run_id = run_id_for(result)
    key = {
        "run_id": run_id,
        "dataset": result.dataset,
        "schema_version": result.schema_version,
        "extractor_version": result.extractor,
        "model": result.model,
        "run_at": result.run_at,
    }
    run = {
        **key,
        "mode": result.mode,
        "source": result.source,
        "documents": result.documents,
        "documents_failed": result.documents_failed,
        "records_invalid": result.records_invalid,
        "document_limit": result.document_limit,
        "grounding_rate": result.grounding_rate,
        "hallucination_rate": result.hallucination_rate,
        "needs_review_rate": result.needs_review_rate,
        "items_proposed": result.items_proposed,
        "items_stored": result.items_stored,
        "items_dropped": result.items_dropped,
        "ece": result.calibration.ece,
        "calibration": json.dumps(result.calibration.model_dump(mode="json")),
        "latency_ms_mean": result.latency_ms_mean,
        "latency_ms_p95": result.latency_ms_p95,
        "wall_seconds": result.wall_seconds,
        "model_calls": result.model_calls,
        "cache_hits": result.cache_hits,
        "prompt_tokens": result.prompt_tokens,
        "completion_tokens": result.completion_tokens,
        "notes": json.dumps({"notes": result.notes, "messages": result.messages}, ensure_ascii=False),
        "report_path": report_path,
        "review": None if result.review is None else json.dumps(result.review.model_dump(mode="json")),
        "placement": None if result.placement is None else json.dumps(result.placement.model_dump(mode="json")),
    }
    metrics = [
        {**key, **f.model_dump()}  # every FieldScore attribute is an eval_metrics column of the same name
        for f in result.fields
    ]
    with transaction(con):
        con.execute("DELETE FROM eval_metrics WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM eval_runs WHERE run_id = ?", [run_id])
        insert_rows(con, "eval_runs", [run])
        insert_rows(con, "eval_metrics", metrics)
    return run_id


def latest_metrics(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Per-field metrics of the latest run of every (dataset, schema version, extractor version, model).

    A full run wins over a later slice (`--limit`): a version's score is that of the whole dataset whenever
    there is one. Each row carries its run's `documents` and `document_limit` (None: the whole dataset).
    """
    return rows_as_dicts(
        con,
        """WITH latest AS (
               SELECT run_id, documents, document_limit FROM eval_runs
               QUALIFY row_number() OVER (
                   PARTITION BY dataset, schema_version, extractor_version, coalesce(model, '')
                   ORDER BY document_limit IS NOT NULL, run_at DESC) = 1)
           SELECT m.*, latest.documents, latest.document_limit FROM eval_metrics m JOIN latest USING (run_id)
           ORDER BY m.dataset, m.schema_version, m.run_at, m.field""",
    )


def micro_history(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every run's pooled scores over time: the history of each version."""
    return rows_as_dicts(
        con,
        """SELECT dataset, schema_version, extractor_version, model, run_at, precision, recall, f1
           FROM eval_metrics WHERE field = ? ORDER BY dataset, schema_version, run_at""",
        [MICRO],
    )


class WarehouseModelCache:
    """Model answers for evaluated documents, kept in `llm_cache` like production's.

    Each call opens and closes its own connection, so no DuckDB lock is held while a model works.
    """

    def __init__(self, warehouse: Path | str) -> None:
        self.warehouse = Path(warehouse)

    def load(self, model: str, doc_ids: list[str]) -> dict[str, dict[str, Any]]:
        with open_warehouse(self.warehouse) as con:
            return cache_entries_for(con, model, doc_ids)

    def store(self, entries: list[dict[str, Any]]) -> None:
        if not entries:
            return
        with open_warehouse(self.warehouse) as con, transaction(con):
            insert_cache_entries(con, entries)
