"""What every command shares: the console and settings from the environment plus command-line overrides."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from extraction_assets.lib.settings import Settings

console = Console()
EXIT_BUSY = 75  # EX_TEMPFAIL: try again later


def settings_from_args(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    overrides = {k: Path(v) for k in ("warehouse", "inbox", "prompts_dir") if (v := getattr(args, k, None))}
    return settings.model_copy(update=overrides)


def add_warehouse_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--warehouse", help="DuckDB file (default: EXTRACTION_WAREHOUSE or .data/warehouse.duckdb)")


def lazy_handler(target: str) -> Callable[[argparse.Namespace], int]:
    """The handler `module:function`, imported when its command runs: building the parser (and `--help`, and an
    argument error) loads nothing of the pipeline (Dagster, DuckDB, the extractors, the model client)."""
    module_name, _, function = target.partition(":")

    def handler(args: argparse.Namespace) -> int:
        from extraction_assets.lib.warehouse import WarehouseBusy

        try:
            return int(getattr(importlib.import_module(module_name), function)(args))
        except WarehouseBusy as exc:  # a run kept the lock past the wait: say so, no traceback
            console.print(f"[yellow]busy:[/] {exc}")
            return EXIT_BUSY

    return handler
