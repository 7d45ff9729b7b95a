"""What `extraction-assets run` and `summary` do (the parser is `cli.py`): materialize, then print the summary."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from extraction_assets.commands.common import console, seconds_since_start, settings_from_args
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import READER_WAIT_S, give_back, open_warehouse, warehouse_summary
from extraction_assets.runner import INTERRUPTED, StepResult, run_pipeline

if TYPE_CHECKING:
    import dagster as dg


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title="extraction-assets: warehouse summary", show_lines=False)
    table.add_column("what")
    table.add_column("count", justify="right")
    table.add_row("documents", str(summary["documents"]))
    for tenant, kind, n in summary["documents_by_tenant_kind"]:
        table.add_row(f"  {tenant} / {kind}", str(n))
    for kind, n in summary["pii_masked"]:
        table.add_row(f"  PII masked: {kind}", str(n))
    table.add_row("items", str(summary["items"]))
    for version, item_type, status, n in summary["items_by_type"]:
        table.add_row(f"  {version} {item_type} ({status})", str(n))
    table.add_row("evidence", str(summary["evidence"]))
    for kind, n in summary["evidence_by_match"]:
        table.add_row(f"  match {kind}", str(n))
    table.add_row("review queue", str(summary["review_queue"]))
    table.add_row("documents no schema reads", str(summary["unrouted_documents"]))
    table.add_row("dead letters", str(summary["dead_letters"]))
    for stage, n in summary["dead_letters_by_stage"]:
        table.add_row(f"  stage {stage}", str(n))
    table.add_row("failed documents", str(summary["failed_documents"]))
    console.print(table)
    per_schema = Table(title="per schema version: what a person has to review")
    for header in ("schema", "docs read", "not read", "items", "to review", "max/doc", "docs to review"):
        per_schema.add_column(header, justify="left" if header == "schema" else "right", no_wrap=header == "schema")
    for row in summary["by_schema"]:
        per_schema.add_row(*(str(v) for v in row))
    console.print(per_schema)


def cmd_run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    console.print(f"inbox [bold]{settings.inbox}[/], warehouse [bold]{settings.warehouse}[/]")
    mode = "model + heuristic" if settings.model.has_model else "offline heuristic (no model endpoint set)"
    console.print(f"extractor: {mode}")
    ready = seconds_since_start()
    started = time.perf_counter()
    try:  # the summary is read while the pass still holds the file (open and warm), then the file is given back
        results = run_with_progress(settings, args, keep_held=True)
        summary = _read_summary(settings.warehouse)
    finally:
        give_back(settings.warehouse)
    passed = time.perf_counter() - started
    ok = print_steps(results)
    _print_summary_as(summary, args.json)
    start_up = f"; the process was ready {ready:.2f} s after it started" if ready is not None else ""
    console.print(f"pass done in {passed:.2f} s{start_up}")
    console.print(f"took {time.perf_counter() - started:.1f} s")
    if any(step.skipped == INTERRUPTED for step in results):
        console.print("[yellow]interrupted:[/] what was committed stays; run again to continue")
        return 130
    return 0 if ok else 1


def run_with_progress(
    settings: Settings, args: argparse.Namespace, instance: dg.DagsterInstance | None = None, keep_held: bool = False
) -> list[StepResult]:
    """`run_pipeline` with a progress line naming the step in progress (`keep_held`: see `run_pipeline`)."""
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        task = progress.add_task("starting", total=None)

        def on_step(name: str) -> None:
            progress.update(task, description=name, advance=1)

        results = run_pipeline(
            settings,
            schema_keys=args.schema or None,
            instance=instance,
            on_step=on_step,
            log_level="DEBUG" if args.verbose else "ERROR",  # warnings are the report's own lines
            keep_held=keep_held,
        )
        progress.update(task, total=len(results), completed=len(results), description="done")
    return results


def print_steps(results: list[StepResult]) -> bool:
    """One line per part of the run (ingest, each version), then each Dagster run's steps and their seconds once;
    whether every part ran and passed."""
    ok = True
    for number, step in enumerate(results):
        if step.skipped:
            console.print(f"[red]SKIPPED[/] {step.name} ({escape(step.skipped)})")
            ok = False
            continue
        passed = step.success and not step.failed_checks
        status = "[green]ok[/]" if passed else "[red]FAILED[/]"
        console.print(
            f"{status} {step.name}{_what(step.metadata)}"
            + (f" (failed checks: {', '.join(step.failed_checks)})" * bool(step.failed_checks))
        )
        unreadable: Any = step.metadata.get("raw_documents", {}).get("unreadable_lines", [])
        for line in unreadable:
            console.print(f"  [yellow]dead letter[/] {escape(str(line))}")
        if step.held:
            console.print(f"  [yellow]{step.held}[/]; the other versions went on")
        if line := _model_line(step.metadata.get("extracted_items", {})):
            console.print(f"  {line}")
        last_of_run = number + 1 == len(results) or results[number + 1].run_id != step.run_id
        if last_of_run and step.step_seconds:
            stages = ", ".join(f"{key} {seconds:.1f} s" for key, seconds in _run_seconds(results, step.run_id).items())
            console.print(f"run {str(step.run_id)[:8]} in {step.seconds:.1f} s: {stages}")
        ok = ok and passed
    return ok


def _run_seconds(results: list[StepResult], run_id: str | None) -> dict[str, float]:
    return {key: s for step in results if step.run_id == run_id for key, s in step.step_seconds.items()}


def _what(metadata: dict[str, dict[str, Any]]) -> str:
    """What a part changed, in a few words."""
    items, scrubbed = metadata.get("extracted_items"), metadata.get("scrubbed_documents")
    if scrubbed is not None:
        raw = metadata.get("raw_documents", {})
        return f": {raw.get('new_documents', 0)} new documents, {scrubbed.get('scrubbed_now', 0)} scrubbed"
    if items is None:
        return ""
    if items.get("run") == "nothing to do":
        return f": nothing new ({items.get('dagster/row_count', 0)} items)"
    queue = metadata.get("review_queue", {}).get("dagster/row_count")
    return (
        f": {items.get('documents_processed', 0)} documents extracted, {items.get('items_stored', 0)} items stored"
        + (f", {queue} to review" if queue is not None else "")
    )


def _model_line(figures: dict[str, Any]) -> str | None:
    """What one extraction step spent on the model and left pending, for a run that called or deferred it."""
    calls, pending = figures.get("model_calls", 0), figures.get("documents_pending", 0)
    if not (calls or pending or figures.get("cache_hits", 0)):
        return None
    cost = figures.get("estimated_cost")
    line = (
        f"model: {calls} calls, {figures.get('cache_hits', 0)} cached "
        f"({figures.get('remembered_failures', 0)} remembered failures), "
        f"{figures.get('prompt_tokens', 0)} prompt + {figures.get('completion_tokens', 0)} completion tokens"
        + (f", estimated cost {cost:.4f}" if isinstance(cost, float) else "")
    )
    outcomes = figures.get("outcomes") or {}
    late = outcomes.get("pending_deadline", 0) + outcomes.get("pending_endpoint_stuck", 0)
    why = f" ({late} because the endpoint ran out of EXTRACTION_LLM_TIMEOUT)" if late else ""
    return line + (f"; {pending} documents pending{why}, the next run continues" if pending else "")


def _read_summary(warehouse: Path) -> dict[str, Any]:
    """The warehouse's summary: on a cursor of the file where this process holds it, else a connection of its own."""
    with open_warehouse(warehouse, read_only=warehouse.exists(), wait_seconds=READER_WAIT_S) as con:
        return warehouse_summary(con)


def _print_summary_as(summary: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(summary, default=str, indent=2))
    else:
        _print_summary(summary)


def cmd_summary(args: argparse.Namespace) -> int:
    _print_summary_as(_read_summary(settings_from_args(args).warehouse), args.json)
    return 0
