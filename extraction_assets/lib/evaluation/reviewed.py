"""Reviewers' decisions as gold: per tenant and schema, what people accepted, corrected, rejected and added is an
eval set any version of the schema can be scored against.

- an accepted item's value is right, a corrected item's new value is the right one (its machine value was wrong),
  and an item a reviewer added is one the extractor missed: those are the gold positives;
- a rejected item is a false positive: a version that proposes it again is wrong.

A version is scored on the documents of the tenant that hold a decision, by what its extractor proposed: an item a
person since changed is read as it was before the person's first change (its first audit row's before snapshot), an
item a person added is no proposal at all. A proposal matches a decision of the same document and field when their
normalized values are equal (`warehouse.review_queue.GROUP_TEXT_SQL`: the field's value, else the item's title), or,
for items (`shape: items`), when their evidence spans overlap. Counts: a proposal matching a positive is a true
positive; one matching a rejected item, or (one value per field: `fields`, `records`) proposing another value for a
field whose value a person settled, a false positive; the rest are not judged (people decided nothing about them).
A positive no proposal matches is a false negative. The items reviewers added are also scored on their own
(`ADDED_FIELD`): the recall of what the extractor missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from extraction_assets.lib.evaluation.comparators import spans_overlap
from extraction_assets.lib.evaluation.metrics import Calibration, FieldCounts, calibration, field_scores, ratio
from extraction_assets.lib.evaluation.runner import EvalResult
from extraction_assets.lib.warehouse.connection import now, rows_as_dicts
from extraction_assets.lib.warehouse.review_queue import GROUP_TEXT_SQL

if TYPE_CHECKING:
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

REVIEWED = "reviewed"  # the mode of an eval run scored on reviewers' decisions
DATASET_PREFIX = "reviewed:"  # its dataset name: reviewed:<tenant>
ADDED_FIELD = "_added_by_reviewers"  # the eval_metrics row of the items reviewers added: recall of missed items
Kind = Literal["accepted", "corrected", "rejected", "added"]
POSITIVE: tuple[Kind, ...] = ("accepted", "corrected", "added")


class Decided(BaseModel):
    """One reviewer's decision as gold: a document's field, the value settled (or rejected), its evidence spans."""

    item_id: str
    doc_id: str
    item_type: str
    kind: Kind
    text: str  # the normalized value decided on (for a rejected item: the value rejected)
    spans: list[tuple[int, int]]
    decided_at: str


class Proposal(BaseModel):
    """What a version's extractor proposed for a document's field."""

    doc_id: str
    item_type: str
    text: str
    spans: list[tuple[int, int]]
    probability: float
    extractor_version: str  # the extractor (and its version) that stored the item


def _text(alias: str) -> str:
    return GROUP_TEXT_SQL.format(i=alias)


def reviewed_tenants(con: duckdb.DuckDBPyConnection, schema_name: str) -> list[str]:
    """The tenants with at least one reviewer's decision on an item of the schema (any version)."""
    rows = con.execute(
        """SELECT DISTINCT tenant_id FROM extracted_items
           WHERE split_part(schema_version, '@', 1) = ?
             AND (extracted_by = 'human' OR status IN ('accepted', 'rejected'))
           ORDER BY 1""",
        [schema_name],
    ).fetchall()
    return [r[0] for r in rows]


def decisions(con: duckdb.DuckDBPyConnection, tenant_id: str, schema_name: str) -> list[Decided]:
    """Every decision people made on the tenant's items of the schema (any version), the latest per document, field
    and value: accepted, corrected, rejected, added. An item a person reopened (back to needs_review) is no gold."""
    rows = rows_as_dicts(
        con,
        f"""WITH first_change AS (
                SELECT item_id, json_extract(before_snapshot, '$.value') AS value,
                       json_extract_string(before_snapshot, '$.title') AS title
                FROM audit_log WHERE tenant_id = ? AND action NOT IN ('reveal', 'add')
                QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY seq) = 1)
            SELECT i.item_id, i.doc_id, i.item_type, i.status, i.added_by, i.updated_at,
                   {_text("i")} AS text, {_text("f")} AS machine_text,
                   (SELECT list([e.char_start, e.char_end] ORDER BY e.char_start) FROM evidence e
                    WHERE e.item_id = i.item_id) AS spans
            FROM extracted_items i LEFT JOIN first_change f USING (item_id)
            WHERE i.tenant_id = ? AND split_part(i.schema_version, '@', 1) = ?
              AND i.status IN ('accepted', 'rejected') AND (i.extracted_by = 'human' OR i.added_by IS NOT NULL)""",
        [tenant_id, tenant_id, schema_name],
    )
    latest: dict[tuple[str, str, str], Decided] = {}
    for r in rows:
        kind: Kind
        if r["added_by"] is not None:
            kind = "added"
        elif r["status"] == "rejected":
            kind = "rejected"
        elif r["machine_text"] is not None and r["machine_text"] != r["text"]:
            kind = "corrected"
        else:
            kind = "accepted"
        decided = Decided(
            item_id=r["item_id"],
            doc_id=r["doc_id"],
            item_type=r["item_type"],
            kind=kind,
            text=r["text"] if kind != "rejected" else (r["machine_text"] or r["text"]),
            spans=[tuple(s) for s in r["spans"] or []],
            decided_at=r["updated_at"].isoformat(),
        )
        key = (decided.doc_id, decided.item_type, decided.text)
        if key not in latest or latest[key].decided_at < decided.decided_at:
            latest[key] = decided
    return list(latest.values())


def proposals(con: duckdb.DuckDBPyConnection, schema_version: str, doc_ids: Sequence[str]) -> list[Proposal]:
    """What the version's extractor proposed on these documents: a person's later change undone (the first audit
    row's before snapshot), an item a person added left out."""
    rows = rows_as_dicts(
        con,
        f"""WITH first_change AS (
                SELECT item_id, json_extract(before_snapshot, '$.value') AS value,
                       json_extract_string(before_snapshot, '$.title') AS title,
                       CAST(json_extract(before_snapshot, '$.confidence') AS DOUBLE) AS confidence,
                       CAST(json_extract(before_snapshot, '$.probability_correct') AS DOUBLE) AS probability_correct
                FROM audit_log WHERE action NOT IN ('reveal', 'add')
                QUALIFY row_number() OVER (PARTITION BY item_id ORDER BY seq) = 1)
            SELECT i.doc_id, i.item_type,
                   CASE WHEN f.item_id IS NULL THEN {_text("i")} ELSE {_text("f")} END AS text,
                   coalesce(f.probability_correct, f.confidence, i.probability_correct, i.confidence) AS probability,
                   (SELECT list([e.char_start, e.char_end] ORDER BY e.char_start) FROM evidence e
                    WHERE e.item_id = i.item_id) AS spans, i.extractor_version
            FROM extracted_items i LEFT JOIN first_change f USING (item_id)
            WHERE i.schema_version = ? AND i.doc_id IN (SELECT unnest(?)) AND i.added_by IS NULL""",
        [schema_version, list(doc_ids)],
    )
    return [Proposal(**{**r, "spans": [tuple(s) for s in r["spans"] or []]}) for r in rows]


def _matches(proposal: Proposal, decided: Decided, by_span: bool) -> bool:
    if (proposal.doc_id, proposal.item_type) != (decided.doc_id, decided.item_type):
        return False
    if proposal.text == decided.text:
        return True
    return by_span and any(spans_overlap(a, b) for a in proposal.spans for b in decided.spans)


class ReviewedScore(BaseModel):
    result: EvalResult
    used: dict[str, int]  # decisions used, by kind


def score_on_decisions(
    schema: SchemaVersion, tenant_id: str, gold: Sequence[Decided], proposed: Sequence[Proposal]
) -> ReviewedScore:
    """A version's proposals against a tenant's decisions (module docstring), as an eval result."""
    by_span = schema.shape == "items"
    one_value = schema.shape in ("fields", "records")
    fields = sorted({d.item_type for d in gold} | {p.item_type for p in proposed})
    counts = {name: FieldCounts() for name in fields}
    added = FieldCounts(fp=None)
    found: set[str] = set()
    pairs: list[tuple[float, bool]] = []
    for proposal in proposed:
        counts_of = counts[proposal.item_type]
        hits = [d for d in gold if _matches(proposal, d, by_span)]
        positive = next((d for d in hits if d.kind in POSITIVE), None)
        if positive is not None:
            counts_of.tp += 1
            found.add(positive.item_id)
            pairs.append((proposal.probability, True))
        elif hits or (
            one_value
            and any(
                d.kind in POSITIVE and (d.doc_id, d.item_type) == (proposal.doc_id, proposal.item_type) for d in gold
            )
        ):
            counts_of.fp = (counts_of.fp or 0) + 1
            pairs.append((proposal.probability, False))
    for decided in gold:
        if decided.kind in POSITIVE and decided.item_id not in found:
            counts[decided.item_type].fn += 1
        if decided.kind == "added":
            added.tp += decided.item_id in found
            added.fn += decided.item_id not in found
    scores = field_scores(counts, dict.fromkeys(counts, REVIEWED))
    scores += field_scores({ADDED_FIELD: added}, {ADDED_FIELD: "items reviewers added"})[:1]
    used = {kind: sum(d.kind == kind for d in gold) for kind in ("accepted", "corrected", "rejected", "added")}
    documents = len({d.doc_id for d in gold})
    result = EvalResult(
        dataset=f"{DATASET_PREFIX}{tenant_id}",
        schema_version=schema.key,
        # what was scored: the extractor versions that stored the proposals (an extractor version, as in every mode)
        extractor=", ".join(sorted({p.extractor_version for p in proposed})) or "none",
        model=None,
        mode=REVIEWED,
        source="audit_log",
        run_at=now(),
        documents=documents,
        fields=scores,
        items_stored=len(proposed),
        calibration=calibration(pairs) if pairs else Calibration(ece=None, points=0),
        notes=[
            f"gold: the decisions reviewers of {tenant_id} made on {schema.schema_name} items of {documents} "
            f"documents: {', '.join(f'{n} {k}' for k, n in used.items())}; "
            f"{ADDED_FIELD}: recall of the {added.tp + added.fn} items reviewers added (what the extractor missed): "
            f"{ratio(added.tp, added.tp + added.fn)}",
            "Proposals a person decided nothing about are not judged.",
        ],
    )
    return ReviewedScore(result=result, used=used)


def score_version_on_reviews(
    con: duckdb.DuckDBPyConnection, schema: SchemaVersion, tenant_id: str
) -> ReviewedScore | None:
    """The version scored on the tenant's reviewers' decisions on its schema; None without any decision."""
    from extraction_assets.lib.review.lessons import stored_fit

    gold = decisions(con, tenant_id, schema.schema_name)
    if not gold:
        return None
    score = score_on_decisions(schema, tenant_id, gold, proposals(con, schema.key, sorted({d.doc_id for d in gold})))
    fit = stored_fit(con, tenant_id, schema.key)
    score.result.notes.append(
        f"calibration refit for {tenant_id} on {fit.decisions} of these decisions ({fit.wrong} wrong), "
        f"fitted at {fit.fitted_at[:19]}"
        if fit
        else f"no calibration refit for {tenant_id} on {schema.key} yet (review.lessons: too few decisions, or "
        "the version is not calibrated)"
    )
    return score
