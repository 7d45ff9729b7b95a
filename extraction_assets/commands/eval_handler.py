"""What `extraction-assets eval` does (the parser is `eval.py`): score a gold file, store and print the run."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich import box
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from extraction_assets.commands.common import console, settings_from_args
from extraction_assets.lib.evaluation import (
    DEFAULT_REGISTRY,
    EvalResult,
    WarehouseModelCache,
    field_rows,
    figure_rows,
    load_registry,
    render_html,
    run_eval,
    store_eval,
)
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.warehouse import open_warehouse

TERMINAL_HEADERS = ("gold", "pred", "P", "R", "F1", "F2")


def _print_result(result: EvalResult) -> None:
    table = Table(title=f"{result.dataset} on {result.schema_version} ({result.extractor})", box=box.SIMPLE_HEAD)
    table.add_column("field", no_wrap=True)
    for header in TERMINAL_HEADERS:  # short, so the table fits an 80-column terminal (comparators: JSON, HTML)
        table.add_column(header, justify="right", no_wrap=True)
    for field, _compare, *figures in field_rows(result):
        table.add_row(field, *figures)
    console.print(table)
    summary = Table(show_header=False)
    summary.add_column("figure")
    summary.add_column("value")
    for name, value in figure_rows(result):
        summary.add_row(name, value)
    console.print(summary)
    for note in result.notes:
        console.print(f"[yellow]note:[/] {note}")
    for message in result.messages:
        console.print(f"[red]message:[/] {message}", markup=True, highlight=False)


def cmd_eval(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    registry = load_registry(Path(args.registry) if args.registry else DEFAULT_REGISTRY)
    dataset = Path(args.dataset)
    entry = registry.entry(args.registry_entry) if args.registry_entry else registry.entry_for_file(dataset)
    key = args.schema or entry.schema_version
    schema = extractor = None
    if entry.mode != "entity_spans":
        from extraction_assets.lib.extraction import build_extractor  # the model client loads only when needed

        schema = load_schema(settings.prompts_dir, key)
        extractor = build_extractor(settings.model, batch=False)

    console.print(f"scoring [bold]{dataset}[/] as [bold]{entry.name}[/] ({entry.mode}) against [bold]{key}[/]")
    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as progress:
        task = progress.add_task(f"{entry.name} on {key}", total=None)
        result = run_eval(
            entry,
            dataset,
            schema,
            extractor,
            schema_key=key,
            limit=args.limit,
            samples=args.samples,
            on_progress=lambda done, total: progress.update(task, completed=done, total=total),
            cache=WarehouseModelCache(settings.warehouse),
        )
    report = None
    if args.html:
        report = Path(args.html)
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(render_html(result), encoding="utf-8")
    with open_warehouse(settings.warehouse) as con:
        run_id = store_eval(con, result, report_path=str(report) if report else None)
    _print_result(result)
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({**result.summary(), "run_id": run_id}, indent=2, ensure_ascii=False) + "\n")
        console.print(f"JSON written to {out}")
    if report:
        console.print(f"HTML report written to {report}")
    console.print(f"stored as run {run_id} in {settings.warehouse}")
    return 0
