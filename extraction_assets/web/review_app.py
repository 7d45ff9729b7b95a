"""The review server: one tenant's review page (queue, item with its source text and evidence, history) and the
interview API (`interview_api.py`).

A Starlette app over the same functions as the command line (`lib/review/corrections.py`,
`lib/review/queries.py`), so the rules, the tenant scope and the audit are the same. Every request is
authenticated (`lib/review/auth.py`): the page by HTTP Basic (the reviewer's name and token) or a bearer
token, the API by a bearer token only, so a browser's remembered password cannot drive it from another site.
The reviewer recorded in the audit log is the authenticated one, never a form field. Every document string goes
through Jinja2 autoescaping; the page runs no script at all and says so in its Content-Security-Policy; forms
carry a per-server token, and only local host names are served. Text is shown scrubbed; the original is shown
only after a reviewer asks for it (a POST that the audit log records), and that page is never cached.
"""

from __future__ import annotations

import json
import secrets
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
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates
from starlette.types import Receive, Scope, Send

from extraction_assets.lib.extraction import RULES, Extractor, ExtractorChoice
from extraction_assets.lib.review import (
    ANY_STATUS,
    Action,
    Authenticator,
    Change,
    ItemNotFound,
    corrections,
    item_detail,
    list_queue,
    provenance,
    queue_filters,
    reveal_item,
)
from extraction_assets.lib.schemas import discover_schemas
from extraction_assets.lib.warehouse import READER_WAIT_S, WarehouseBusy, WarehouseUnreadable, open_warehouse
from extraction_assets.web.interview_api import API_PREFIXES, error, interview_routes
from extraction_assets.web.limits import BoundedBody
from extraction_assets.web.openapi import openapi_document

TEMPLATES = Path(__file__).parent / "templates"
LOCAL_HOSTS = ("127.0.0.1", "localhost")
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
DONE = {"accept": "Accepted.", "reject": "Rejected.", "correct": "Correction saved."}
STATUSES = ("needs_review", "draft", "accepted", "rejected", ANY_STATUS)
PUBLIC_PATHS = ("/openapi.json",)


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


def _json_input(name: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise corrections.InvalidCorrection(f"{name} is not valid JSON: {exc.msg}") from exc


def change_from_form(action: Action, form: dict[str, str]) -> Change:
    """The form's request as a Change: accept and reject set the status; correct sends what was edited."""
    if action != "correct":
        return Change(status="accepted" if action == "accept" else "rejected")
    fields: dict[str, Any] = {"value": _json_input("value", form.get("value", ""))}
    if form.get("normalized_value", "").strip():
        fields["normalized_value"] = _json_input("normalized value", form["normalized_value"])
    if form.get("status"):
        fields["status"] = form["status"]
    return Change(**fields)


def create_review_app(
    warehouse: Path,
    tenant_id: str,
    prompts_dir: Path,
    auth: Authenticator,
    extractor: Extractor | None = None,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
) -> Starlette:
    """The page and the API for one tenant; nothing of another tenant can be read or changed through them.

    `extractor` runs the API's re-extractions (default: the offline heuristic).
    """
    schemas = discover_schemas(prompts_dir)[0]
    token = secrets.token_urlsafe(32)
    templates = Jinja2Templates(env=Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True))
    templates.env.filters["pretty"] = _pretty
    templates.env.filters["compact"] = _compact
    templates.env.globals["provenance"] = provenance

    def base(request: Request) -> dict[str, Any]:
        return {"tenant": tenant_id, "reviewer": request.state.principal.name, "token": token}

    def read(fn: Callable[[duckdb.DuckDBPyConnection], Any]) -> Any:
        with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
            return fn(con)

    async def queue(request: Request) -> Response:
        filters = {k: request.query_params.get(k) or None for k in ("schema", "type", "reason")}
        status = request.query_params.get("status") or "needs_review"

        def load(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
            rows = list_queue(con, tenant_id, filters["schema"], filters["type"], filters["reason"], status)
            versions, types = queue_filters(con, tenant_id)
            return {"rows": rows, "versions": versions, "types": types}

        context = await run_in_threadpool(read, load)
        return templates.TemplateResponse(
            request,
            "queue.html",
            {**base(request), **context, "filters": filters, "status": status, "statuses": STATUSES, "rules": RULES},
        )

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
            return templates.TemplateResponse(request, "not_found.html", {**base(request), "message": str(exc)}, 404)
        done = DONE.get(request.query_params.get("done", ""))
        response = templates.TemplateResponse(
            request,
            "item.html",
            {**base(request), **context, "error": error, "done": done, "form": form or {}, "statuses": STATUSES[:-1]},
            status_code,
        )
        if reveal_to:
            response.headers["Cache-Control"] = "no-store"
        return response

    async def item(request: Request) -> Response:
        return await run_in_threadpool(render_item, request, request.path_params["item_id"])

    def make_change(action: Action) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            item_ref = request.path_params["item_id"]
            form = {k: str(v) for k, v in (await request.form()).items()}
            if not secrets.compare_digest(form.get("token", ""), token):
                return Response("stale or missing form token: reload the page", status_code=403)

            def apply() -> Response:
                try:
                    change = change_from_form(action, form)
                    with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
                        done = corrections.apply_change(
                            con,
                            tenant_id,
                            item_ref,
                            change,
                            request.state.principal.name,  # who signed in, whatever the form says
                            action,
                            form.get("note") or None,
                            schemas,
                        )
                except ItemNotFound as exc:
                    return render_item(request, item_ref, str(exc), 404)
                except ValueError as exc:  # a ReviewError, or a status the form does not offer
                    return render_item(request, item_ref, str(exc), 422, form)
                return RedirectResponse(f"/items/{done.item_id}?done={action}#history", status_code=303)

            return await run_in_threadpool(apply)

        return endpoint

    async def reveal(request: Request) -> Response:
        item_ref = request.path_params["item_id"]
        form = {k: str(v) for k, v in (await request.form()).items()}
        if not secrets.compare_digest(form.get("token", ""), token):
            return Response("stale or missing form token: reload the page", status_code=403)

        reveal_to = (request.state.principal.name, form.get("note") or None)
        return await run_in_threadpool(lambda: render_item(request, item_ref, reveal_to=reveal_to))

    description = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(description)

    routes = [
        Route("/openapi.json", openapi),
        *interview_routes(warehouse, tenant_id, schemas, extractor or ExtractorChoice().build()),
        Route("/", queue),
        Route("/items/{item_id}/reveal", reveal, methods=["POST"]),
        Route("/items/{item_id}", item),
        *(Route(f"/items/{{item_id}}/{a}", make_change(a), methods=["POST"]) for a in ("accept", "reject", "correct")),
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
    proves nobody reaches the first app, which answers 401 (or serves `/openapi.json`)."""

    def __init__(self, apps: Mapping[str, Starlette], auth: Authenticator) -> None:
        self.apps = dict(apps)
        self.auth = auth
        self.first = next(iter(self.apps.values()))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        app = self.first
        if scope["type"] == "http":
            header = dict(scope.get("headers") or []).get(b"authorization")
            principal = self.auth.from_header(header.decode("latin-1")) if header else None
            app = self.apps.get(principal.tenant, self.first) if principal else self.first
        await app(scope, receive, send)


def create_server_app(
    warehouse: Path,
    tenants: Sequence[str],
    prompts_dir: Path,
    auth: Authenticator,
    extractor: Extractor | None = None,
    allowed_hosts: Sequence[str] = LOCAL_HOSTS,
) -> Starlette | TenantDispatch:
    """The review page and the interview API for `tenants`: one tenant's app, or a dispatch over several."""
    apps = {t: create_review_app(warehouse, t, prompts_dir, auth, extractor, allowed_hosts) for t in tenants}
    return apps[tenants[0]] if len(apps) == 1 else TenantDispatch(apps, auth)
