"""What reviewers read, always inside one tenant: the queue, and an item with its evidence in context.

The command line and the review page show the same rows from these functions. Text is shown scrubbed: evidence
is stored with raw-text offsets, mapped here to the scrubbed text with the document's offset map, so a card
number or an IBAN in a quote or its context shows as its placeholder. The original text is shown only by
`reveal.reveal_item`, which records who saw it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from extraction_assets.lib.models import ScrubbedDocument
from extraction_assets.lib.review.controls import shown
from extraction_assets.lib.review.corrections import item_version, load_item
from extraction_assets.lib.warehouse import load_scrubbed
from extraction_assets.lib.warehouse.connection import rows_as_dicts
from extraction_assets.lib.warehouse.documents import NOT_SCRUBBED, masked_quotes
from extraction_assets.lib.warehouse.review_queue import UNDECIDED, group_id_sql, probability_sql

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location
    import duckdb

ANY_STATUS = "any"


class QueueRow(BaseModel):
    item_id: str
    schema_version: str
    item_type: str
    title: str
    confidence: float
    probability_correct: float | None = None  # the calibrated probability of being right, where the version has one
    status: str
    extracted_by: str
    reasons: list[str]
    source_uri: str
    evidence_quote: str | None
    priority: float  # queued: the expected errors its group's decision catches; else the item's probability of error
    updated_by: str | None
    group_id: str
    group_size: int  # undecided items in its group (1 for a decided item)

    @property
    def rules(self) -> list[str]:
        """The rules that queued it while it waits for a person; a decided item's reasons are history, not a state."""
        return current_rules(self.status, self.reasons)


def current_rules(status: str, reasons: list[str]) -> list[str]:
    """The review rules to show as an item's badges: those of an undecided item only (an accepted item is not
    `below_threshold` any more; its history keeps why it was queued)."""
    return [reason.split(":", 1)[0] for reason in reasons] if status in UNDECIDED else []


class Segment(BaseModel):
    """A run of document text; `evidence` is the index of the evidence it belongs to, None outside evidence."""

    text: str
    evidence: int | None = None


class EvidenceInContext(BaseModel):
    evidence_id: str
    char_start: int
    char_end: int
    quote: str
    turn_id: str | None
    match_kind: str
    strength: str
    evidence_type: str = "user_quote"
    before: str  # the text just before the quote
    after: str  # the text just after it


class ItemDetail(BaseModel):
    item: dict[str, Any]
    version: str  # what a change made after reading this must name (`corrections.item_version`)
    source_uri: str
    kind: str
    evidence: list[EvidenceInContext]
    segments: list[Segment]
    masked: bool = True  # False only for a revealed (and audited) view


def _masked_text(scrubbed: ScrubbedDocument | None) -> str:
    return scrubbed.text if scrubbed else NOT_SCRUBBED


def _masked_span(scrubbed: ScrubbedDocument | None, start: int, end: int) -> tuple[int, int]:
    """Where a raw span lies in the scrubbed text (a cut masked value widens to its whole placeholder)."""
    if scrubbed is None:
        return 0, len(NOT_SCRUBBED)
    return scrubbed.offset_map.to_scrubbed(start, end)


def list_queue(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    schema_version: str | None = None,
    item_type: str | None = None,
    reason: str | None = None,
    status: str = "needs_review",
    limit: int = 200,
) -> list[QueueRow]:
    """The tenant's items waiting for a person (or of any `status`), most urgent first, at most `limit`.

    `reason` is a rule name such as `below_threshold`. Filtering and the limit are the query's, so only the
    rows shown have their scrubbed documents loaded (a tenant's whole queue was, thousands of texts).
    """
    rows = rows_as_dicts(
        con,
        f"""SELECT i.item_id, i.schema_version, i.item_type, i.title, i.confidence, i.probability_correct, i.status,
                  i.extracted_by,
                  i.review_reasons AS reasons, r.source_uri, i.updated_by, i.doc_id,
                  (SELECT [e.char_start, e.char_end] FROM evidence e WHERE e.item_id = i.item_id
                   ORDER BY e.char_start LIMIT 1) AS first_span,
                  {probability_sql()} AS p_right,
                  coalesce(q.group_id, {group_id_sql()}) AS group_id, coalesce(q.group_size, 1) AS group_size,
                  coalesce(q.priority, round(1.0 - {probability_sql()}, 4)) AS priority
           FROM extracted_items i JOIN raw_documents r USING (doc_id) LEFT JOIN review_queue q USING (item_id)
           WHERE i.tenant_id = ?
             AND (CAST(? AS VARCHAR) IS NULL OR i.schema_version = ?)
             AND (CAST(? AS VARCHAR) IS NULL OR i.item_type = ?)
             AND (? OR i.status = ?)
             AND (CAST(? AS VARCHAR) IS NULL
                  OR list_contains(list_transform(CAST(i.review_reasons AS VARCHAR[]), r -> split_part(r, ':', 1)), ?))
           ORDER BY priority DESC, group_id, p_right, i.item_id
           LIMIT ?""",
        [
            tenant_id,
            *(schema_version, schema_version),
            *(item_type, item_type),
            *(status == ANY_STATUS, status),
            *(reason, reason),
            max(limit, 0),
        ],
    )
    from extraction_assets.lib.pii.display import masked  # the detectors load on first use, not with the code

    quotes = masked_quotes(con, [(r["item_id"], r["doc_id"], *r["first_span"]) for r in rows if r["first_span"]])
    return [
        QueueRow.model_validate(
            shown(
                {
                    **r,
                    "source_uri": masked(r["source_uri"]),  # a file may be named after a person
                    "reasons": json.loads(r["reasons"]),
                    "evidence_quote": quotes.get(r["item_id"]),
                }
            )
        )
        for r in rows
    ]


def highlight_segments(text: str, spans: list[tuple[int, int]]) -> list[Segment]:
    """The whole text cut into plain and evidence runs; an overlap belongs to the earlier evidence."""
    segments: list[Segment] = []
    cursor = 0
    for index, (start, end) in sorted(enumerate(spans), key=lambda pair: pair[1]):
        start = max(start, cursor)
        if end <= start:
            continue
        if start > cursor:
            segments.append(Segment(text=text[cursor:start]))
        segments.append(Segment(text=text[start:end], evidence=index))
        cursor = end
    if cursor < len(text):
        segments.append(Segment(text=text[cursor:]))
    return segments


def item_detail(
    con: duckdb.DuckDBPyConnection, tenant_id: str, ref: str, context_chars: int = 240, reveal: bool = False
) -> ItemDetail:
    """The item, its document and every evidence span with the text around it, scrubbed unless `reveal`.

    Call it with `reveal=True` only through `reveal_item`, which audits the view. Offsets stay the stored
    raw-text ones; quotes and context are cut from the text shown.
    """
    from extraction_assets.lib.pii.display import masked  # the detectors load on first use, not with the code

    item = load_item(con, tenant_id, ref)
    source_uri, kind, raw = con.execute(
        "SELECT source_uri, kind, text FROM raw_documents WHERE doc_id = ? AND tenant_id = ?",
        [item["doc_id"], tenant_id],
    ).fetchone() or ("", "", "")
    scrubbed = None if reveal else load_scrubbed(con, [item["doc_id"]]).get(item["doc_id"])
    text = raw if reveal else _masked_text(scrubbed)
    evidence: list[EvidenceInContext] = []
    spans: list[tuple[int, int]] = []
    for row in rows_as_dicts(
        con,
        """SELECT evidence_id, char_start, char_end, turn_id, match_kind, strength, evidence_type FROM evidence
           WHERE item_id = ? AND tenant_id = ? ORDER BY char_start""",
        [item["item_id"], tenant_id],
    ):
        stored = (row["char_start"], row["char_end"])
        start, end = stored if reveal else _masked_span(scrubbed, *stored)
        spans.append((start, end))
        evidence.append(
            EvidenceInContext(
                **row,
                quote=text[start:end],
                before=text[max(0, start - context_chars) : start],
                after=text[end : end + context_chars],
            )
        )
    segments = highlight_segments(text, spans)
    detail = ItemDetail(
        item=item,
        version=item_version(item),
        source_uri=source_uri if reveal else masked(source_uri),
        kind=kind,
        evidence=evidence,
        segments=segments,
        masked=not reveal,
    )
    return ItemDetail.model_validate(shown(detail.model_dump()))  # bidirectional controls marked, never raw


def queue_filters(con: duckdb.DuckDBPyConnection, tenant_id: str) -> tuple[list[str], list[str]]:
    """The schema versions and item types of one tenant's items: the choices the queue's filters offer."""
    versions = con.execute(
        "SELECT DISTINCT schema_version FROM extracted_items WHERE tenant_id = ? ORDER BY 1", [tenant_id]
    ).fetchall()
    types = con.execute("SELECT DISTINCT item_type FROM extracted_items WHERE tenant_id = ? ORDER BY 1", [tenant_id])
    return [v[0] for v in versions], [t[0] for t in types.fetchall()]


class DocumentItem(BaseModel):
    item_id: str
    item_type: str
    title: str
    status: str
    extracted_by: str
    evidence: int | None  # the index of its first span in the document's segments, None without evidence


class DocumentDetail(BaseModel):
    """A document as reviewers read it (scrubbed), with one schema version's items highlighted: where a reviewer adds
    what the extractor missed."""

    doc_id: str
    source_uri: str
    kind: str
    schema_version: str | None
    versions: list[str]  # the schema versions that read the document
    segments: list[Segment]
    items: list[DocumentItem]


def document_detail(
    con: duckdb.DuckDBPyConnection, tenant_id: str, doc_id: str, schema_version: str | None = None
) -> DocumentDetail:
    """One document of the tenant, scrubbed, with the items `schema_version` (default: the first version that reads
    it) has in it and their evidence highlighted; another tenant's document is not found."""
    from extraction_assets.lib.pii.display import masked  # the detectors load on first use, not with the code
    from extraction_assets.lib.review.corrections import ItemNotFound

    found = con.execute(
        "SELECT source_uri, kind FROM raw_documents WHERE doc_id = ? AND tenant_id = ?", [doc_id, tenant_id]
    ).fetchone()
    if found is None:
        raise ItemNotFound(f"document {doc_id!r} not found in tenant {tenant_id!r}")
    versions = [
        r[0]
        for r in con.execute(
            """SELECT schema_version FROM document_applicability WHERE doc_id = ? AND taken
               UNION SELECT schema_version FROM extracted_items WHERE doc_id = ? ORDER BY 1""",
            [doc_id, doc_id],
        ).fetchall()
    ]
    version = schema_version if schema_version in versions else (versions[0] if versions else None)
    scrubbed = load_scrubbed(con, [doc_id]).get(doc_id)
    rows = rows_as_dicts(
        con,
        """SELECT * FROM (
               SELECT i.item_id, i.item_type, i.title, i.status, i.extracted_by,
                      (SELECT [e.char_start, e.char_end] FROM evidence e WHERE e.item_id = i.item_id
                       ORDER BY e.char_start LIMIT 1) AS span
               FROM extracted_items i WHERE i.doc_id = ? AND i.tenant_id = ? AND i.schema_version = ?)
           ORDER BY span[1] NULLS LAST, item_type""",
        [doc_id, tenant_id, version],
    )
    spans = [_masked_span(scrubbed, *r["span"]) for r in rows if r["span"]]
    items, index = [], 0
    for r in rows:
        items.append(DocumentItem(**{**r, "evidence": index if r["span"] else None}))
        index += bool(r["span"])
    detail = DocumentDetail(
        doc_id=doc_id,
        source_uri=masked(found[0]),
        kind=found[1],
        schema_version=version,
        versions=versions,
        segments=highlight_segments(_masked_text(scrubbed), spans),
        items=items,
    )
    return DocumentDetail.model_validate(shown(detail.model_dump()))
