"""The warehouse's invariants as queries: each returns the rows that break one, empty when it holds.

Those of the extraction results check the schema versions they are given (every version when None) in one query
and return the violations of each version that has some, `{version: [violations]}`: a run of many versions costs a
query per invariant, not one per version. Given a shard, they look at its documents' rows alone (a shard's run
checks what it writes, not every shard's rows again).

Asset checks report these; tests call them directly.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from extraction_assets.lib.offsets import OffsetMap
from extraction_assets.lib.warehouse.backend import on_lake
from extraction_assets.lib.warehouse.documents import (
    DOCUMENT_FINGERPRINT,
    QUOTE_FINGERPRINT,
    SCRUBBED_FINGERPRINT,
    by_rowid,
    is_content_hash,
    text_sha256,
)
from extraction_assets.lib.warehouse.shards import ALL_DOCUMENTS, Shard, in_shard_sql

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location; schemas (YAML) when read
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

CHECK_BATCH = 256  # documents whose text a check holds at once
CHECK_ROWS = 4096  # rows a whole-table check's statement scans at once (by row id)
T = TypeVar("T")
Versions = Sequence[str] | None  # the schema versions to check; None: every one
Found = dict[str, list[T]]  # schema version -> what breaks the invariant there (only versions with violations)


def items_without_evidence(
    con: duckdb.DuckDBPyConnection, versions: Versions = None, shard: Shard = ALL_DOCUMENTS
) -> Found[str]:
    """Machine items asserting a value with no evidence row (a null placeholder awaiting review is the exception).

    A person may fill or settle a placeholder: the value is then theirs (audited), not the extractor's claim.
    """
    scope, params = _among("i.schema_version", versions)
    rows = con.execute(
        f"""SELECT i.schema_version, i.item_id FROM extracted_items i
           WHERE {scope} AND {in_shard_sql(shard, "i.doc_id")} AND i.extracted_by <> 'human'
             AND NOT EXISTS (SELECT 1 FROM evidence e WHERE e.item_id = i.item_id)
             AND NOT (i.status = 'needs_review' AND json_extract_string(i.value, '$.value') IS NULL
                      AND json_exists(i.value, '$.value'))
           ORDER BY ALL""",
        params,
    ).fetchall()
    return _by_version(rows)


def quote_mismatches(
    con: duckdb.DuckDBPyConnection, versions: Versions = None, shard: Shard = ALL_DOCUMENTS
) -> Found[str]:
    """Evidence whose quote is not exactly raw_documents.text[char_start:char_end] (Python slicing).

    Every row is looked at on every run, but cheaply: a row whose fingerprint (`checked_hash`, set when its quote was
    verified as it was stored) still equals the one its quote, offsets and document give now is unchanged since, and
    no text is read for it. The other rows (changed, written by another writer, or on a DuckLake catalog, which keeps
    no fingerprints) are compared a few hundred documents at a time, so the check never holds every text at once:
    DuckDB compares each quote with its slice (`substring` counts code points, as Python slices), and the rows it
    finds different, and only those, are compared again in Python, which decides.
    """
    candidates = unverified_quotes(con, versions, shard)
    docs = sorted(candidates)
    found: list[tuple[str, str]] = []
    for start in range(0, len(docs), CHECK_BATCH):
        chunk = docs[start : start + CHECK_BATCH]
        rows = con.execute(
            """SELECT e.schema_version, e.evidence_id, r.text, e.quote, e.char_start, e.char_end FROM evidence e
               LEFT JOIN (SELECT doc_id, text FROM raw_documents WHERE doc_id IN (SELECT unnest(?))) r USING (doc_id)
               WHERE e.evidence_id IN (SELECT unnest(?))
                 AND (r.text IS NULL OR e.quote IS NULL OR e.quote = '' OR e.char_start < 0 OR e.char_end < e.char_start
                      OR substring(r.text, e.char_start + 1, e.char_end - e.char_start) IS DISTINCT FROM e.quote)""",
            [chunk, [evidence_id for doc_id in chunk for evidence_id in candidates[doc_id]]],
        ).fetchall()
        found += [
            (version, eid)
            for version, eid, text, quote, begin, end in rows
            if text is None or text[begin:end] != quote or not quote
        ]
    return _by_version(sorted(found))


def unverified_quotes(
    con: duckdb.DuckDBPyConnection, versions: Versions = None, shard: Shard = ALL_DOCUMENTS
) -> dict[str, list[str]]:
    """The evidence rows the quote check must compare with their text, by document: those whose fingerprint does not
    hold (every row on a DuckLake catalog, which keeps none)."""
    scope, params = _among("e.schema_version", versions)
    scope = f"{scope} AND {in_shard_sql(shard, 'e.doc_id')}"
    candidates: dict[str, list[str]] = {}
    if on_lake(con):
        listed = con.execute(f"SELECT e.doc_id, e.evidence_id FROM evidence e WHERE {scope}", params).fetchall()
    else:  # the documents' fingerprints a range of row ids at a time (`_row_chunks`); evidence of no document: all
        listed = con.execute(
            "SELECT e.doc_id, e.evidence_id FROM evidence e "
            f"WHERE {scope} AND NOT EXISTS (SELECT 1 FROM raw_documents r WHERE r.doc_id = e.doc_id)",
            params,
        ).fetchall()
        listed += _row_chunks(
            con,
            "raw_documents",
            lambda rows: (
                f"""SELECT e.doc_id, e.evidence_id FROM evidence e
                JOIN (SELECT doc_id, {DOCUMENT_FINGERPRINT} AS fingerprint FROM raw_documents WHERE {rows}) r
                USING (doc_id)
                WHERE {scope} AND e.checked_hash IS DISTINCT FROM {QUOTE_FINGERPRINT}"""
            ),
            params,
        )
    for doc_id, evidence_id in listed:
        candidates.setdefault(doc_id, []).append(evidence_id)
    return candidates


def confidence_out_of_band(
    con: duckdb.DuckDBPyConnection, schemas: Sequence[SchemaVersion], shard: Shard = ALL_DOCUMENTS
) -> Found[tuple[str, str, float]]:
    """Machine-made items whose confidence lies outside their extractor's band (and 1.0 never).

    A required field's null placeholder has no evidence and no confidence to speak of (0.0): not checked.
    DuckDB keeps the items outside their bands (each version's bands given as constants), and Python decides on
    those alone: fetching every machine item to compare in Python held 21 MB of rows at 32 k documents, the peak of
    the run's process at the end of a pass.
    """
    by_key = {schema.key: schema for schema in schemas}
    bands = [
        (key, by, band.low, band.high)
        for key, schema in by_key.items()
        for by, band in (("heuristic", schema.heuristic_band), ("model", schema.model_band))
    ]
    if not bands:
        return {}
    rows = con.execute(
        f"""SELECT i.schema_version, i.item_id, i.extracted_by, i.confidence FROM extracted_items i
           JOIN (VALUES {", ".join(["(?, ?, ?, ?)"] * len(bands))}) b(schema_version, extracted_by, low, high)
             ON i.schema_version = b.schema_version AND i.extracted_by = b.extracted_by
           WHERE (i.confidence NOT BETWEEN b.low AND b.high OR i.confidence >= 1.0)
             AND {in_shard_sql(shard, "i.doc_id")}
             AND EXISTS (SELECT 1 FROM evidence e WHERE e.item_id = i.item_id)
           ORDER BY ALL""",
        [value for band in bands for value in band],
    ).fetchall()

    def outside(version: str, by: str, confidence: float) -> bool:
        schema = by_key[version]
        band = schema.heuristic_band if by == "heuristic" else schema.model_band
        return not band.contains(confidence) or confidence >= 1.0

    return _by_version((v, (i, by, c)) for v, i, by, c in rows if outside(v, by, c))


def documents_over_cap(
    con: duckdb.DuckDBPyConnection, schemas: Sequence[SchemaVersion], shard: Shard = ALL_DOCUMENTS
) -> Found[tuple[str, int]]:
    """Documents with more items than their schema's `max_items` (the cap binds extractors: items a reviewer added
    are not counted)."""
    caps = {schema.key: schema.max_items for schema in schemas}
    rows = con.execute(
        f"""SELECT i.schema_version, i.doc_id, count(*) AS n
           FROM extracted_items i JOIN (SELECT unnest(?) AS version, unnest(?) AS cap) c ON c.version = i.schema_version
           WHERE i.added_by IS NULL AND {in_shard_sql(shard, "i.doc_id")}
           GROUP BY i.schema_version, i.doc_id, c.cap HAVING count(*) > c.cap ORDER BY ALL""",
        [list(caps), list(caps.values())],
    ).fetchall()
    return _by_version((version, (doc_id, int(n))) for version, doc_id, n in rows)


def review_status_mismatches(
    con: duckdb.DuckDBPyConnection, versions: Versions = None, shard: Shard = ALL_DOCUMENTS
) -> Found[str]:
    """Machine-owned items whose status disagrees with their review reasons."""
    scope, params = _among("schema_version", versions)
    rows = con.execute(
        f"""SELECT schema_version, item_id FROM extracted_items
           WHERE {scope} AND {in_shard_sql(shard, "doc_id")} AND extracted_by <> 'human'
             AND ((status = 'draft' AND json_array_length(review_reasons) > 0)
               OR (status = 'needs_review' AND json_array_length(review_reasons) = 0))
           ORDER BY ALL""",
        params,
    ).fetchall()
    return _by_version(rows)


def cross_tenant_evidence(
    con: duckdb.DuckDBPyConnection, versions: Versions = None, shard: Shard = ALL_DOCUMENTS
) -> Found[str]:
    """Evidence or items whose tenant differs from their document's: tenant scope must never widen."""
    scope, params = _among("e.schema_version", versions)
    rows = con.execute(
        f"""SELECT e.schema_version, e.evidence_id FROM evidence e JOIN extracted_items i USING (item_id)
           JOIN raw_documents r ON r.doc_id = e.doc_id
           WHERE {scope} AND {in_shard_sql(shard, "e.doc_id")}
             AND (e.tenant_id <> r.tenant_id OR i.tenant_id <> r.tenant_id OR i.doc_id <> e.doc_id)
           ORDER BY ALL""",
        params,
    ).fetchall()
    return _by_version(rows)


def _among(column: str, versions: Versions) -> tuple[str, list[object]]:
    """A condition keeping `versions` (every version when None) and its parameters."""
    return ("TRUE", []) if versions is None else (f"{column} IN (SELECT unnest(?))", [list(versions)])


def _by_version(found: Iterable[tuple[str, T]]) -> Found[T]:
    """(version, violation) pairs grouped by version."""
    grouped: Found[T] = {}
    for version, violation in found:
        grouped.setdefault(version, []).append(violation)
    return grouped


def unmasked_pii(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """Scrubbed documents in which an e-mail, card or phone number their tenant's policy masks can still be found.

    The scrubber's own detectors, region and kinds decide, on the raw text: what it keeps by rule is no finding.
    Every row is looked at on every run, but cheaply: a text whose fingerprint (`checked_hash`, recomputed in
    SQL over every row) is still the one stored with the text the scrub checked has not changed since and is
    neither read nor searched. Any other text (changed, or written before fingerprints) is compared with the hash
    of the checked text (`checked_sha256`) and searched when that differs too.
    """
    changed = [
        row[0]
        for row in _row_chunks(
            con,
            "scrubbed_documents",
            lambda rows: (
                "SELECT doc_id FROM scrubbed_documents "
                f"WHERE checked_hash IS DISTINCT FROM {SCRUBBED_FINGERPRINT} AND {rows}"
            ),
        )
    ]
    if not changed:
        return []
    from extraction_assets.lib.pii.scrubber import find_unmasked  # the detectors load when a text must be searched

    cursor = con.execute(
        f"""SELECT s.doc_id, s.text, s.policy, s.offset_map, r.text, s.checked_sha256 FROM scrubbed_documents s
           LEFT JOIN (SELECT doc_id, text FROM raw_documents WHERE {by_rowid(con, "raw_documents", changed)}) r
           USING (doc_id)
           WHERE {by_rowid(con, "scrubbed_documents", changed, alias="s")}
             AND (s.checked_sha256 IS NULL OR s.checked_sha256 <> sha256(s.text)) ORDER BY s.doc_id""",
        [changed, changed],
    )
    found = []
    for doc_id, text, policy_json, offsets_json, raw, checked in _streamed(cursor):
        if checked is not None and checked == text_sha256(text):
            continue  # DuckDB's hash is the same as Python's; this says so again
        policy = json.loads(policy_json) if policy_json else {}
        kinds = frozenset(policy["kinds"]) if "kinds" in policy else None
        offset_map = OffsetMap.model_validate(json.loads(offsets_json)) if offsets_json else None
        detections = find_unmasked(text, region=policy.get("region"), kinds=kinds, raw=raw, offset_map=offset_map)
        found += [(doc_id, d.kind) for d in detections]
    return found


def ids_not_content_hashes(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Documents whose id is not the tenant-scoped hash of their kind, text and record identity.

    Every row is looked at on every run, but cheaply: a row stored with a fingerprint (`checked_hash`, set when
    its id was verified as it was stored) that its id and content still match is unchanged since it was verified,
    and skipped. Any other row (changed since, rewritten by another writer, stored before fingerprints) has its
    id recomputed in Python.
    """
    rows = _row_chunks(
        con,
        "raw_documents",
        lambda rows: (
            "SELECT doc_id, tenant_id, kind, text, metadata FROM raw_documents "
            f"WHERE checked_hash IS DISTINCT FROM {DOCUMENT_FINGERPRINT} AND {rows}"
        ),
    )
    return [doc_id for doc_id, *content in rows if not is_content_hash(doc_id, *content)]


def _row_chunks(
    con: duckdb.DuckDBPyConnection, table: str, select: Callable[[str], str], params: Sequence[object] = ()
) -> Iterator[tuple[Any, ...]]:
    """The rows of `select(rows)` (a statement whose condition on `table` includes `rows`), streamed, CHECK_ROWS row
    ids of the table at a time: one statement over the whole table decoded its texts far ahead of the rows it kept
    (the document-id check held 70 MB of DuckDB memory at 32 k documents, and ran out of a 64 MB limit at 8 k);
    a range of row ids is a zone filter, so each statement holds what its rows hold (about 2 MB). On a lake, whose
    row ids are not dense, one statement."""
    if on_lake(con):
        yield from _streamed(con.execute(select("TRUE"), params))
        return
    last = con.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0]  # type: ignore[index]
    for start in range(0, -1 if last is None else last + 1, CHECK_ROWS):
        yield from _streamed(con.execute(select(f"rowid BETWEEN {start:d} AND {start + CHECK_ROWS - 1:d}"), params))


def _streamed(cursor: duckdb.DuckDBPyConnection) -> Iterator[tuple[Any, ...]]:
    """A query's rows, CHECK_BATCH at a time, so a check over every document never holds every text in Python."""
    while rows := cursor.fetchmany(CHECK_BATCH):
        yield from rows
