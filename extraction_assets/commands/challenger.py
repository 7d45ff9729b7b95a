"""`extraction-assets challenger VERSION`: a challenger version from its prompt file to its comparison with the
current version (on the dev sets and on the reviewers' decisions) in one command; `--promote` makes it current, an
audited decision the Dagster UI shows. This module is the parser only; `challenger_handler.py` runs it."""

from __future__ import annotations

import argparse

from extraction_assets.commands.common import add_warehouse_option, lazy_handler


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "challenger", help="set a challenger schema version beside the current one; --promote makes it current"
    )
    parser.add_argument("version", help="the challenger, e.g. receipt@v2 (front matter `challenger: true`)")
    parser.add_argument("--limit", type=int, help="score only the first N records of each dev set")
    parser.add_argument("--promote", action="store_true", help="make it its schema's current version (audited)")
    parser.add_argument("--note", help="why, for the audit trail (with --promote)")
    parser.add_argument(
        "--by", help="record the promotion under this name (administrators only; default: the operating-system user)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON for scripts")
    parser.add_argument("--prompts", dest="prompts_dir", help="prompt files folder (default: EXTRACTION_PROMPTS)")
    add_warehouse_option(parser)
    parser.set_defaults(func=lazy_handler("extraction_assets.commands.challenger_handler:cmd_challenger"))
