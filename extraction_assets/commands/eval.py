"""`extraction-assets eval`: score a gold JSONL file against a schema version, from a terminal.

The run uses the configured extractor (and its model cache), is stored in eval_runs/eval_metrics like
the Dagster asset's, and can write JSON for scripts and a self-contained HTML report for people. This module is
the parser only; the run is `eval_handler.py`, imported when the command runs.
"""

from __future__ import annotations

import argparse

from extraction_assets.commands.common import add_warehouse_option, lazy_handler


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("eval", help="score a gold JSONL file against a schema version")
    parser.add_argument("--dataset", required=True, help="JSONL of {id, text, gold} records")
    parser.add_argument("--schema", help="schema version to run, e.g. receipt@v1 (default: the registry entry's)")
    parser.add_argument("--registry-entry", help="registry entry to score as (default: the file's folder name)")
    parser.add_argument("--registry", help="registry file (default: evals/registry.yaml)")
    parser.add_argument("--limit", type=int, help="score only the first N records")
    parser.add_argument("--samples", type=int, default=5, help="documents shown in the HTML report (default 5)")
    parser.add_argument("--json", help="write the metrics as JSON to this file")
    parser.add_argument("--html", help="write the self-contained HTML report to this file")
    parser.add_argument("--prompts", dest="prompts_dir", help="prompt files folder (default: EXTRACTION_PROMPTS)")
    add_warehouse_option(parser)
    parser.set_defaults(func=lazy_handler("extraction_assets.commands.eval_handler:cmd_eval"))
