"""What `extraction-assets review ...` does (the parser is `review.py`): one tenant's queue, from a terminal."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from extraction_assets.commands.common import console, settings_from_args
from extraction_assets.commands.review import (
    EXIT_CHECK_FAILED,
    EXIT_IMPORT_FAILURES,
    EXIT_INVALID,
    EXIT_NEEDS_CONFIRMATION,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_STALE,
)
from extraction_assets.lib.review import (
    AUTH_ENV,
    REVEAL,
    AuditEntry,
    Authenticator,
    Change,
    ItemNotFound,
    NothingToChange,
    ReviewError,
    StaleVersion,
    cli_actor,
    corrections,
    export_tasks,
    hash_token,
    import_annotations,
    item_detail,
    label_config,
    list_queue,
    load_auth,
    new_token,
    preview_rerun,
    provenance,
    reveal_item,
)
from extraction_assets.lib.review.auth import add_reviewer, auth_path
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import READER_WAIT_S, open_warehouse, tenant_ids

if TYPE_CHECKING:
    import duckdb

HIGHLIGHT = "bold black on yellow"


def _emit(args: argparse.Namespace, payload: Any, render: Callable[[], None]) -> None:
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, indent=2, default=str))
    else:
        render()


def _who(args: argparse.Namespace) -> tuple[str, str | None]:
    """The operating-system user, or the name an administrator gives with --by; and the note to record."""
    actor, entered_by = cli_actor(args.by, load_auth())
    note = getattr(args, "note", None)
    return actor, "; ".join(n for n in (note, entered_by) if n) or None


def _json_arg(name: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ReviewError(f"{name} is not valid JSON ({exc.msg}): {raw[:80]!r}") from exc


def _schemas(settings: Settings) -> dict[str, Any]:
    from extraction_assets.lib.prompt_files import discover_schemas  # the prompt files (YAML) load only for changes

    return dict(discover_schemas(settings.prompts_dir)[0])


@contextmanager
def _warehouse(
    args: argparse.Namespace, settings: Settings, read_only: bool = True
) -> Iterator[duckdb.DuckDBPyConnection]:
    """The warehouse with the command's tenant checked on the same connection: one wait for a run's lock, not two.

    A tenant is an inbox folder the warehouse has read; a typo must not look like an empty queue. Commands that only
    read open the file read-only: they share it with a run's reads and take no write lock."""
    read_only = read_only and settings.warehouse.exists()
    with open_warehouse(settings.warehouse, read_only=read_only, wait_seconds=READER_WAIT_S) as con:
        if args.tenant not in tenant_ids(con):  # which tenants there are is not the reviewer's to learn
            raise ReviewError(f"unknown tenant {args.tenant!r} (a tenant is an inbox folder the pipeline has read)")
        yield con


def cmd_list(args: argparse.Namespace, settings: Settings) -> int:
    if args.reason:
        from extraction_assets.lib.extraction import RULES  # the extraction stack loads only to check a rule's name

        if args.reason not in RULES:
            raise ReviewError(f"unknown rule {args.reason!r}; the rules are {', '.join(RULES)}")
    if args.groups:
        return _list_groups(args, settings)
    with _warehouse(args, settings) as con:
        rows = list_queue(con, args.tenant, args.schema, args.type, args.reason, args.status, args.limit)

    def render() -> None:
        """Three short columns and one that wraps by words (type and title, then why and where), so a row reads
        on an 80-column terminal."""
        table = Table(title=f"{args.tenant}: {len(rows)} items ({args.status})", box=box.SIMPLE_HEAD)
        for column in ("item", "conf", "P(ok)", "status", "group"):
            table.add_column(column, no_wrap=True)
        table.add_column("type: title / why · source", ratio=1)
        for r in rows:
            what = Text(f"{r.item_type}: ", style="bold")
            what.append(r.title)
            what.append(f"\n{', '.join(r.rules) or '-'} · {r.source_uri}", style="dim")
            person = r.extracted_by == "human"
            probability = "-" if person or r.probability_correct is None else f"{r.probability_correct:.2f}"
            group = f"{r.group_id[:8]} x{r.group_size}" if r.group_size > 1 else ""
            confidence = "person" if person else f"{r.confidence:.2f}"
            table.add_row(r.item_id[:8], confidence, probability, r.status, group, what)
        console.print(table)

    _emit(args, [r.model_dump() for r in rows], render)
    return EXIT_OK


def _list_groups(args: argparse.Namespace, settings: Settings) -> int:
    """The queue as groups of near-duplicates, the most valuable decision first."""
    from extraction_assets.lib.review.groups import list_groups

    if args.status != "needs_review":
        raise ReviewError("--groups lists the queue (status needs_review) only")
    with _warehouse(args, settings) as con:
        groups = list_groups(con, args.tenant, args.schema, args.type, args.reason, args.limit)

    def render() -> None:
        table = Table(title=f"{args.tenant}: {len(groups)} groups in the queue", box=box.SIMPLE_HEAD)
        for column in ("group", "items", "expected errors"):
            table.add_column(column, no_wrap=True)
        table.add_column("type: title / why · documents", ratio=1)
        for g in groups:
            what = Text(f"{g.item_type}: ", style="bold")
            what.append(g.title)
            what.append(f"\n{', '.join(g.rules) or '-'} · {g.documents} documents queued", style="dim")
            table.add_row(g.group_id[:8], f"{g.size} ({g.queued} queued)", f"{g.priority:.2f}", what)
        console.print(table)
        console.print(Text("decide a whole group: review accept|reject|correct --group GROUP --tenant T", style="dim"))

    _emit(args, [g.model_dump() for g in groups], render)
    return EXIT_OK


def cmd_show(args: argparse.Namespace, settings: Settings) -> int:
    """The item with scrubbed text and evidence; `--reveal` shows the original text and records who saw it."""
    audit: AuditEntry | None = None
    with _warehouse(args, settings, read_only=not args.reveal) as con:
        if args.reveal:
            detail, audit = reveal_item(con, args.tenant, args.item, *_who(args), context_chars=args.context)
        else:
            detail = item_detail(con, args.tenant, args.item, context_chars=args.context)

    def render() -> None:
        item = detail.item
        facts = Table.grid(padding=(0, 2))
        for label, value in (
            ("item", item["item_id"]),
            ("schema / type", f"{item['schema_version']} / {item['item_type']}"),
            ("status", f"{item['status']} ({provenance(item)})"),
            ("value", json.dumps(item["value"], ensure_ascii=False)),
            ("normalized", json.dumps(item["normalized_value"], ensure_ascii=False)),
            ("reasons", "\n".join(item["review_reasons"]) or "-"),
            ("source", f"{detail.source_uri} ({detail.kind})"),
        ):
            facts.add_row(Text(label, style="bold"), Text(str(value)))
        console.print(Panel(facts, title=Text(item["title"]), title_align="left"))
        for number, ev in enumerate(detail.evidence, start=1):
            quote = Text("…" + ev.before, style="dim")
            quote.append(ev.quote, style=HIGHLIGHT)
            quote.append(ev.after + "…", style="dim")
            where = f"evidence {number}: chars {ev.char_start}-{ev.char_end}, {ev.match_kind}/{ev.strength}"
            console.print(
                Panel(quote, title=where + (f", turn {ev.turn_id}" if ev.turn_id else ""), title_align="left")
            )
        if not detail.evidence:
            console.print("no evidence: a required field whose value was not found")
        if audit:
            console.print(Text(f"original text shown to {audit.actor}: recorded as audit #{audit.seq}", style="yellow"))
        else:
            console.print(Text("personal data masked; --reveal shows the original text (recorded in the audit log)"))

    payload = {**detail.model_dump(exclude={"segments"}), "audit_seq": audit.seq if audit else None}
    _emit(args, payload, render)
    return EXIT_OK


def _change(args: argparse.Namespace) -> tuple[Change, corrections.Action]:
    if args.action == "accept":
        return Change(status="accepted"), "accept"
    if args.action == "reject":
        return Change(status="rejected"), "reject"
    fields: dict[str, Any] = {}
    if args.value is not None:
        fields["value"] = _json_arg("--value", args.value)
    if args.normalized_value is not None:
        fields["normalized_value"] = _json_arg("--normalized-value", args.normalized_value)
    if args.status:
        fields["status"] = args.status
    if args.replace:
        fields["replace"] = True
    return Change(**fields), "correct"


def cmd_change(args: argparse.Namespace, settings: Settings) -> int:
    """One decision on the items named, or on a whole group: one transaction, one audit row per item."""
    from extraction_assets.lib.review.groups import group_item_ids

    change, action = _change(args)
    if bool(args.items) == bool(args.group):
        raise ReviewError("name the items to decide, or one --group (not both)")
    if args.expected_version and (args.group or len(args.items) != 1):
        raise ReviewError("--version goes with one item")
    actor, note = _who(args)
    schemas = _schemas(settings)  # read before the write lock is taken
    with _warehouse(args, settings, read_only=False) as con:
        refs, versions, groups = list(args.items), None, None
        if args.group:
            group_id, refs, versions = group_item_ids(con, args.tenant, args.group)
            groups = dict.fromkeys(refs, group_id)
        elif args.expected_version:
            versions = {corrections.resolve_item_id(con, args.tenant, refs[0]): args.expected_version}
        try:
            decision = corrections.apply_changes(
                con, args.tenant, refs, change, actor, action, note, schemas, versions, groups
            )
        except NothingToChange as exc:
            reason = str(exc)
            _emit(args, {"changed": False, "reason": reason}, lambda: console.print(Text(f"nothing changed: {reason}")))
            return EXIT_OK

    def render() -> None:
        for result in decision.results:
            console.print(
                Text(f"{action}: {result.item_id} is now {result.after['status']}, by {result.after['updated_by']} "),
                Text(f"(audit #{result.audit.seq})", style="dim"),
            )
        if decision.decision_id:
            what = f"group {decision.group_id}" if decision.group_id else f"{len(refs)} items"
            console.print(
                Text(f"one decision on {what}: {len(decision.results)} changed, {len(decision.unchanged)} already so "),
                Text(f"(decision {decision.decision_id})", style="dim"),
            )

    if len(decision.results) == 1 and not decision.decision_id:  # one item: the shape scripts already read
        payload: dict[str, Any] = {"changed": True, **decision.results[0].model_dump()}
    else:
        payload = {"changed": True, **decision.model_dump()}
    _emit(args, payload, render)
    return EXIT_OK


def _history_table(entries: list[AuditEntry]) -> Table:
    reveals = sum(e.action == REVEAL for e in entries)  # a view of the original text changes nothing
    table = Table(title=f"{len(entries) - reveals} changes, {reveals} reveals")
    for column in ("#", "when (UTC)", "who", "action", "change", "note"):
        table.add_column(column, overflow="fold")
    for e in entries:
        change = "\n".join(
            f"{field}: {json.dumps(old, ensure_ascii=False)} -> {json.dumps(new, ensure_ascii=False)}"
            for field, (old, new) in e.changes().items()
        )
        table.add_row(
            str(e.seq),
            e.occurred_at.isoformat(" ", "seconds"),
            Text(e.actor),
            e.action,
            Text(change),
            Text(e.note or ""),
        )
    return table


def cmd_history(args: argparse.Namespace, settings: Settings) -> int:
    with _warehouse(args, settings) as con:
        entries = corrections.history(con, args.tenant, args.item)
    _emit(args, [e.model_dump() for e in entries], lambda: console.print(_history_table(entries)))
    return EXIT_OK


def cmd_rerun_preview(args: argparse.Namespace, settings: Settings) -> int:
    with _warehouse(args, settings) as con:
        preview = preview_rerun(con, args.schema, args.tenant)
    _emit(args, {**preview.model_dump(), "message": preview.message}, lambda: console.print(Text(preview.message)))
    return EXIT_OK


def cmd_rerun(args: argparse.Namespace, settings: Settings) -> int:
    """Re-extract a partition for the tenant; refuse (exit 3, nothing changed) when people's work is at stake."""
    from extraction_assets.runner import rerun_partition  # Dagster loads only for commands that run assets

    with _warehouse(args, settings) as con:
        preview = preview_rerun(con, args.schema, args.tenant)
    if preview.need_confirmation and not (args.confirm or args.keep_protected):
        hint = "nothing was changed; add --confirm to overwrite them, or --keep-protected to re-run and keep them"
        _emit(
            args,
            {"refused": True, **preview.model_dump(), "message": f"{preview.message}; {hint}"},
            lambda: console.print(Text(f"refused: {preview.message}\n{hint}", style="red")),
        )
        return EXIT_NEEDS_CONFIRMATION
    with console.status(f"re-extracting {args.schema} for {args.tenant}"):
        step = rerun_partition(settings, args.schema, tenant_id=args.tenant, confirm_overwrite=args.confirm)
    meta = step.metadata.get("extracted_items", {})
    payload = {"refused": False, "success": step.success, "failed_checks": step.failed_checks, "metadata": meta}

    def render() -> None:
        console.print(Text(preview.message))
        state = "[green]done[/]" if step.success and not step.failed_checks else "[red]FAILED[/]"
        console.print(
            f"{state}: {meta.get('documents_processed', 0)} documents re-extracted, "
            f"{meta.get('items_stored', 0)} items stored, {meta.get('kept_needing_confirmation', 0)} kept, "
            f"{meta.get('overwritten_with_confirmation', 0)} overwritten with confirmation"
        )

    _emit(args, payload, render)
    return EXIT_OK if step.success and not step.failed_checks else EXIT_INVALID


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    with _warehouse(args, settings) as con:
        tasks = export_tasks(con, args.tenant, args.schema, args.status)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(tasks, ensure_ascii=False, indent=1), encoding="utf-8")
    config = out.with_suffix(".label_config.xml")
    config.write_text(label_config(t["data"]["item_type"] for t in tasks), encoding="utf-8")
    payload = {"tasks": len(tasks), "out": str(out), "label_config": str(config)}
    _emit(args, payload, lambda: console.print(Text(f"{len(tasks)} tasks -> {out}; labeling interface -> {config}")))
    return EXIT_OK


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    try:
        tasks = json.loads(Path(args.file).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ReviewError(f"{args.file} is not a Label Studio JSON export: {exc}") from exc
    if not isinstance(tasks, list):
        raise ReviewError(f"{args.file} is not a Label Studio JSON export (a list of tasks)")
    actor, schemas = _who(args)[0], _schemas(settings)  # read before the write lock is taken
    with _warehouse(args, settings, read_only=False) as con:
        report = import_annotations(con, args.tenant, tasks, actor, schemas)

    def render() -> None:
        console.print(
            f"applied {len(report.applied)}, unchanged {len(report.unchanged)}, skipped {len(report.skipped)}, "
            f"failed {len(report.failed)}"
        )
        for what, why in [*report.failed, *report.skipped, *report.notices]:
            console.print(Text(f"  {what}: {why}"))

    _emit(args, report.model_dump(), render)
    return EXIT_IMPORT_FAILURES if report.failed else EXIT_OK


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    """One server: the review page and the interview API, for one tenant or for every tenant that has a reviewer
    (each reviewer sees their own tenant only). The reviewers' file is read again whenever it changes, so a reviewer
    added while the server runs signs in at once (of a new tenant too, when no --tenant was given)."""
    import uvicorn  # the web server loads for `serve` alone

    path = auth_path()
    authenticator = Authenticator.from_file(path) if path.exists() else Authenticator(load_auth())
    auth = authenticator.config
    if args.tenant:
        with _warehouse(args, settings):  # the tenant is known
            pass
    tenants = [args.tenant] if args.tenant else sorted({p.tenant for p in auth.principals})
    signers = {t: [p.name for p in auth.principals if p.tenant == t] for t in tenants}
    if not any(signers.values()):
        raise ReviewError(
            f"nobody can sign in{f' for tenant {args.tenant!r}' if args.tenant else ''}: set one up with "
            f"extraction-assets review add-reviewer --tenant {args.tenant or 'T'} --name NAME"
        )
    from extraction_assets.lib.extraction import build_extractor  # the interview API extracts: its stack loads here
    from extraction_assets.web.review_app import create_server_app

    extractor = build_extractor(settings.model)
    served = [t for t in tenants if signers[t]]
    app = create_server_app(
        settings.warehouse, served, settings.prompts_dir, authenticator, extractor, any_tenant=not args.tenant
    )
    console.print(f"review page and interview API: http://{args.host}:{args.port}/ (Ctrl-C stops it)")
    for tenant in served:
        console.print(f"  tenant [bold]{tenant}[/]: sign in as {', '.join(signers[tenant])}")
    if path.exists():
        console.print(Text(f"reviewers added to {path} while it runs sign in at once", style="dim"))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return EXIT_OK


def cmd_add_reviewer(args: argparse.Namespace, settings: Settings) -> int:
    """A reviewer set up in one step: a new token, its hash written into the reviewers' file; how to sign in."""
    with _warehouse(args, settings):  # the tenant is known
        pass
    path = auth_path()
    token = add_reviewer(path, args.name, args.tenant)

    def render() -> None:
        console.print(Text(f"{args.name} may review tenant {args.tenant} (written to {path}; only the token's hash)."))
        console.print(Text(f"token (shown once, keep it secret): {token}"))
        console.print(Text("start the server:  extraction-assets review serve  (a running one lets them in at once)"))
        console.print(Text(f"then open http://127.0.0.1:8765/ and sign in: user {args.name}, password the token"))

    _emit(args, {"name": args.name, "tenant": args.tenant, "token": token, "file": str(path)}, render)
    return EXIT_OK


def cmd_token(args: argparse.Namespace, settings: Settings) -> int:
    """A new token for a reviewer (or an API caller), shown once; only its hash goes into the configuration."""
    with _warehouse(args, settings):  # the tenant is known
        pass
    token = new_token()
    entry = {"name": args.name, "tenant": args.tenant, "token_sha256": hash_token(token)}
    line = "  - " + json.dumps(entry, ensure_ascii=False)  # JSON is YAML

    def render() -> None:
        console.print(Text(f"token for {args.name} in {args.tenant} (shown once, keep it secret): {token}"))
        console.print(Text(f"add this line under `principals:` in ${AUTH_ENV}:\n{line}"))

    _emit(args, {**entry, "token": token}, render)
    return EXIT_OK


def cmd_audit(args: argparse.Namespace, settings: Settings) -> int:
    """The audit log's check, as a run makes it (the chain, its signed heads, the items people own); `--accept` signs
    the log as it stands where its head file is missing or does not verify, and refuses a log that lost rows."""
    from extraction_assets.lib.stages import accept_audit_log, check_audit_log  # the stages load for this command

    connect = partial(open_warehouse, settings.warehouse, wait_seconds=READER_WAIT_S)
    checked = (accept_audit_log if args.accept else check_audit_log)(connect, settings.warehouse)
    report = checked.report

    def render() -> None:
        rows = f"{report.head.row_count} rows"
        if report.intact:
            console.print(Text(f"audit log intact: {rows}" + (", its head signed" if report.head.row_count else "")))
            return
        console.print(Text(f"audit log check failed ({rows}):", style="red"))
        for problem in report.problems:
            console.print(Text(f"  {problem}"))
        if args.accept:
            console.print(Text("nothing was accepted: the log fails more than a missing or unsigned head"))

    _emit(args, {"intact": report.intact, "rows": report.head.row_count, "problems": report.problems}, render)
    return EXIT_OK if report.intact else EXIT_CHECK_FAILED


def run(args: argparse.Namespace) -> int:
    """Run the sub-command named by `args.handler` and turn a refusal into its exit code and message."""
    settings = settings_from_args(args)
    try:
        return int(globals()[args.handler](args, settings))
    except ItemNotFound as exc:
        code, error = EXIT_NOT_FOUND, str(exc)
    except StaleVersion as exc:
        code, error = EXIT_STALE, str(exc)
    except ValueError as exc:  # a ReviewError or an invalid value for a field
        code, error = EXIT_INVALID, str(exc)
    if args.json:
        print(json.dumps({"error": error, "exit_code": code}, ensure_ascii=False))
    else:
        console.print(Text(f"error: {error}", style="red"))
    return code
