"""Scale: the whole offline `extraction-assets run` on inboxes of 2 k, 8 k and 32 k documents built from the eval
sets (`evals.bench_inbox`, the throughput bench's mix, repeated over as many tenants as it takes), each from an empty
warehouse in a child process: its seconds, its CPU per document (the run and its worker processes) and its peak
memory (the largest of those processes). From the 8 k and 32 k runs the time a million documents would take is
projected linearly (the slope between them, so process start-up and fixed costs do not count twice), and the 32 k
run's peak memory is compared with the 2 k run's: memory must not grow with the warehouse.

BENCH_SCALE_SIZES overrides the sizes (comma-separated, e.g. `500,2000` for a quick look).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from evals.bench_inbox import build_inbox, evalsets_dir, source_files
from evals.bench_throughput import run_offline

Figures = dict[str, float | int | str]
SIZES = (2_000, 8_000, 32_000)
MILLION = 1_000_000


def _sizes() -> tuple[int, ...]:
    given = os.environ.get("BENCH_SCALE_SIZES", "").strip()
    return tuple(int(s) for s in given.split(",") if s.strip()) if given else SIZES


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.1f}/{five:.1f}"


def bench_scale() -> Figures:
    data = evalsets_dir()
    if not data.exists():
        return {"skipped": 1, "measured_on": f"no eval data at {data}"}
    files = source_files(data)
    sizes = _sizes()
    figures: Figures = {}
    runs: dict[int, tuple[float, float, float]] = {}  # documents -> (seconds, cpu seconds, peak MB)
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        for documents in sizes:
            root = Path(tmp) / str(documents)
            inbox = root / "inbox"
            build_inbox(inbox, documents, files)
            megabytes = sum(p.stat().st_size for p in inbox.rglob("*") if p.is_file()) / 1e6
            before = _load()
            run = run_offline(inbox, root / "warehouse.duckdb")
            loads.append(f"{before} -> {_load()}")
            name = f"scale_{documents}"
            figures[f"{name}_inbox_mb"] = round(megabytes, 1)
            figures[f"{name}_s"] = run.seconds
            figures[f"{name}_cpu_s"] = run.cpu_seconds
            figures[f"{name}_cpu_ms_per_document"] = round(1000 * run.cpu_seconds / documents, 2)
            figures[f"{name}_peak_rss_mb"] = run.peak_rss_mb
            figures[f"{name}_exit_code"] = run.exit_code
            if run.failed:
                figures[f"{name}_failed_steps"] = ", ".join(run.failed)
            runs[documents] = (run.seconds, run.cpu_seconds, run.peak_rss_mb)
            shutil.rmtree(root)
    figures |= _projection(runs)
    figures["measured_on"] = (
        f"inboxes of {', '.join(str(n) for n in sizes)} documents from {data.name}/*/dev.jsonl "
        f"({len(files)} records repeated over tenants), each from an empty warehouse, offline `extraction-assets run` "
        f"in a child process; {os.cpu_count()} cores; worker niceness "
        f"{os.environ.get('EXTRACTION_WORKER_NICENESS') or 'default'}; load average (1/5 min) before -> after each "
        f"run: {'; '.join(loads)}"
    )
    return figures


def _projection(runs: dict[int, tuple[float, float, float]]) -> Figures:
    """A million documents at the slope between the two largest runs; memory of the largest over the smallest."""
    if len(runs) < 2:
        return {}
    sizes = sorted(runs)
    small, large = sizes[-2], sizes[-1]
    per_document = (runs[large][0] - runs[small][0]) / (large - small)
    cpu_per_document = (runs[large][1] - runs[small][1]) / (large - small)
    hours = (runs[large][0] + per_document * (MILLION - large)) / 3600
    return {
        "seconds_per_1000_documents_marginal": round(1000 * per_document, 2),
        "cpu_ms_per_document_marginal": round(1000 * cpu_per_document, 2),
        "projected_million_documents_hours": round(hours, 2),
        "peak_rss_largest_over_smallest": round(runs[large][2] / runs[sizes[0]][2], 3),
    }
