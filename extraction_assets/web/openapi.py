"""The interview API's OpenAPI 3.1 description, built from the models that validate its bodies.

Served at `/openapi.json` and kept in `docs/openapi.json` (a test checks that the two agree)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from extraction_assets.web.api_models import (
    ConfirmationNeeded,
    ConflictOut,
    ErrorOut,
    ExtractedFieldOut,
    FieldPatch,
    HistoryEntryOut,
    PatchOut,
    ReExtractIn,
    ReExtractOut,
    SessionFieldsOut,
    SessionStateOut,
)

_MODELS: tuple[type[BaseModel], ...] = (
    SessionFieldsOut,
    SessionStateOut,
    ExtractedFieldOut,
    FieldPatch,
    PatchOut,
    ReExtractIn,
    ReExtractOut,
    ConfirmationNeeded,
    ConflictOut,
    HistoryEntryOut,
    ErrorOut,
)


def _ref(model: type[BaseModel]) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{model.__name__}"}


def _json_body(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    why = {
        401: "no valid bearer token",
        403: "a token of another tenant",
        404: "no such session or field in the token's tenant",
        415: "the body is not JSON",
        422: "a body, transition or value the rules refuse",
        428: "the change names no version of the field (If-Match or `version`)",
        502: "the extraction failed; the previous fields are kept",
    }
    return {str(c): _json_body(_ref(ErrorOut), why[c]) for c in codes}


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "schema": {"type": "string"}, "description": description}


def openapi_document() -> dict[str, Any]:
    _, definitions = models_json_schema(
        [(m, "validation") for m in _MODELS], ref_template="#/components/schemas/{model}"
    )
    session = _path_param("session_id", "the session's id (its file name without the extension)")
    field = _path_param(
        "field_id", "the field's id (`id` in the session's fields), or a unique prefix of 6+ characters"
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "extraction-assets interview API",
            "version": "1",
            "description": (
                "A live interview session's extracted fields with their evidence, corrections, re-extraction under "
                "a schema version, and each field's history. Every request carries a bearer token of one tenant "
                "and sees only that tenant."
            ),
        },
        "servers": [{"url": "http://127.0.0.1:8765"}],
        "components": {
            "schemas": definitions["$defs"],
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": {
            "/sessions/{session_id}/extracted-fields": {
                "get": {
                    "summary": "Every field of the session with its full evidence array (each with its turn id)",
                    "parameters": [
                        session,
                        {
                            "name": "schema_version_id",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string"},
                            "description": "another schema version's fields (default: the session's own)",
                        },
                    ],
                    "responses": {
                        "200": _json_body(_ref(SessionFieldsOut), "the fields"),
                        **_errors(401, 403, 404),
                    },
                }
            },
            "/sessions/{session_id}/state": {
                "get": {
                    "summary": "A live session's field coverage after its latest respondent turn (light extraction)",
                    "parameters": [session],
                    "responses": {
                        "200": _json_body(_ref(SessionStateOut), "coverage and confidence per field"),
                        **_errors(401, 403, 404),
                    },
                }
            },
            "/extracted-fields/{field_id}": {
                "get": {
                    "summary": "One field with its evidence and its `version` (also the ETag header)",
                    "parameters": [field],
                    "responses": {"200": _json_body(_ref(ExtractedFieldOut), "the field"), **_errors(401, 403, 404)},
                },
                "patch": {
                    "summary": "Correct a field's value, normalized value or status (audited, as the token's name), "
                    "against the version of the field the caller read",
                    "parameters": [
                        field,
                        {
                            "name": "If-Match",
                            "in": "header",
                            "required": False,
                            "schema": {"type": "string"},
                            "description": "the field's `version` the change was made against (or `version` in "
                            "the body); one of the two is required",
                        },
                    ],
                    "requestBody": {"required": True, **_json_body(_ref(FieldPatch), "what changes")},
                    "responses": {
                        "200": _json_body(_ref(PatchOut), "changed, or why nothing changed"),
                        "409": _json_body(
                            _ref(ConflictOut), "the field changed since that version: nothing changed; the field now"
                        ),
                        **_errors(401, 403, 404, 415, 422, 428),
                    },
                },
            },
            "/sessions/{session_id}/re-extract": {
                "post": {
                    "summary": "Run post-session extraction again under a schema version",
                    "parameters": [session],
                    "requestBody": {"required": True, **_json_body(_ref(ReExtractIn), "the schema version")},
                    "responses": {
                        "200": _json_body(_ref(ReExtractOut), "re-extracted"),
                        "409": _json_body(
                            {"oneOf": [_ref(ConfirmationNeeded), _ref(ErrorOut)]},
                            "people's fields would be overwritten (the counts; nothing changed), or the session is "
                            "still in progress",
                        ),
                        **_errors(401, 403, 404, 415, 422, 502),
                    },
                }
            },
            "/extracted-fields/{field_id}/history": {
                "get": {
                    "summary": "Every change to the field: when, who, before and after",
                    "parameters": [field],
                    "responses": {
                        "200": _json_body({"type": "array", "items": _ref(HistoryEntryOut)}, "oldest first"),
                        **_errors(401, 403, 404),
                    },
                }
            },
        },
    }


if __name__ == "__main__":  # python -m extraction_assets.web.openapi > docs/openapi.json
    import json

    print(json.dumps(openapi_document(), ensure_ascii=False, indent=2, sort_keys=True))
