"""Review bench: how fast a correction is applied and audited, the chain checked, the page served.

The warehouse is the bundled sample inbox extracted under pulse@v1 by the heuristic extractor, written
with the production functions (no Dagster). Corrections alternate accept / reject over every item, so
the audit chain grows to `CORRECTIONS` rows; each figure is a median (or a total where it says so).
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.models import Document, ExtractionOutcome
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.readers import read_inbox
from extraction_assets.lib.review import AuthConfig, Authenticator, check_chain, corrections, export_tasks, hash_token
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX
from extraction_assets.lib.warehouse import (
    insert_documents,
    open_warehouse,
    rebuild_review_queue,
    upsert_scrubbed,
    write_extraction_batch,
)
from extraction_assets.web.review_app import create_review_app

Figures = dict[str, float | int | str]
SCHEMA = "pulse@v1"
CORRECTIONS = 1000
PAGE_REQUESTS = 30
BENCH_TOKEN = "bench-reviewer-token"  # signs the bench's page requests in


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def _sample_warehouse(path: Path) -> list[tuple[str, str]]:
    """The sample inbox extracted into `path`; returns (tenant, item_id) of every item."""
    schema = load_schema(DEFAULT_PROMPTS, SCHEMA)
    docs = [d for d in read_inbox(SAMPLE_INBOX) if isinstance(d, Document) and schema.reads_kind(d.kind)]
    scrubbed = [scrub_document(d) for d in docs]
    outcomes: list[ExtractionOutcome] = [
        extract_document(d, s, schema, HeuristicExtractor()) for d, s in zip(docs, scrubbed, strict=True)
    ]
    with open_warehouse(path) as con:
        insert_documents(con, docs)
        upsert_scrubbed(con, scrubbed)
        write_extraction_batch(con, SCHEMA, outcomes)
        rebuild_review_queue(con, SCHEMA)
        return [tuple(r) for r in con.execute("SELECT tenant_id, item_id FROM extracted_items ORDER BY 2").fetchall()]


def bench_review() -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "review.duckdb"
        items = _sample_warehouse(path)
        timings: list[float] = []
        with open_warehouse(path) as con:
            for n in range(CORRECTIONS):
                tenant, item_id = items[n % len(items)]
                operation = corrections.accept if (n // len(items)) % 2 == 0 else corrections.reject
                started = time.perf_counter()
                operation(con, tenant, item_id, "bench", note=f"round {n // len(items)}")
                timings.append(time.perf_counter() - started)
            started = time.perf_counter()
            report = check_chain(con)
            check_s = time.perf_counter() - started
            started = time.perf_counter()
            tasks = export_tasks(con, items[0][0], status="any")
            export_s = time.perf_counter() - started
        assert report.intact, report.problems
        tenant = items[0][0]
        principals = [{"name": "bench", "tenant": tenant, "token_sha256": hash_token(BENCH_TOKEN)}]
        auth = Authenticator(AuthConfig.model_validate({"principals": principals}))
        client = TestClient(create_review_app(path, tenant, DEFAULT_PROMPTS, auth), base_url="http://127.0.0.1")
        client.headers["Authorization"] = f"Bearer {BENCH_TOKEN}"
        queue_ms, item_ms = [], []
        for _ in range(PAGE_REQUESTS):
            started = time.perf_counter()
            assert client.get("/", params={"status": "any"}).status_code == 200
            queue_ms.append(time.perf_counter() - started)
            started = time.perf_counter()
            assert client.get(f"/items/{items[0][1]}").status_code == 200
            item_ms.append(time.perf_counter() - started)
    return {
        "correction_ms_median": _median_ms(timings),
        "correction_ms_p95": round(sorted(timings)[int(0.95 * len(timings))] * 1000, 2),
        "chain_check_ms_total": round(check_s * 1000, 1),
        "audit_rows_checked": report.head.row_count,
        "label_studio_export_tasks_per_s": round(len(tasks) / export_s, 1),
        "queue_page_ms_median": _median_ms(queue_ms),
        "item_page_ms_median": _median_ms(item_ms),
        "measured_on": (
            f"{len(items)} sample items (pulse@v1, heuristic), {CORRECTIONS} alternating accept/reject corrections "
            f"on one connection; chain check over all rows; {len(tasks)} tasks exported; "
            f"{PAGE_REQUESTS} in-process requests per page (all of one tenant's items on the queue page)"
        ),
    }
