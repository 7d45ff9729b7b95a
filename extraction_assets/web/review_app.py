"""The review server: one tenant's review page (the queue in groups, a group, an item with its source text and
evidence, a document to add what the extractor missed, history) and the interview API (`interview_api.py`).

A Starlette app over the same functions as the command line (`lib/review/corrections.py`, `groups.py`,
`missed.py`, `queries.py`), so the rules, the tenant scope and the audit are the same. Every request is
authenticated (`lib/review/auth.py`): the page by HTTP Basic (the reviewer's name and token) or a bearer
token, the API by a bearer token only, so a browser's remembered password cannot drive it from another site.
The reviewer recorded in the audit log is the authenticated one, never a form field. Every document string goes
through Jinja2 autoescaping; the Content-Security-Policy allows no inline script and no script from elsewhere (one
small script of this server's own, on the document page, turns a text selection into the add form's span; the page
works without it); forms carry the signed-in reviewer's own token, and every decision names the version of each
item the reviewer saw (a stale one answers 409 and changes nothing). Only local host names are served. Text is shown
scrubbed; the original is shown only after a reviewer asks for it (a POST that the audit log records), and that page
is never cached.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
from jinja2 import Environment, FileSystemLoader
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates
from starlette.types import Receive, Scope, Send

from extraction_assets.lib.extraction import RULES, Extractor, build_extractor
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.review import (
    ANY_STATUS,
    Action,
    Authenticator,
    Change,
    ItemNotFound,
    StaleVersion,
    corrections,
    item_detail,
    list_queue,
    provenance,
    queue_filters,
    reveal_item,
)
from extraction_assets.lib.review.auth import FormTokens, Principal
from extraction_assets.lib.review.forms import FormField, form_fields, read_form, untouched_keys
from extraction_assets.lib.review.groups import group_detail, group_item_ids, list_groups, resolve_group_id
from extraction_assets.lib.review.queries import current_rules
from extraction_assets.lib.settings import ModelSettings
from extraction_assets.lib.warehouse import READER_WAIT_S, WarehouseBusy, WarehouseUnreadable, open_warehouse
from extraction_assets.lib.warehouse.review_queue import group_members
from extraction_assets.web.interview_api import API_PREFIXES, error, interview_routes
from extraction_assets.web.limits import BoundedBody
from extraction_assets.web.openapi import openapi_document

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; "
        "frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
DONE = {"accept": "Accepted.", "reject": "Rejected.", "correct": "Correction saved.", "add": "Item added."}
ACTIONS: tuple[Action, ...] = ("accept", "reject", "correct")
STATUSES = ("needs_review", "draft", "accepted", "rejected", ANY_STATUS)
DECIDED_STATUSES = ("accepted", "rejected", "needs_review")  # what a correction may leave an item as
PUBLIC_PATHS = ("/openapi.json",)
QUEUE_PAGE_GROUPS = 200  # groups the queue page shows at once, the most valuable decisions first
STATIC_FILES = {"select.js": "text/javascript"}


class Authenticate(BaseHTTPMiddleware):
    """Every request but the API's description names its principal, of this server's tenant only."""

    def __init__(self, app: Any, auth: Authenticator, tenant_id: str) -> None:
        super().__init__(app)
        self.auth = auth
        self.tenant_id = tenant_id

    async def dispatch(self, request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path in PUBLIC_PATHS:
            return await call_next(request)
        api = request.url.path.startswith(API_PREFIXES)
        header = request.headers.get("authorization", "")
        bearer_only = api and not header.lower().startswith("bearer ")
        principal = None if bearer_only else self.auth.from_header(header)
        if principal is None:
            if api:
                return error("a bearer token is required (Authorization: Bearer <token>)", 401, _challenge("Bearer"))
            realm = f'Basic realm="review {self.tenant_id}", charset="UTF-8"'
            return Response("sign in with your reviewer name and token", status_code=401, headers=_challenge(realm))
        if principal.tenant != self.tenant_id:
            message = f"this token is for another tenant; this server serves tenant {self.tenant_id!r}"
            return error(message, 403) if api else Response(message, status_code=403)
        request.state.principal = principal
        return await call_next(request)


def _challenge(scheme: str) -> dict[str, str]:
    return {"WWW-Authenticate": scheme}


async def _security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
    response = await call_next(request)
    response.headers.update(SECURITY_HEADERS)
    return response


async def _busy(request: Request, exc: Exception) -> Response:
    """A run kept the warehouse's lock past the page's wait: say so and when to try again, not a stack trace."""
    return Response(f"busy: {exc}", status_code=503, headers={"Retry-After": "5"}, media_type="text/plain")


async def _unreadable(request: Request, exc: Exception) -> Response:
    """The warehouse file cannot be read (damaged, not a DuckDB file): which file, and what to do."""
    return Response(f"error: {exc}", status_code=500, media_type="text/plain")


def _pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _pairs(values: list[str]) -> dict[str, str]:
    """`id:version` form values -> {id: version}."""
    pairs = {}
    for value in values:
        key, sep, version = value.partition(":")
        if not sep or not key or not version:
            raise corrections.InvalidCorrection(f"{value!r} does not name an item and its version")
        pairs[key] = version
    return pairs


def change_from_form(action: Action, form: Mapping[str, str], fields: list[FormField]) -> Change:
    """The form's request as a Change: accept and reject set the status; correct sends the typed inputs it holds
    (only those: the value's other keys are kept) and the status chosen."""
    if action != "correct":
        return Change(status="accepted" if action == "accept" else "rejected")
    asked: dict[str, Any] = {"value": read_form(fields, form)}
    if form.get("status"):
        asked["status"] = form["status"]
    return Change(**asked)


def create_review_app(
    warehouse: Path,
    tenant_id: str,
    prompts_dir: Path,
    auth: Authenticator,
    extractor: Extractor | None = None,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
    form_tokens: FormTokens | None = None,
) -> Starlette:
    """The page and the API for one tenant; nothing of another tenant can be read or changed through them.

    `extractor` runs the API's re-extractions (default: the offline heuristic).
    """
    schemas = discover_schemas(prompts_dir)[0]
    tokens = form_tokens or FormTokens()
    templates = Jinja2Templates(env=Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True))
    templates.env.filters["pretty"] = _pretty
    templates.env.filters["compact"] = _compact
    templates.env.globals["provenance"] = provenance
    templates.env.globals["current_rules"] = current_rules

    def principal(request: Request) -> Principal:
        return request.state.principal

    def base(request: Request) -> dict[str, Any]:
        who = principal(request)
        return {"tenant": tenant_id, "reviewer": who.name, "token": tokens.token_for(who)}

    def read(fn: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
            return fn(con)

    def spec_of(item: Mapping[str, Any]) -> Any:
        schema = schemas.get(item["schema_version"])
        return schema.field(item["item_type"]) if schema else None

    def correction_form(item: Mapping[str, Any]) -> dict[str, Any]:
        fields = form_fields(spec_of(item), item["value"])
        return {"fields": fields, "untouched": untouched_keys(fields, item["value"])}

    def page(request: Request, template: str, context: dict[str, Any], status_code: int = 200) -> Response:
        return templates.TemplateResponse(request, template, {**base(request), **context}, status_code)

    async def form_of(request: Request) -> tuple[dict[str, str], dict[str, list[str]]] | Response:
        """The posted form (single values, and the lists of repeated names), or 403 without this reviewer's token."""
        posted = await request.form()
        form = {k: str(v) for k, v in posted.items()}
        if not tokens.valid(principal(request), form.get("token", "")):
            return Response("stale or missing form token (it is each reviewer's own): reload the page", 403)
        return form, {k: [str(v) for v in posted.getlist(k)] for k in posted}

    async def queue(request: Request) -> Response:
        filters = {k: request.query_params.get(k) or None for k in ("schema", "type", "reason")}
        status = request.query_params.get("status") or "needs_review"
        return await run_in_threadpool(render_queue, request, filters, status)

    def render_queue(
        request: Request,
        filters: Mapping[str, str | None],
        status: str,
        error: str | None = None,
        status_code: int = 200,
    ) -> Response:
        def load(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            versions, types = queue_filters(con, tenant_id)
            if status == "needs_review":
                groups = list_groups(
                    con, tenant_id, filters["schema"], filters["type"], filters["reason"], QUEUE_PAGE_GROUPS
                )
                return {"groups": groups, "rows": [], "versions": versions, "types": types}
            rows = list_queue(con, tenant_id, filters["schema"], filters["type"], filters["reason"], status)
            return {"groups": [], "rows": rows, "versions": versions, "types": types}

        context = read(load)
        done = request.query_params.get("decided")
        return page(
            request,
            "queue.html",
            {
                **context,
                "filters": filters,
                "status": status,
                "statuses": STATUSES,
                "rules": RULES,
                "error": error,
                "done": done,
                "shown_limit": QUEUE_PAGE_GROUPS,
            },
            status_code,
        )

    def render_group(
        request: Request, group_ref: str, error: str | None = None, status_code: int = 200, form: dict | None = None
    ) -> Response:
        try:
            detail = read(lambda con: group_detail(con, tenant_id, group_ref))
        except ItemNotFound as exc:
            return page(request, "not_found.html", {"message": str(exc)}, 404)
        first = detail.members[0].item
        return page(
            request,
            "group.html",
            {
                "group": detail,
                **correction_form(first),
                "error": error,
                "form": form or {},
                "statuses": DECIDED_STATUSES,
            },
            status_code,
        )

    async def group(request: Request) -> Response:
        return await run_in_threadpool(render_group, request, request.path_params["group_id"])

    def render_item(
        request: Request,
        item_ref: str,
        error: str | None = None,
        status_code: int = 200,
        form: dict | None = None,
        reveal_to: tuple[str, str | None] | None = None,
    ) -> Response:
        """The item page, scrubbed; with `reveal_to` (reviewer, note) the original text, recorded in the audit log."""

        def load(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            if reveal_to:
                detail, audit = reveal_item(con, tenant_id, item_ref, *reveal_to)
            else:
                detail, audit = item_detail(con, tenant_id, item_ref), None
            history = corrections.history(con, tenant_id, detail.item["item_id"])
            return {"detail": detail, "audit": audit, "history": history}

        try:
            context = read(load)
        except ItemNotFound as exc:
            return page(request, "not_found.html", {"message": str(exc)}, 404)
        done = DONE.get(request.query_params.get("done", ""))
        response = page(
            request,
            "item.html",
            {
                **context,
                **correction_form(context["detail"].item),
                "error": error,
                "done": done,
                "form": form or {},
                "statuses": DECIDED_STATUSES,
            },
            status_code,
        )
        if reveal_to:
            response.headers["Cache-Control"] = "no-store"
        return response

    async def item(request: Request) -> Response:
        return await run_in_threadpool(render_item, request, request.path_params["item_id"])

    def decide(
        request: Request,
        action: Action,
        form: Mapping[str, str],
        items: Mapping[str, str],
        group_refs: Mapping[str, str],
        items_group: str | None = None,
    ) -> tuple[corrections.Decision | None, str | None, int]:
        """One decision on the items and groups chosen (each with the version the reviewer saw; `items_group`: the
        group the items were chosen from, named in their audit rows): the decision, or why not and the status."""
        try:
            with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
                versions, groups = dict(items), {}
                if items_group:
                    group_id = resolve_group_id(con, tenant_id, items_group)
                    strangers = set(items) - set(group_members(con, tenant_id, group_id))
                    if strangers:
                        raise StaleVersion(f"no longer in group {group_id}: {', '.join(sorted(strangers))}", [])
                    groups.update(dict.fromkeys(items, group_id))
                for ref, seen in group_refs.items():
                    group_id, members, current = group_item_ids(con, tenant_id, ref, seen)
                    versions.update(current)
                    groups.update(dict.fromkeys(members, group_id))
                refs = list(versions)
                first = corrections.load_item(con, tenant_id, refs[0]) if refs else None
                fields = form_fields(spec_of(first), first["value"]) if first else []
                decision = corrections.apply_changes(
                    con,
                    tenant_id,
                    refs,
                    change_from_form(action, form, fields),
                    principal(request).name,  # who signed in, whatever the form says
                    action,
                    form.get("note") or None,
                    schemas,
                    versions,
                    groups,
                )
        except StaleVersion as exc:
            return None, str(exc), 409
        except ItemNotFound as exc:
            return None, str(exc), 404
        except ValueError as exc:  # a ReviewError, or a status the form does not offer
            return None, str(exc), 422
        return decision, None, 200

    def make_change(action: Action) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            item_ref = request.path_params["item_id"]
            posted = await form_of(request)
            if isinstance(posted, Response):
                return posted
            form = posted[0]

            def apply() -> Response:
                if not form.get("version"):
                    return render_item(request, item_ref, "the form names no version of the item: reload the page", 428)
                try:
                    with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
                        item_id = corrections.resolve_item_id(con, tenant_id, item_ref)
                except ItemNotFound as exc:
                    return render_item(request, item_ref, str(exc), 404)
                decision, problem, code = decide(request, action, form, {item_id: form["version"]}, {})
                if decision is None:
                    return render_item(request, item_ref, problem, code, form)
                return RedirectResponse(f"/items/{item_id}?done={action}#history", status_code=303)

            return await run_in_threadpool(apply)

        return endpoint

    async def decide_many(request: Request) -> Response:
        """The queue's or a group's selection, decided at once: `group` values are `group:fingerprint`, `item`
        values `item:version`, `action` one of accept, reject, correct."""
        posted = await form_of(request)
        if isinstance(posted, Response):
            return posted
        form, lists = posted
        action = form.get("action", "")
        back = form.get("back_group")

        def answer() -> Response:
            def again(problem: str, code: int) -> Response:
                if back:
                    return render_group(request, back, problem, code, form)
                return render_queue(request, dict.fromkeys(("schema", "type", "reason")), "needs_review", problem, code)

            if action not in ACTIONS:
                return again(f"unknown decision {action!r}", 422)
            try:
                items, groups = _pairs(lists.get("item", [])), _pairs(lists.get("group", []))
            except ValueError as exc:
                return again(str(exc), 422)
            if not items and not groups:
                return again("select the items or groups to decide first", 422)
            decision, problem, code = decide(request, action, form, items, groups, back)
            if decision is None:
                return again(problem or "", code)
            said = f"{DONE[action][:-1]}: {len(decision.results)} item{'s' * (len(decision.results) != 1)}"
            if decision.unchanged:
                said += f", {len(decision.unchanged)} already so"
            return RedirectResponse(f"/?decided={said}", status_code=303)

        return await run_in_threadpool(answer)

    async def reveal(request: Request) -> Response:
        posted = await form_of(request)
        if isinstance(posted, Response):
            return posted
        reveal_to = (principal(request).name, posted[0].get("note") or None)
        return await run_in_threadpool(
            lambda: render_item(request, request.path_params["item_id"], reveal_to=reveal_to)
        )

    async def static(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in STATIC_FILES:
            return Response("not found", 404)
        return FileResponse(STATIC / name, media_type=STATIC_FILES[name])

    description = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(description)

    from extraction_assets.web.document_page import PageKit, document_routes  # the add form's page

    routes = [
        Route("/openapi.json", openapi),
        Route("/static/{name}", static),
        *interview_routes(warehouse, tenant_id, schemas, extractor or build_extractor(ModelSettings())),
        Route("/", queue),
        Route("/decide", decide_many, methods=["POST"]),
        Route("/groups/{group_id}", group),
        Route("/items/{item_id}/reveal", reveal, methods=["POST"]),
        Route("/items/{item_id}", item),
        *(Route(f"/items/{{item_id}}/{a}", make_change(a), methods=["POST"]) for a in ACTIONS),
        *document_routes(warehouse, tenant_id, schemas, PageKit(page, form_of, principal, correction_form)),
    ]
    middleware = [
        Middleware(BoundedBody),
        Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts)),
        Middleware(BaseHTTPMiddleware, dispatch=_security_headers),
        Middleware(Authenticate, auth=auth, tenant_id=tenant_id),
    ]
    handlers = {WarehouseBusy: _busy, WarehouseUnreadable: _unreadable}
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)


class TenantDispatch:
    """One server for several tenants: each request goes to the app of the tenant its credentials belong to, so a
    reviewer sees their own tenant only (each app still refuses another tenant's principal, 403). A request that
    proves nobody reaches the first app, which answers 401 (or serves `/openapi.json`). A reviewer of a tenant the
    server did not serve yet (added to the reviewers' file while it runs) gets that tenant's app, made then."""

    def __init__(
        self, apps: Mapping[str, Starlette], auth: Authenticator, make: Callable[[str], Starlette] | None = None
    ) -> None:
        self.apps = dict(apps)
        self.auth = auth
        self.make = make
        self.first = next(iter(self.apps.values()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.first
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"authorization")
            principal = self.auth.from_header(header.decode("latin-1")) if header else None
            if principal is not None and principal.tenant not in self.apps and self.make is not None:
                self.apps[principal.tenant] = self.make(principal.tenant)
            app = self.apps.get(principal.tenant, self.first) if principal else self.first
        await app(scope, receive, send)


def create_server_app(
    warehouse: Path,
    tenants: Sequence[str],
    prompts_dir: Path,
    auth: Authenticator,
    extractor: Extractor | None = None,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
    any_tenant: bool = False,
) -> Starlette | TenantDispatch:
    """The review page and the interview API for `tenants`: one tenant's app, or a dispatch over several (with
    `any_tenant`, also over tenants whose first reviewer is added while the server runs)."""
    form_tokens = FormTokens()

    def make(tenant: str) -> Starlette:
        return create_review_app(warehouse, tenant, prompts_dir, auth, extractor, allowed_hosts, form_tokens)

    apps = {t: make(t) for t in tenants}
    if len(apps) == 1 and not any_tenant:
        return apps[tenants[0]]
    return TenantDispatch(apps, auth, make if any_tenant else None)
