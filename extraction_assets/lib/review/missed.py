"""Items the extractor missed, added by a person: evidence or nothing, for people too.

A reviewer points at the evidence in the document as they read it, scrubbed: a span of the scrubbed text (selected
on the review page), or a quote they type, located by the grounding code as an extractor's quote is. The span is
mapped to raw-text offsets through the document's offset map, so the stored evidence keeps the invariant every
piece of evidence keeps (`quote == raw_documents.text[char_start:char_end]`). The item is the person's from the
start (`extracted_by = 'human'`, `added_by`, accepted), keyed as the extractor would key it, so a re-run that finds
it later keeps it; its audit row (action `add`) is appended in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from extraction_assets.lib.extraction.grounding import TurnIndex, ground
from extraction_assets.lib.extraction.pipeline import item_id_for
from extraction_assets.lib.extraction.review_rules import type_violations
from extraction_assets.lib.models import EvidenceRecord, ItemRecord, Turn, stable_id
from extraction_assets.lib.review.audit import advance_outside_head, append_entry
from extraction_assets.lib.review.corrections import (
    WRITE_LOCK,
    CorrectionResult,
    InvalidCorrection,
    ItemNotFound,
    bounded_note,
    load_item,
)
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts, transaction
from extraction_assets.lib.warehouse.documents import load_scrubbed
from extraction_assets.lib.warehouse.extraction import delete_items, evidence_row, item_row
from extraction_assets.lib.warehouse.review_queue import requeue_items

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

ADD = "add"  # the audit action of an added item
HUMAN_EXTRACTOR = "human"  # the extractor_version of an item a person added
MAX_QUOTE_CHARS = 4000  # evidence is a span a person can read, not the document


def _identity(
    schema: SchemaVersion, tenant_id: str, doc_id: str, metadata: Mapping[str, Any], item_type: str, quote: str
) -> str:
    """The id the extractor gives the same item (`pipeline._identity`): by field, by record key, or by quote."""
    if schema.shape == "fields":
        return stable_id(doc_id, schema.key, item_type, "field")
    if schema.shape == "records":
        return stable_id(tenant_id, schema.key, item_type, "key", f"{metadata.get('message_id') or doc_id}:{item_type}")
    return item_id_for(doc_id, schema.key, item_type, quote)


def _located(text: str, span: tuple[int, int] | None, quote: str | None) -> tuple[int, int]:
    """The scrubbed span the person pointed at: their selection when it holds their quote, else the quote found."""
    quote = (quote or "").strip()
    if span is not None:
        start, end = span
        if not 0 <= start < end <= len(text):
            raise InvalidCorrection(f"the selection {start}-{end} is not inside the document ({len(text)} characters)")
        if not quote or " ".join(text[start:end].split()) == " ".join(quote.split()):
            return start, end
    if not quote:
        raise InvalidCorrection("select the evidence in the document, or type it as it reads there")
    found = ground(quote, text, hint=span[0] if span else None)
    if found is None:
        raise InvalidCorrection(f"{quote[:80]!r} is not in the document (type it as the scrubbed text reads)")
    return found.start, found.end


def add_missed_item(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    doc_id: str,
    schema: SchemaVersion,
    item_type: str,
    value: Mapping[str, Any],
    actor: str,
    span: tuple[int, int] | None = None,
    quote: str | None = None,
    note: str | None = None,
) -> CorrectionResult:
    """Store an item the extractor missed in one document of the reviewer's tenant, with the evidence they pointed
    at (`span` in the scrubbed text, or `quote` as it reads there), and audit it, in one transaction.

    A field of a `fields` schema whose item exists is the extractor's to correct, not to add; its null placeholder
    (a required field not found) is what the person fills.
    """
    actor = actor.strip()
    if not actor:
        raise InvalidCorrection("who added the item is required")
    note = bounded_note(note)
    spec = schema.field(item_type)
    if spec is None:
        known = ", ".join(f.name for f in schema.fields)
        raise InvalidCorrection(f"{schema.key} has no field {item_type!r} (its fields: {known})")
    rows = rows_as_dicts(
        con,
        "SELECT doc_id, text, turns, metadata FROM raw_documents WHERE doc_id = ? AND tenant_id = ?",
        [doc_id, tenant_id],
    )
    scrubbed = load_scrubbed(con, [doc_id]).get(doc_id) if rows else None
    if not rows or scrubbed is None:
        raise ItemNotFound(f"document {doc_id!r} not found in tenant {tenant_id!r}")
    raw = rows[0]
    start, end = _located(scrubbed.text, span, quote)
    seen = scrubbed.text[start:end]
    if not seen.strip() or end - start > MAX_QUOTE_CHARS:
        raise InvalidCorrection(f"the evidence must be 1 to {MAX_QUOTE_CHARS} characters of the document's text")
    raw_start, raw_end = scrubbed.offset_map.to_raw(start, end)
    raw_quote = raw["text"][raw_start:raw_end]
    item_value = dict(value)
    if schema.shape == "fields" and item_value.get("value") is None and spec.type in ("string", "object"):
        item_value["value"] = " ".join(seen.split())  # the text as the reviewer reads it: no masked value
    if schema.shape == "fields" and item_value.get("value") is None:
        raise InvalidCorrection(f"give the {item_type} the evidence says")
    problems = type_violations(spec, item_value)
    if problems:
        raise InvalidCorrection("the value breaks its field's type: " + "; ".join(problems))
    item_id = _identity(schema, tenant_id, doc_id, json.loads(raw["metadata"]), item_type, raw_quote)
    turns = TurnIndex([Turn.model_validate(t) for t in json.loads(raw["turns"])])
    summary = " ".join(seen.split())
    title = f"{item_type}: {item_value['value']}" if schema.shape == "fields" else summary
    stamp = now()
    item = ItemRecord(
        item_id=item_id,
        doc_id=doc_id,
        tenant_id=tenant_id,
        schema_version=schema.key,
        item_type=item_type,
        value=item_value,
        title=title[:120],
        confidence=1.0,  # a person's decision, not a machine's estimate (the bands bind extractors only)
        status="accepted",
        extracted_by="human",
        extractor_version=HUMAN_EXTRACTOR,
        model=None,
        reasoning_summary=f"added by {actor}: the extractor missed it",
        evidence=[
            EvidenceRecord(
                evidence_id=stable_id(item_id, raw_start, raw_end),
                item_id=item_id,
                doc_id=doc_id,
                tenant_id=tenant_id,
                schema_version=schema.key,
                char_start=raw_start,
                char_end=raw_end,
                quote=raw_quote,
                turn_id=turns.turn_for_span(raw_start, raw_end),
                match_kind="exact",
                strength="strong",
            )
        ],
    )
    with WRITE_LOCK, transaction(con):
        before: dict[str, Any] = {}
        if con.execute("SELECT 1 FROM extracted_items WHERE item_id = ?", [item_id]).fetchall():
            before = load_item(con, tenant_id, item_id)
            placeholder = (
                before["extracted_by"] != "human"
                and not con.execute("SELECT 1 FROM evidence WHERE item_id = ?", [item_id]).fetchall()
            )
            if not placeholder:
                raise InvalidCorrection(
                    f"this document already has that {item_type} item ({item_id}): correct it instead of adding one"
                )
            delete_items(con, [item_id])
        row = {**item_row(item, stamp, stamp), "updated_by": actor, "added_by": actor}
        con.execute(
            f"INSERT INTO extracted_items ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})", list(row.values())
        )
        evidence = evidence_row(item.evidence[0], stamp)
        con.execute(
            f"INSERT INTO evidence ({', '.join(evidence)}) VALUES ({', '.join('?' for _ in evidence)})",
            list(evidence.values()),
        )
        requeue_items(con, [item_id])
        after = load_item(con, tenant_id, item_id)
        entry = append_entry(
            con, item_id=item_id, tenant_id=tenant_id, actor=actor, action=ADD, before=before, after=after, note=note
        )
    advance_outside_head(con, entry)
    return CorrectionResult(item_id=item_id, action=ADD, before=before, after=after, audit=entry)
