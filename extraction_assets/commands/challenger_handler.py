"""What `extraction-assets challenger` does (the parser is `challenger.py`)."""

from __future__ import annotations

import argparse
import json

from rich.markdown import Markdown
from rich.text import Text

from extraction_assets.commands.common import console, settings_from_args
from extraction_assets.lib.review import cli_actor, load_auth
from extraction_assets.lib.review.corrections import ReviewError

EXIT_OK, EXIT_FAILED, EXIT_INVALID = 0, 1, 2


def _promote(args: argparse.Namespace) -> dict[str, object]:
    """The audited promotion, then the queues of the versions whose role moved rebuilt."""
    from extraction_assets.lib.prompt_files import discover_schemas
    from extraction_assets.lib.review.challengers import promote
    from extraction_assets.lib.warehouse import open_warehouse, rebuild_review_queue

    settings = settings_from_args(args)
    actor, entered_by = cli_actor(args.by, load_auth())
    note = "; ".join(n for n in (args.note, entered_by) if n) or None
    schemas = list(discover_schemas(settings.prompts_dir)[0].values())
    with open_warehouse(settings.warehouse) as con:
        done = promote(con, schemas, args.version, actor, note)
        for version in (done.promoted, *done.superseded):
            rebuild_review_queue(con, version)
    return done.model_dump()


def cmd_challenger(args: argparse.Namespace) -> int:
    from extraction_assets.runner import run_challenger  # Dagster loads with the command

    settings = settings_from_args(args)
    promoted = None
    try:
        if args.promote:
            promoted = _promote(args)
    except ReviewError as exc:
        console.print(Text(f"error: {exc}", style="red"))
        return EXIT_INVALID
    with console.status(f"{args.version}: extracting, scoring and comparing" if not promoted else "recording"):
        run = run_challenger(settings, None if promoted else args.version, args.limit)
    if args.json:
        print(
            json.dumps(
                {"promoted": promoted, "success": run.success, "run_id": run.run_id, **run.metadata}, default=str
            )
        )
    else:
        if promoted:
            console.print(
                Text(
                    f"{promoted['promoted']} is now current ({', '.join(promoted['superseded']) or 'nothing'} "  # type: ignore[arg-type]
                    f"superseded), by {promoted['promoted_by']}: audit #{promoted['audit_seq']}"
                )
            )
        for key, value in run.metadata.items():
            if key.endswith("/comparison"):
                console.print(Text(key, style="bold"))
                console.print(Markdown(str(value)))
            elif key in ("roles", "promotions"):
                console.print(Text(f"{key}: {json.dumps(value, default=str)}"))
            else:
                console.print(Text(f"{key}: {value}"))
        console.print(Text(f"Dagster run {run.run_id}: the UI shows it on challenger_comparison", style="dim"))
    if not run.success:
        console.print(Text(f"failed steps: {', '.join(run.failed)}", style="red"))
    return EXIT_OK if run.success else EXIT_FAILED
