"""The document page of the review server: a document as reviewers read it (scrubbed), one schema version's items
highlighted in it, and the form that adds an item the extractor missed.

The reviewer selects the evidence in the text; `static/select.js` (the only script the server sends, from its own
origin) copies the selection's span and text into the form. Without the script the reviewer types the quote as it
reads, and the grounding code finds it. Either way `review.missed.add_missed_item` stores it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from extraction_assets.lib.review import ItemNotFound
from extraction_assets.lib.review.auth import Principal
from extraction_assets.lib.review.forms import form_fields, read_form
from extraction_assets.lib.review.queries import document_detail
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.warehouse import READER_WAIT_S, open_warehouse

Posted = tuple[dict[str, str], dict[str, list[str]]]


@dataclass(frozen=True)
class PageKit:
    """What the review app's pages share: drawing a template, reading a form with the reviewer's token, who is
    signed in, an item's correction form."""

    page: Callable[[Request, str, dict[str, Any], int], Response]
    form_of: Callable[[Request], Awaitable[Posted | Response]]
    principal: Callable[[Request], Principal]
    correction_form: Callable[[Mapping[str, Any]], dict[str, Any]]


def _span(form: Mapping[str, str]) -> tuple[int, int] | None:
    try:
        return int(form["span_start"]), int(form["span_end"])
    except (KeyError, ValueError):  # no selection sent (no script): the typed quote decides
        return None


def document_routes(warehouse: Path, tenant_id: str, schemas: Mapping[str, SchemaVersion], kit: PageKit) -> list[Route]:
    def render(
        request: Request,
        doc_id: str,
        schema_key: str | None,
        item_type: str | None,
        error: str | None = None,
        status_code: int = 200,
        form: Mapping[str, str] | None = None,
    ) -> Response:
        try:
            with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
                detail = document_detail(con, tenant_id, doc_id, schema_key)
        except ItemNotFound as exc:
            return kit.page(request, "not_found.html", {"message": str(exc)}, 404)
        schema = schemas.get(detail.schema_version or "")
        spec = (schema.field(item_type or "") or schema.fields[0]) if schema else None
        context = {
            "document": detail,
            "schema": schema,
            "spec": spec,
            "fields": form_fields(spec, {}) if spec else [],
            "error": error,
            "form": form or {},
        }
        return kit.page(request, "document.html", context, status_code)

    async def document(request: Request) -> Response:
        query = request.query_params
        return await run_in_threadpool(
            render, request, request.path_params["doc_id"], query.get("schema"), query.get("type")
        )

    async def add(request: Request) -> Response:
        """Add the item the form describes: its schema version, type, evidence (a span, else the typed quote) and
        value; the person who signed in is its author."""
        from extraction_assets.lib.review.missed import add_missed_item  # the grounding code loads with its first use

        doc_id = request.path_params["doc_id"]
        posted = await kit.form_of(request)
        if isinstance(posted, Response):
            return posted
        form = posted[0]
        schema = schemas.get(form.get("schema", ""))
        item_type = form.get("item_type", "")

        def apply() -> Response:
            if schema is None or schema.field(item_type) is None:
                return render(request, doc_id, None, None, "choose a schema version and a field first", 422, form)
            try:
                value = read_form(form_fields(schema.field(item_type), {}), form)
                with open_warehouse(warehouse, wait_seconds=READER_WAIT_S) as con:
                    added = _add(con, value)
            except ItemNotFound as exc:
                return render(request, doc_id, schema.key, item_type, str(exc), 404, form)
            except ValueError as exc:
                return render(request, doc_id, schema.key, item_type, str(exc), 422, form)
            return RedirectResponse(f"/items/{added.item_id}?done=add#history", status_code=303)

        def _add(con: duckdb.DuckDBPyConnection, value: dict[str, Any]) -> Any:
            assert schema is not None
            return add_missed_item(
                con,
                tenant_id,
                doc_id,
                schema,
                item_type,
                value,
                kit.principal(request).name,
                span=_span(form),
                quote=form.get("quote"),
                note=form.get("note") or None,
            )

        return await run_in_threadpool(apply)

    return [
        Route("/documents/{doc_id}", document),
        Route("/documents/{doc_id}/items", add, methods=["POST"]),
    ]
