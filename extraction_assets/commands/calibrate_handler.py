"""What `extraction-assets calibrate` does (the parser is `calibrate.py`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table

from extraction_assets.commands.common import console, settings_from_args
from extraction_assets.lib.calibration import VersionCalibration, calibration_path
from extraction_assets.lib.evaluation import DEFAULT_REGISTRY, load_registry
from extraction_assets.lib.evaluation.calibrate import calibrate_version, same_fit, write_calibration
from extraction_assets.lib.prompt_files import load_schema

EXIT_DIFFERS = 1
VARIANTS = (
    ("today", "today (no calibration)"),
    ("in_sample", "in sample"),
    ("cross_validated", "cross-validated"),
    ("transferred", "fitted on the other files"),
)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def figures_table(calibration: VersionCalibration) -> Table:
    """The four figures per file, today's beside the calibration's in sample, cross-validated and fitted on the other
    files alone."""
    table = Table(
        title=f"{calibration.schema_version}: threshold {_pct(calibration.threshold)} "
        f"({calibration.review.describe() if calibration.review else 'no review cost'})"
    )
    for header in ("figures", "file", "items", "wrong", "error capture", "queue share", "precision unqueued", "ECE"):
        table.add_column(header, justify="left" if header in ("figures", "file") else "right")
    for variant, label in VARIANTS:
        for file, found in calibration.figures.get(variant, {}).items():
            table.add_row(
                label,
                file,
                str(found["items"]),
                str(found["wrong"]),
                _pct(found["error_capture"]),
                _pct(found["queue_share"]),
                _pct(found["precision_unqueued"]),
                _pct(found["ece"]),
            )
    return table


def cmd_calibrate(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    registry = load_registry(Path(args.registry) if args.registry else DEFAULT_REGISTRY)
    code = 0
    report: dict[str, Any] = {}
    for key in args.schema:
        schema = load_schema(settings.prompts_dir, key)
        prompt_file = Path(schema.source_path)
        console.print(f"fitting [bold]{key}[/] on its labelled data")
        refit = calibrate_version(schema, registry, on_step=lambda step: console.print(f"  {step}"))
        report[key] = refit.model_dump(mode="json", exclude_none=True)
        if refit.status != "calibrated":
            console.print(f"[yellow]{key} is not calibrated:[/] {refit.reason}; it keeps today's confidence and review")
        else:
            console.print(figures_table(refit))
            for name, why in refit.not_calibrated.items():
                console.print(f"  field [bold]{name}[/] not calibrated: {why}")
        path = calibration_path(prompt_file)
        if args.check:
            stored = schema.calibration
            if stored is None or not same_fit(stored, refit):
                again = f"extraction-assets calibrate --schema {key}"
                console.print(f"[red]{path.name} differs from a refit[/] (run `{again}`)")
                code = EXIT_DIFFERS
            else:
                console.print(f"[green]{path.name} is what a refit gives[/]")
            continue
        written = write_calibration(prompt_file, refit)
        console.print(f"written to {written}")
    if args.json:
        out = Path(args.json)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return code
