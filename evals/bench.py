"""Benchmarks: `make bench` prints a table and writes `{"group": {"figure": number}}` to a JSON file.

Each group returns its figures together with what they were measured on, so a number never
travels without its conditions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from evals.bench_agreement import bench_agreement
from evals.bench_chaos_import import bench_chaos_import
from evals.bench_chunks import bench_chunks
from evals.bench_confidence import bench_confidence
from evals.bench_email import bench_email
from evals.bench_eval import bench_eval
from evals.bench_hostile import bench_hostile
from evals.bench_model_path import bench_model_path
from evals.bench_pii import bench_pii
from evals.bench_readers import bench_readers
from evals.bench_review import bench_review
from evals.bench_review_loop import bench_review_loop
from evals.bench_scale import bench_scale
from evals.bench_scale_out import bench_scale_out
from evals.bench_sessions import bench_sessions
from evals.bench_throughput import bench_throughput
from evals.bench_ui import bench_ui
from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.readers import read_inbox
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX, Settings

Figures = dict[str, float | int | str]


def _sample_documents() -> list[Document]:
    return [d for d in read_inbox(SAMPLE_INBOX) if isinstance(d, Document)]


def _synthetic_inbox(target: Path, copies: int, seed: int = 7) -> int:
    """The sample inbox repeated with a varied line in each copy, so every copy is a new document."""
    rng = random.Random(seed)
    written = 0
    for n in range(copies):
        for path in sorted(SAMPLE_INBOX.rglob("*.txt")) + sorted(SAMPLE_INBOX.rglob("*.md")):
            if path.parent == SAMPLE_INBOX:
                continue
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            if not text.strip():
                continue
            rel = path.relative_to(SAMPLE_INBOX)
            out = target / rel.parts[0] / f"copy{n}" / Path(*rel.parts[1:])
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(f"{text}\nBatch {n}-{rng.randint(0, 10**9)}: we will review the delay by Friday.\n")
            written += 1
    return written


def bench_foundation(copies: int = 40) -> Figures:
    docs = _sample_documents()
    schema = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    extractor = HeuristicExtractor()
    rounds = 20
    started = time.perf_counter()
    scrubbed = [scrub_document(d) for _ in range(rounds) for d in docs]
    scrub_s = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(rounds):
        for doc, clean in zip(docs, scrubbed[: len(docs)], strict=True):
            extract_document(doc, clean, schema, extractor)
    extract_s = time.perf_counter() - started

    import dagster as dg

    from extraction_assets.runner import run_pipeline  # Dagster only for the end-to-end figure

    with tempfile.TemporaryDirectory() as tmp:
        inbox = Path(tmp) / "inbox"
        files = _synthetic_inbox(inbox, copies)
        settings = Settings(warehouse=Path(tmp) / "bench.duckdb", inbox=inbox, prompts_dir=DEFAULT_PROMPTS)
        started = time.perf_counter()
        run_pipeline(settings, instance=dg.DagsterInstance.ephemeral())
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        run_pipeline(settings, instance=dg.DagsterInstance.ephemeral())
        rerun_s = time.perf_counter() - started
        shutil.rmtree(inbox)
    return {
        "scrub_docs_per_s": round(len(scrubbed) / scrub_s, 1),
        "heuristic_extract_docs_per_s": round(len(docs) * rounds / extract_s, 1),
        "pipeline_documents": files,
        "pipeline_first_run_s": round(first_s, 2),
        "pipeline_docs_per_s": round(files / first_s, 1),
        "pipeline_rerun_s": round(rerun_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "measured_on": f"{len(docs)} sample documents x {rounds} rounds; pipeline on {files} synthetic text documents",
    }


# Each group registers here; a group's module may live beside this one (evals/bench_<group>.py).
BENCHES: dict[str, Callable[[], Figures]] = {
    "foundation": bench_foundation,
    "model_path": bench_model_path,
    "chunks": bench_chunks,
    "agreement": bench_agreement,
    "pii": bench_pii,
    "eval": bench_eval,
    "confidence": bench_confidence,
    "email": bench_email,
    "chaos_import": bench_chaos_import,
    "review": bench_review,
    "review_loop": bench_review_loop,
    "sessions": bench_sessions,
    "throughput": bench_throughput,
    "hostile": bench_hostile,
    "readers": bench_readers,
    "ui": bench_ui,
    "scale_out": bench_scale_out,
    "scale": bench_scale,
}


def machine() -> str:
    """The processor, its cores and the memory a group ran on: times and CPU-seconds of one machine are not those of
    another (the bare scan of the bench inbox: 2.95 s on the 2-core machine of one round, 4.0 to 4.3 s on that of
    the next)."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        named = [
            line.partition(":")[2].strip() for line in cpuinfo.read_text().splitlines() if line.startswith("model name")
        ]
        model = named[0] if named else model
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30 if hasattr(os, "sysconf") else 0.0
    return f"{model}, {os.cpu_count()} cores, {memory:.0f} GiB"


def run_groups(names: list[str], console: Console) -> tuple[dict[str, Figures], list[str]]:
    """Every group runs even when one before it fails: its traceback is printed and it is named at the end. Each
    group's figures say which machine made them (`machine`)."""
    results: dict[str, Figures] = {}
    failed: list[str] = []
    for name in names:
        console.print(f"running [bold]{name}[/] ...")
        try:
            results[name] = BENCHES[name]() | {"machine": machine()}
        except Exception:  # a group's failure is reported, and the other groups still measure
            console.print(f"[bold red]{name} failed[/]\n{traceback.format_exc()}")
            failed.append(name)
    return results, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=Path(".data/bench/results.json"))
    parser.add_argument("--only", action="append", choices=sorted(BENCHES), help="run only this group")
    args = parser.parse_args(argv)
    console = Console()
    results, failed = run_groups(args.only or list(BENCHES), console)
    table = Table(title="benchmarks")
    for column in ("group", "figure", "value"):
        table.add_column(column)
    for group, figures in results.items():
        for figure, value in figures.items():
            table.add_row(group, figure, str(value))
    console.print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    existing = json.loads(args.out.read_text()) if args.out.exists() else {}
    existing.update(results)
    args.out.write_text(json.dumps(existing, indent=2, ensure_ascii=False) + "\n")
    console.print(f"written to {args.out}")
    if failed:
        console.print(f"[bold red]failed groups[/]: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
