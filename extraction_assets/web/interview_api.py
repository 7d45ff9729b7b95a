"""The interview API on the review server: a session's fields with their evidence, one field (with its version),
a correction against that version, a re-extraction under a schema version, a field's history; and, for the
interview runtime, a live session's field coverage (`session_state`). JSON only.

Every request carries a bearer token (`lib/review/auth.py`); its tenant is the only one it sees: a session or
field of another tenant is "not found", as on the review page. A correction goes through
`review.apply_change`, the command line's own path, so the same rules hold and the same audit row is written;
the actor is the token's name. A re-extraction that would overwrite accepted, rejected or corrected fields
answers 409 with the counts and changes nothing, unless it is confirmed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from extraction_assets.lib.review import (
    Action,
    Change,
    ItemNotFound,
    NothingToChange,
    Principal,
    StaleVersion,
    apply_change,
    history,
    item_detail,
    preview_rerun,
)
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.sessions import reextract_session
from extraction_assets.lib.warehouse import load_session, load_session_state, open_warehouse, session_item_ids
from extraction_assets.web.api_models import (
    ConfirmationNeeded,
    ConflictOut,
    ErrorOut,
    EvidenceOut,
    ExtractedFieldOut,
    FieldPatch,
    FieldStateOut,
    HistoryEntryOut,
    PatchOut,
    ReExtractIn,
    ReExtractOut,
    SessionFieldsOut,
    SessionStateOut,
)

API_PREFIXES = ("/sessions/", "/extracted-fields/")


def _json(model: BaseModel, status_code: int = 200) -> Response:
    return JSONResponse(model.model_dump(mode="json"), status_code=status_code)


def error(message: str, status_code: int, headers: Mapping[str, str] | None = None) -> Response:
    return JSONResponse(ErrorOut(error=message).model_dump(), status_code=status_code, headers=dict(headers or {}))


def _bare(value: Any) -> Any:
    """A single-value field's `{"value": x}` is shown as x."""
    return value["value"] if isinstance(value, dict) and set(value) == {"value"} else value


def field_out(detail: Any, session_id: str) -> ExtractedFieldOut:
    """An item as the API's ExtractedField, from `review.item_detail` (quotes scrubbed)."""
    item = detail.item
    return ExtractedFieldOut(
        id=item["item_id"],
        session_id=session_id,
        schema_field_id=item["item_type"],
        field_name=item["item_type"],
        value=_bare(item["value"]),
        normalized_value=item["normalized_value"],
        confidence=item["confidence"],
        probability_correct=item.get("probability_correct"),
        status=item["status"],
        extracted_by=item["extracted_by"],
        model=item["model"],
        schema_version_id=item["schema_version"],
        extractor_version=item["extractor_version"],
        reasoning_summary=item["reasoning_summary"],
        review_reasons=item["review_reasons"],
        updated_by=item["updated_by"],
        updated_at=item["updated_at"],
        version=detail.version,
        evidence=[
            EvidenceOut(
                id=ev.evidence_id,
                turn_id=ev.turn_id,
                quote=ev.quote,
                char_start=ev.char_start,
                char_end=ev.char_end,
                evidence_type=ev.evidence_type,
                strength=ev.strength,
                match_kind=ev.match_kind,
            )
            for ev in detail.evidence
        ],
    )


B = TypeVar("B", bound=BaseModel)


async def _body(request: Request, model: type[B]) -> B | Response:
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return error("send a JSON body (Content-Type: application/json)", 415)
    try:
        return model.model_validate(json.loads(await request.body() or b"{}"))
    except RecursionError:  # a body nested thousands of levels deep
        return error("invalid request body: JSON nested too deeply", 400)
    except (json.JSONDecodeError, ValidationError) as exc:
        return error(f"invalid request body: {exc}", 422)


def interview_routes(
    warehouse: Path, tenant_id: str, schemas: Mapping[str, SchemaVersion], extractor: Any
) -> list[Route]:
    """The API's routes for the server's tenant; `request.state.principal` is set by the server's authentication."""

    def session_fields(session_id: str, schema_version: str | None) -> Response:
        with open_warehouse(warehouse) as con:
            session = load_session(con, tenant_id, session_id)
            if session is None:
                return error(f"session {session_id!r} not found in tenant {tenant_id!r}", 404)
            version = schema_version or session["schema_version"]
            details = [
                item_detail(con, tenant_id, item_id, context_chars=0)
                for item_id in session_item_ids(con, tenant_id, session["doc_id"], version)
            ]
        return _json(
            SessionFieldsOut(
                session_id=session_id,
                tenant_id=tenant_id,
                status=session["status"],
                schema_version_id=version,
                fields=[field_out(d, session_id) for d in details],
            )
        )

    def session_state(session_id: str) -> Response:
        with open_warehouse(warehouse) as con:
            session = load_session(con, tenant_id, session_id)
            if session is None:
                return error(f"session {session_id!r} not found in tenant {tenant_id!r}", 404)
            states = load_session_state(con, tenant_id, session_id, session["schema_version"])
        return _json(
            SessionStateOut(
                session_id=session_id,
                tenant_id=tenant_id,
                status=session["status"],
                schema_version_id=session["schema_version"],
                objectives_covered=session["objectives_covered"],
                light_error=session["light_error"],
                fields=[FieldStateOut.model_validate(s) for s in states],
            )
        )

    def session_of(con: Any, item: dict[str, Any]) -> str:
        row = con.execute(
            "SELECT session_id FROM sessions WHERE tenant_id = ? AND doc_id = ?", [tenant_id, item["doc_id"]]
        ).fetchone()
        return row[0] if row else ""

    def patch(item_ref: str, body: FieldPatch, principal: Principal, if_match: str | None) -> Response:
        given = body.model_fields_set - {"note", "version"}
        version = body.version or (if_match or "").strip().strip('"') or None
        if version is None:
            return error("name the version of the field you changed (If-Match, or `version`): GET it first", 428)
        change = Change(**{k: getattr(body, k) for k in given})
        only_status = given == {"status"} and body.status in ("accepted", "rejected")
        action: Action = ("accept" if body.status == "accepted" else "reject") if only_status else "correct"
        with open_warehouse(warehouse) as con:
            try:
                done = apply_change(
                    con, tenant_id, item_ref, change, principal.name, action, body.note, schemas, version
                )
            except ItemNotFound as exc:
                return error(str(exc), 404)
            except StaleVersion as exc:
                detail = item_detail(con, tenant_id, item_ref, context_chars=0)
                return _json(ConflictOut(error=str(exc), field=field_out(detail, session_of(con, detail.item))), 409)
            except NothingToChange as exc:
                return _json(PatchOut(changed=False, reason=str(exc)))
            except ValueError as exc:  # a transition or a value the rules refuse
                return error(str(exc), 422)
            detail = item_detail(con, tenant_id, done.item_id, context_chars=0)
            field = field_out(detail, session_of(con, detail.item))
        return _json(PatchOut(changed=True, audit_seq=done.audit.seq, field=field))

    def reextract(session_id: str, body: ReExtractIn) -> Response:
        schema = schemas.get(body.schema_version_id)
        if schema is None:
            return error(f"unknown schema version {body.schema_version_id!r}; known: {', '.join(sorted(schemas))}", 422)
        with open_warehouse(warehouse) as con:
            session = load_session(con, tenant_id, session_id)
            if session is None:
                return error(f"session {session_id!r} not found in tenant {tenant_id!r}", 404)
            preview = preview_rerun(con, schema.key, tenant_id, [session["doc_id"]])
        if session["status"] != "completed":
            return error(f"session {session_id!r} is still in progress: it is extracted when it is completed", 409)
        if preview.need_confirmation and not body.confirm:
            return _json(
                ConfirmationNeeded(
                    error=f"{preview.message}; nothing was changed: send confirm=true to overwrite them",
                    would_overwrite=preview.would_overwrite,
                    need_confirmation=preview.need_confirmation,
                    protected_by_status=preview.protected_by_status,
                ),
                409,
            )
        stored, failure = reextract_session(
            lambda: open_warehouse(warehouse), extractor, session["doc_id"], schema, body.confirm
        )
        if failure:
            return error(f"the extraction failed; the previous fields are kept: {failure}", 502)
        return _json(
            ReExtractOut(
                session_id=session_id,
                schema_version_id=schema.key,
                items_stored=stored,
                overwrote=preview.would_overwrite,
                overwrote_with_confirmation=preview.need_confirmation if body.confirm else 0,
            )
        )

    def field(item_ref: str) -> Response:
        with open_warehouse(warehouse) as con:
            try:
                detail = item_detail(con, tenant_id, item_ref, context_chars=0)
            except ItemNotFound as exc:
                return error(str(exc), 404)
            out = field_out(detail, session_of(con, detail.item))
        response = _json(out)
        response.headers["ETag"] = f'"{out.version}"'
        return response

    def field_history(item_ref: str) -> Response:
        with open_warehouse(warehouse) as con:
            try:
                entries = history(con, tenant_id, item_ref)
            except ItemNotFound as exc:
                return error(str(exc), 404)
        out = [
            HistoryEntryOut(
                seq=e.seq or 0,
                occurred_at=e.occurred_at,
                actor=e.actor,
                action=e.action,
                changes={k: list(v) for k, v in e.changes().items()},
                note=e.note,
            ).model_dump(mode="json")
            for e in entries
        ]
        return JSONResponse(out)

    async def get_fields(request: Request) -> Response:
        return await run_in_threadpool(
            session_fields, request.path_params["session_id"], request.query_params.get("schema_version_id")
        )

    async def get_state(request: Request) -> Response:
        return await run_in_threadpool(session_state, request.path_params["session_id"])

    async def patch_field(request: Request) -> Response:
        body = await _body(request, FieldPatch)
        if isinstance(body, Response):
            return body
        return await run_in_threadpool(
            patch, request.path_params["field_id"], body, request.state.principal, request.headers.get("if-match")
        )

    async def post_reextract(request: Request) -> Response:
        body = await _body(request, ReExtractIn)
        if isinstance(body, Response):
            return body
        return await run_in_threadpool(reextract, request.path_params["session_id"], body)

    async def get_field(request: Request) -> Response:
        return await run_in_threadpool(field, request.path_params["field_id"])

    async def get_history(request: Request) -> Response:
        return await run_in_threadpool(field_history, request.path_params["field_id"])

    return [
        Route("/sessions/{session_id}/extracted-fields", get_fields, methods=["GET"]),
        Route("/sessions/{session_id}/state", get_state, methods=["GET"]),
        Route("/sessions/{session_id}/re-extract", post_reextract, methods=["POST"]),
        Route("/extracted-fields/{field_id}", get_field, methods=["GET"]),
        Route("/extracted-fields/{field_id}", patch_field, methods=["PATCH"]),
        Route("/extracted-fields/{field_id}/history", get_history, methods=["GET"]),
    ]
