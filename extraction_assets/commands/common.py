"""What every command shares: the console and settings from the environment plus command-line overrides."""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderableType, RenderHook, RenderResult
from rich.segment import Segment
from rich.text import Text

from extraction_assets.lib.reporting import visible_controls
from extraction_assets.lib.settings import Settings


class _Console(Console):
    """A terminal wraps at its width; a pipe or a file gets whole lines (rich would cut them at 80 columns), unless
    `COLUMNS` says otherwise (read at each print, as rich reads it)."""

    @property
    def size(self) -> ConsoleDimensions:
        measured = Console.size.fget(self)  # type: ignore[attr-defined]
        if not self.is_terminal and "COLUMNS" not in os.environ:
            return ConsoleDimensions(1000, measured.height)
        return measured

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


class _Shown:
    """What it wraps, rendered with the control characters of its text made visible: a file name, a title or a
    reason comes from a file or a model, and an escape sequence in it would drive the terminal. The console's own
    styles are control segments of their own and go out as they are."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.inner, options):
            yield segment if segment.control else Segment(visible_controls(segment.text), segment.style)


class _ShowControls(RenderHook):
    def process_renderables(self, renderables: list[Any]) -> list[Any]:
        return [_Shown(r) for r in renderables]


console = _Console()
console.push_render_hook(_ShowControls())
EXIT_BUSY = 75  # EX_TEMPFAIL: try again later
EXIT_UNREADABLE = 74  # EX_IOERR: the warehouse file cannot be read


def seconds_since_start() -> float | None:
    """How long this process has existed (Linux: from the kernel's start time of the process), None elsewhere: what
    starting the interpreter and loading a command costs, reported apart from the command's own work."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))


def settings_from_args(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    overrides = {k: Path(v) for k in ("warehouse", "inbox", "prompts_dir") if (v := getattr(args, k, None))}
    return settings.model_copy(update=overrides)


def add_warehouse_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--warehouse", help="DuckDB file (default: EXTRACTION_WAREHOUSE or .data/warehouse.duckdb)")


@contextmanager
def imported_for_good() -> Iterator[None]:
    """Code imported here stays loaded as long as the process: the cyclic garbage collector is paused while it
    loads (each full pass over the growing heap of Dagster's objects found next to nothing: about 0.3 s of a run's
    start) and never scans it afterwards (`gc.freeze`), so the run's own full collections stay short. What is
    garbage already is collected first (a small heap before the import), so nothing that waits to be freed (an
    unclosed connection of an earlier command in the same process) is frozen with it."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


def lazy_handler(target: str) -> Callable[[argparse.Namespace], int]:
    """The handler `module:function`, imported when its command runs: building the parser (and `--help`, and an
    argument error) loads nothing of the pipeline (Dagster, DuckDB, the extractors, the model client)."""
    module_name, _, function = target.partition(":")

    def handler(args: argparse.Namespace) -> int:
        # loaded when a command runs, not for --help
        from extraction_assets.lib.warehouse import WarehouseBusy, WarehouseUnreadable, damaged, unreadable

        with imported_for_good() if module_name not in sys.modules else nullcontext():
            command = getattr(importlib.import_module(module_name), function)
        try:
            return int(command(args))
        except WarehouseBusy as exc:  # a run kept the lock past the wait: say so, no traceback
            console.print(f"[yellow]busy:[/] {exc}")
            return EXIT_BUSY
        except Exception as exc:  # a damaged warehouse, found on opening it or by a query later: one line, no traceback
            if not isinstance(exc, WarehouseUnreadable) and not damaged(exc):
                raise
            said = exc if isinstance(exc, WarehouseUnreadable) else unreadable(settings_from_args(args).warehouse, exc)
            console.print(Text(f"error: {said}", style="red"))
            return EXIT_UNREADABLE

    return handler
