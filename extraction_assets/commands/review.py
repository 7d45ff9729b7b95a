"""`extraction-assets review ...`: work through one tenant's review queue from a terminal or a local page.

Every sub-command needs `--tenant` (but `serve` and `audit`) and prints JSON with `--json`. Exit codes: 0 done (or
nothing to change), 1 an import with failed tasks or a failed audit check, 2 invalid input, 3 a re-run that needs
`--confirm` (nothing was changed), 4 no such item in this tenant, 5 an item changed since the version the change was
made against (nothing was changed). This module is the parser only; what the sub-commands do is in
`review_handlers.py`, imported when one runs.
"""

from __future__ import annotations

import argparse

from extraction_assets.commands.common import add_warehouse_option, lazy_handler

EXIT_OK, EXIT_IMPORT_FAILURES, EXIT_INVALID, EXIT_NEEDS_CONFIRMATION, EXIT_NOT_FOUND, EXIT_STALE = 0, 1, 2, 3, 4, 5
EXIT_CHECK_FAILED = EXIT_IMPORT_FAILURES  # 1: what was asked for ran, and found something wrong
ANY_STATUS = "any"  # lib.review.ANY_STATUS, spelled here so that parsing imports no DuckDB
STATUS_CHOICES = ("needs_review", "draft", "accepted", "rejected", ANY_STATUS)
HANDLERS = "extraction_assets.commands.review_handlers"
BY_HELP = "record the change under this name (administrators only; default: the operating-system user)"


def register(subparsers: argparse._SubParsersAction) -> None:
    review = subparsers.add_parser("review", help="work through a tenant's review queue (list, show, accept, ...)")
    actions = review.add_subparsers(dest="action", required=True)

    def action(name: str, handler: str, help: str, tenant: bool = True) -> argparse.ArgumentParser:
        parser = actions.add_parser(name, help=help)
        if tenant:
            parser.add_argument("--tenant", required=True, help="the tenant (inbox folder) whose items you review")
        else:
            parser.add_argument("--tenant", help="only this tenant (default: every tenant that has a reviewer)")
        parser.add_argument("--json", action="store_true", help="print JSON for scripts")
        parser.add_argument("--prompts", dest="prompts_dir", help="prompt files folder (default: EXTRACTION_PROMPTS)")
        add_warehouse_option(parser)
        parser.set_defaults(func=lazy_handler(f"{HANDLERS}:run"), handler=handler)
        return parser

    def item_action(name: str, handler: str, help: str) -> argparse.ArgumentParser:
        parser = action(name, handler, help)
        parser.add_argument("item", help="item id, or a unique prefix of at least six characters")
        return parser

    def decision(name: str, help: str) -> argparse.ArgumentParser:
        parser = action(name, "cmd_change", help)
        parser.add_argument(
            "items", nargs="*", metavar="ITEM", help="item ids (or unique prefixes of six characters or more)"
        )
        parser.add_argument("--group", help="every undecided item of this queue group (`review list --groups`)")
        parser.add_argument(
            "--version",
            dest="expected_version",
            help="the item's version you looked at (`show`); refused with exit 5 if it changed since",
        )
        parser.add_argument("--by", help=BY_HELP)
        parser.add_argument("--note", help="why, for the audit trail")
        return parser

    listing = action("list", "cmd_list", "the queue, most urgent first")
    listing.add_argument("--schema", help="only this schema version, e.g. pulse@v1")
    listing.add_argument("--type", help="only this item type")
    listing.add_argument("--reason", help="only items sent to review by this rule, e.g. below_threshold")
    listing.add_argument("--status", choices=STATUS_CHOICES, default="needs_review", help="default: needs_review")
    listing.add_argument("--limit", type=int, default=200)
    listing.add_argument(
        "--groups", action="store_true", help="one line per group of near-duplicates (what one decision settles)"
    )
    show = item_action("show", "cmd_show", "an item with its evidence in context")
    show.add_argument("--context", type=int, default=240, help="characters of text shown around each quote")
    show.add_argument(
        "--reveal", action="store_true", help="show the original text, unmasked; recorded in the audit log"
    )
    show.add_argument("--by", help=BY_HELP)
    show.add_argument("--note", help="why, for the audit trail")
    decision("accept", "accept items (several ids, or a --group) in one decision")
    decision("reject", "reject items (several ids, or a --group) in one decision")
    correct = decision("correct", "change the value, normalized value or status of items in one decision")
    correct.add_argument("--value", help='the corrected value as JSON, e.g. \'{"owner_name": "Linh"}\'')
    correct.add_argument("--normalized-value", dest="normalized_value", help="the normalized value as JSON")
    correct.add_argument(
        "--status",
        choices=("accepted", "rejected", "needs_review"),
        help="the new status (a corrected value without one leaves the item accepted)",
    )
    correct.add_argument(
        "--replace",
        action="store_true",
        help="--value is the whole new value (by default it changes the fields it names)",
    )
    item_action("history", "cmd_history", "every change to an item: when, who, before and after")
    preview = action("rerun-preview", "cmd_rerun_preview", "what re-extracting a schema version would overwrite")
    preview.add_argument("--schema", required=True, help="the schema version, e.g. pulse@v1")
    rerun = action("rerun", "cmd_rerun", "re-extract a schema version for the tenant (refuses without --confirm)")
    rerun.add_argument("--schema", required=True, help="the schema version, e.g. pulse@v1")
    keep = rerun.add_mutually_exclusive_group()
    keep.add_argument("--confirm", action="store_true", help="also overwrite accepted, rejected and corrected items")
    keep.add_argument("--keep-protected", action="store_true", help="re-run, keeping people's items as they are")
    export = action("export", "cmd_export", "the queue as Label Studio tasks (+ labeling interface XML)")
    export.add_argument("--out", required=True, help="tasks JSON file to write")
    export.add_argument("--schema", help="only this schema version")
    export.add_argument("--status", choices=STATUS_CHOICES, default="needs_review", help="default: needs_review")
    imported = action("import", "cmd_import", "apply a Label Studio JSON export's annotations as corrections")
    imported.add_argument("file", help="the JSON export of the Label Studio project")
    imported.add_argument("--by", help=BY_HELP + "; the annotator is named in the note")
    serve = action("serve", "cmd_serve", "the review page and the interview API on http://127.0.0.1:PORT/", False)
    serve.add_argument("--host", default="127.0.0.1", choices=("127.0.0.1", "localhost"), help="local only")
    serve.add_argument("--port", type=int, default=8765)
    audit = action("audit", "cmd_audit", "check the audit log's chain and its signed heads (every tenant)", False)
    audit.add_argument(
        "--accept",
        action="store_true",
        help="sign the log as it stands where its head file is missing or unsigned (refused if rows were removed)",
    )
    reviewer = action(
        "add-reviewer", "cmd_add_reviewer", "set up a reviewer in one step: a token, written (hashed) for the server"
    )
    reviewer.add_argument("--name", required=True, help="the reviewer's name, recorded in the audit log")
    token = action("token", "cmd_token", "a new sign-in token for a reviewer or an API caller (only its hash is kept)")
    token.add_argument("--name", required=True, help="the reviewer's name, recorded in the audit log")
