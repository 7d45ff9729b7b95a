"""`extraction-assets calibrate`: fit a schema version's calibration on the registry's labelled data and write it
beside the prompt file, or check that the stored one is what a refit gives (`--check`). The parser only; the run is
`calibrate_handler.py`, imported when the command runs (it needs scikit-learn, the `calibrate` extra)."""

from __future__ import annotations

import argparse

from extraction_assets.commands.common import lazy_handler


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="fit a schema version's confidence calibration on labelled data (or --check it)"
    )
    parser.add_argument("--schema", required=True, action="append", help="schema version, e.g. receipt@v1 (repeatable)")
    parser.add_argument("--check", action="store_true", help="refit and compare with the stored file; write nothing")
    parser.add_argument("--registry", help="registry file (default: evals/registry.yaml)")
    parser.add_argument("--prompts", dest="prompts_dir", help="prompt files folder (default: EXTRACTION_PROMPTS)")
    parser.add_argument("--json", help="write every version's figures as JSON to this file")
    parser.set_defaults(func=lazy_handler("extraction_assets.commands.calibrate_handler:cmd_calibrate"))
