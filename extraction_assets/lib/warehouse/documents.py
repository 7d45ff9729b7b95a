"""The ingest side of the warehouse: raw documents, their scrubbed text and vault entries, dead letters."""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import TypeAdapter

from extraction_assets.lib.models import DeadLetter, Document, ScrubbedDocument, Turn
from extraction_assets.lib.offsets import OffsetMap
from extraction_assets.lib.warehouse.backend import on_lake, retry_conflicts
from extraction_assets.lib.warehouse.connection import (
    id_list,
    insert_rows,
    merge_rows,
    now,
    rows_as_dicts,
    to_json,
    transaction,
)
from extraction_assets.lib.warehouse.ocr import ocr_word_rows

# duckdb loads when a connection opens, and the PII package (phonenumbers, cryptography) with the scrub step, not
# with the code location
if TYPE_CHECKING:
    import duckdb

    from extraction_assets.lib.pii.vault import SealedMapping

TOO_SLOW = "ScrubTooSlow"  # the reason a scrub that outlasted its budget starts with (`pii.deadline`)
NOT_SCRUBBED = "[not scrubbed: hidden]"  # a document without a scrubbed row shows nothing of its text


def stored_sources(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> dict[str, str]:
    """Which of these documents are stored already, with the file each was first read from."""
    with id_list(con, doc_ids) as (wanted, ids):
        return dict(
            con.execute(f"SELECT doc_id, source_uri FROM raw_documents WHERE doc_id IN {wanted}", ids).fetchall()
        )


def _raw_count(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT count(*) FROM raw_documents").fetchone()[0])  # type: ignore[index]


class StoredDocument(NamedTuple):
    """A document as its `raw_documents` row (and its OCR words' rows) will be written, made where it was read (a
    worker process): the writer only stores it. `verified`: its id is the content hash of the row's own values."""

    row: dict[str, Any]
    verified: bool
    ocr_words: list[dict[str, Any]]

    @property
    def doc_id(self) -> str:
        return str(self.row["doc_id"])

    @property
    def tenant_id(self) -> str:
        return str(self.row["tenant_id"])

    @property
    def source_uri(self) -> str:
        return str(self.row["source_uri"])

    @property
    def kind(self) -> str:
        return str(self.row["kind"])


def raw_document_row(doc: Document) -> dict[str, Any]:
    """A document as its `raw_documents` row (without `ingested_at`, stamped by whoever writes it)."""
    return {
        "doc_id": doc.doc_id,
        "tenant_id": doc.tenant_id,
        "source_uri": doc.source_uri,
        "kind": doc.kind,
        "text": doc.text,
        "turns": to_json([t.model_dump() for t in doc.turns]),
        "doc_date": doc.doc_date,
        "title": doc.title,
        "metadata": to_json(doc.metadata),
        "char_count": len(doc.text),
    }


def stored_document(doc: Document) -> StoredDocument:
    row = raw_document_row(doc)
    verified = is_content_hash(doc.doc_id, doc.tenant_id, doc.kind, doc.text, row["metadata"])
    return StoredDocument(row, verified, ocr_word_rows(doc))


@retry_conflicts
def insert_documents(con: duckdb.DuckDBPyConnection, docs: Sequence[Document | StoredDocument]) -> int:
    """Insert documents not yet stored, in a transaction of their own; returns how many were new
    (`_merge_documents`)."""
    if not docs:
        return 0
    with transaction(con):
        return _merge_documents(con, docs)


def _merge_documents(con: duckdb.DuckDBPyConnection, docs: Sequence[Document | StoredDocument]) -> int:
    """Insert documents not yet stored, in the caller's transaction; returns how many were new.

    Each new row whose id is its content hash (recomputed from the values written) is stored with its fingerprint
    (`checked_hash`), so the id check need not recompute it while the row stays as written.
    """
    if not docs:
        return 0
    stamp = now()
    stored = [d if isinstance(d, StoredDocument) else stored_document(d) for d in docs]
    rows = [{**d.row, "ingested_at": stamp} for d in stored]
    written: dict[str, StoredDocument] = {}
    for doc in stored:  # what the merge writes for a key given twice: its first row
        written.setdefault(doc.doc_id, doc)
    before = _raw_count(con)
    merge_rows(con, "raw_documents", rows)
    merge_rows(con, "ocr_words", [word for doc in stored for word in doc.ocr_words])  # an image's word boxes
    inserted = _raw_count(con) - before  # this transaction's own rows: another writer's are not counted
    if inserted == len(written) and not on_lake(con):  # every key is a row just written, as `written` holds it
        stamp_verified_documents(con, [doc_id for doc_id, doc in written.items() if doc.verified])
    return inserted


# A DuckLake catalog stores no fingerprints: DuckLake gives the rows a transaction inserts and then updates the
# transaction's own row ids (after the commit two rows share one), which breaks every later row-id fetch. Its rows
# are verified in full on every run, as before fingerprints.
# Fingerprints of what an ingest check verifies, in SQL: DuckDB's 64-bit `hash` costs about a tenth of `sha256`
# over the same text, so recomputing it over every row is cheap. A row whose fingerprint still equals the one
# stored with it (`checked_hash`) has not changed since it was verified; any change to a fingerprinted column
# (barring a 64-bit collision) makes them differ, and the row is verified again.
DOCUMENT_FINGERPRINT = "hash(doc_id, tenant_id, kind, text, metadata)"
SCRUBBED_FINGERPRINT = "hash(text)"
# An evidence row's: its quote and offsets, and its document's own fingerprint (`r.fingerprint`, DOCUMENT_FINGERPRINT
# of the row it quotes), so a changed document makes every quote of it be verified again.
QUOTE_FINGERPRINT = "hash(e.quote, e.char_start, e.char_end, r.fingerprint)"


def is_content_hash(doc_id: str, tenant_id: str, kind: str, text: str, metadata: str | None) -> bool:
    """Whether a stored document's id is the tenant-scoped hash of its kind, text and record identity."""
    return Document.make_id(tenant_id, kind, text, json.loads(metadata) if metadata else None) == doc_id


def stamp_verified_documents(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> None:
    """Fingerprint these rows as they are stored: only rows the caller's transaction just wrote, with values whose
    id it verified (a stamp must describe a row that passed; a row that did not gets none, and the check finds it).
    """
    if doc_ids:
        con.execute(
            f"UPDATE raw_documents SET checked_hash = {DOCUMENT_FINGERPRINT} "
            f"WHERE {by_rowid(con, 'raw_documents', doc_ids)}",
            [list(doc_ids)],
        )


def masked_letter(letter: DeadLetter) -> DeadLetter:
    """What a letter says is read in the UI, the run log and the command line: a reason or detail that quotes a
    document is masked like any text shown (`pii.masked`), and its id is that of the masked letter. The path stays as
    it is: it locates the file, in the raw zone beside `raw_documents`."""
    from extraction_assets.lib.pii import masked, masked_value  # the detectors load with the first letter, not the code

    return letter.model_copy(update={"reason": masked(letter.reason), "detail": masked_value(letter.detail)})


def insert_dead_letters(con: duckdb.DuckDBPyConnection, letters: Iterable[DeadLetter]) -> None:
    """Dead letters, masked as they are written; the same failure again is the same row."""
    stamp = now()
    rows = [
        {
            "dead_letter_id": d.dead_letter_id,
            "stage": d.stage,
            "tenant_id": d.tenant_id,
            "source_uri": d.source_uri,
            "doc_id": d.doc_id,
            "schema_version": d.schema_version,
            "reason": d.reason,
            "detail": to_json(d.detail),
            "first_seen_at": stamp,
        }
        for d in map(masked_letter, letters)
    ]
    merge_rows(con, "dead_letters", rows)


@retry_conflicts
def record_dead_letters(con: duckdb.DuckDBPyConnection, letters: Iterable[DeadLetter]) -> int:
    """Store failures; the same failure seen again is not a new row. Returns how many were new (none asks the
    warehouse nothing: each batch of ingest and of the scrub records its failures, most often none)."""
    letters = list(letters)
    if not letters:
        return 0
    with transaction(con):
        return _merge_dead_letters(con, letters)


def _merge_dead_letters(con: duckdb.DuckDBPyConnection, letters: Sequence[DeadLetter]) -> int:
    """`record_dead_letters` in the caller's transaction."""
    if not letters:
        return 0
    before = int(con.execute("SELECT count(*) FROM dead_letters").fetchone()[0])  # type: ignore[index]
    insert_dead_letters(con, letters)
    return int(con.execute("SELECT count(*) FROM dead_letters").fetchone()[0]) - before  # type: ignore[index]


# a document's turns are parsed and validated in one call (pydantic's JSON parser), not one call per turn
_TURNS: TypeAdapter[list[Turn]] = TypeAdapter(list[Turn])
TURNS_KEPT = 128  # documents whose parsed turns are kept (an incremental pass's new transcripts, a few MB)


@functools.lru_cache(maxsize=TURNS_KEPT)
def parsed_turns(turns_json: str) -> tuple[Turn, ...]:
    """A document's turns from their stored JSON, kept for the next reader of the same JSON: routing and extraction
    under each schema version read the same new documents (an incremental pass of the bench inbox parsed 21
    documents' turns 110 times: 0.16 s in a profile of its 2.7 s). Keyed by the JSON itself, so a changed document
    is parsed anew; a transcript's 1,000 turns cost about 1 ms to parse."""
    return tuple(_TURNS.validate_json(turns_json))


def document_from_row(row: dict[str, Any]) -> Document:
    return Document(
        doc_id=row["doc_id"],
        tenant_id=row["tenant_id"],
        source_uri=row["source_uri"],
        kind=row["kind"],
        text=row["text"],
        turns=list(parsed_turns(row["turns"])),
        doc_date=row["doc_date"],
        title=row["title"],
        metadata=json.loads(row["metadata"]),
    )


def load_documents(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> list[Document]:
    return [document_from_row(r) for r in document_rows(con, doc_ids)]


def document_sizes(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> dict[str, int]:
    """Each document's text length (characters), by id: what a batch of them holds in memory."""
    return dict(
        con.execute(
            f"SELECT doc_id, char_count FROM raw_documents WHERE {by_rowid(con, 'raw_documents', doc_ids)}",
            [list(doc_ids)],
        ).fetchall()
    )


def texts_to_scrub(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> list[tuple[str, str, str, str]]:
    """(doc_id, tenant_id, source_uri, text) of these documents, in the order given: what a scrub reads."""
    order = {doc_id: n for n, doc_id in enumerate(doc_ids)}
    rows = con.execute(
        "SELECT doc_id, tenant_id, source_uri, text FROM raw_documents "
        f"WHERE {by_rowid(con, 'raw_documents', doc_ids)}",
        [list(doc_ids)],
    ).fetchall()
    return sorted(rows, key=lambda row: order[row[0]])


def document_rows(
    con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str], rowids: Mapping[str, int] | None = None
) -> list[dict[str, Any]]:
    """The raw rows of these documents as stored (`document_from_row` makes each a Document): what a worker
    process is sent, which parses them itself. `rowids`: where planning found them (`_rows_at`)."""
    if not doc_ids:
        return []
    rows = _rows_at(con, "SELECT * FROM raw_documents WHERE {}", "raw_documents", doc_ids, rowids)
    return sorted(rows, key=lambda row: row["doc_id"])  # sorted here: a sort in DuckDB holds every text in memory


def _rows_at(
    con: duckdb.DuckDBPyConnection, sql: str, table: str, doc_ids: Sequence[str], rowids: Mapping[str, int] | None
) -> list[dict[str, Any]]:
    """The rows of `sql` (its filter `{}`: `by_rowid`) for these documents, read at the row ids planning found them
    at (`rowids`, from `window_work`) without looking them up; should one have moved since (rare: a checkpoint's
    compaction, a row written again), they are looked up and read again, so no row is missed."""
    rows = rows_as_dicts(con, sql.format(by_rowid(con, table, doc_ids, known=rowids)), [list(doc_ids)])
    if rowids is not None and all(d in rowids for d in doc_ids) and len(rows) < len(set(doc_ids)):
        rows = rows_as_dicts(con, sql.format(by_rowid(con, table, doc_ids)), [list(doc_ids)])
    return rows


# Work lists (documents to scrub, route or extract) come in the order the raw rows are stored (`r` is
# raw_documents), not by id: a batch read from a fresh connection then touches a few adjacent storage blocks of
# the text columns instead of nearly all of them (128 documents of the bench inbox: ~35 ms, against ~160 ms in id
# order, about what the whole table costs). Scrubbed rows are written in that order, so they are adjacent as well.
STORED_ORDER = "r.rowid"


def stored_windows(con: duckdb.DuckDBPyConnection, size: int) -> list[range]:
    """The raw rows' ids in windows of `size`, in `STORED_ORDER`: a work list planned a window at a time holds what
    one window needs, whatever the warehouse (`in_window` keeps a statement to one)."""
    last = con.execute("SELECT max(rowid) FROM raw_documents").fetchone()[0]  # type: ignore[index]
    return [] if last is None else [range(low, min(low + size, last + 1)) for low in range(0, last + 1, size)]


def in_window(window: range | None) -> str:
    """A filter keeping a statement to a window of raw rows (`r` is raw_documents), as constants: read as a zone
    filter, so the scan reads the window's rows alone; none for None."""
    return "" if window is None else f" AND r.rowid BETWEEN {window.start:d} AND {window.stop - 1:d}"


def by_rowid(
    con: duckdb.DuckDBPyConnection,
    table: str,
    ids: Sequence[str],
    key: str = "doc_id",
    alias: str = "",
    known: Mapping[str, int] | None = None,
) -> str:
    """A filter on `<key> IN (the ids parameter)` that DuckDB reads as a fetch of those rows alone.

    Filtered on `doc_id` itself, a scan that keeps a few rows fetches their text row by row from its compressed
    segments: 21 documents cost four times the whole table. A semi-join on the row ids (looked up in the key column)
    still decoded every row between the batch's first and last row id: a batch of transcripts spread over 1,449
    rows of a 32 k warehouse held 51 MB, more as the warehouse grows. So the row ids are looked up first (the key
    column only), and the filter names them as ranges of constants, which the scan reads as a zone filter: only the
    batch's rows are read (about 1 MB whatever the warehouse). The key's own test (`list_contains`, no join) keeps
    the filter exact should a row id have moved since. Row ids `known` for every id (read with the batch's work
    list) are not looked up again: a row that moved since is then missing from what the filter reads.
    """
    if known is not None and all(i in known for i in ids):
        rowids = sorted(known[i] for i in ids)
    else:
        with id_list(con, ids) as (wanted, params):
            found = con.execute(f"SELECT rowid FROM {table} WHERE {key} IN {wanted}", params).fetchall()
        rowids = sorted(row[0] for row in found)
    ranges: list[list[int]] = []
    for rowid in rowids:
        if ranges and rowid == ranges[-1][1] + 1:
            ranges[-1][1] = rowid
        else:
            ranges.append([rowid, rowid])
    column, key = (f"{alias}.rowid", f"{alias}.{key}") if alias else ("rowid", key)
    spans = " OR ".join(f"{column} BETWEEN {low:d} AND {high:d}" for low, high in ranges) or "false"
    return f"({spans}) AND list_contains(CAST(? AS VARCHAR[]), {key})"


def tenant_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in con.execute("SELECT DISTINCT tenant_id FROM raw_documents ORDER BY 1").fetchall()]


def documents_to_scrub(con: duckdb.DuckDBPyConnection, version_by_tenant: Mapping[str, str]) -> list[str]:
    """Documents never scrubbed, or scrubbed by another scrubber version than their tenant's policy gives.

    A tenant missing from the mapping has no known version, so its documents are always pending. A document whose
    scrub outlasted its budget under the same scrubber version (its dead letter says so) is not pending: it would
    cost every run the budget again; a new scrubber or policy version tries it again. They come in `STORED_ORDER`,
    so the scrubbed rows are stored in the raw rows' order too.
    """
    tenants = list(version_by_tenant)
    return [
        row[0]
        for row in con.execute(
            f"""SELECT r.doc_id FROM raw_documents r
               LEFT JOIN scrubbed_documents s USING (doc_id)
               LEFT JOIN (SELECT unnest(?) AS tenant_id, unnest(?) AS version) v ON v.tenant_id = r.tenant_id
               WHERE (s.doc_id IS NULL OR v.version IS NULL OR s.scrubber_version <> v.version)
                 AND NOT EXISTS (
                     SELECT 1 FROM dead_letters d
                     WHERE d.doc_id = r.doc_id AND d.stage = 'scrub' AND d.reason LIKE '{TOO_SLOW}:%'
                       AND json_extract_string(d.detail, '$.scrubber_version') = v.version)
               ORDER BY {STORED_ORDER}""",
            [tenants, [version_by_tenant[t] for t in tenants]],
        ).fetchall()
    ]


def scrubbed_row(r: ScrubbedDocument) -> dict[str, Any]:
    """A scrubbed document as its `scrubbed_documents` row (its stamp aside): made where it was scrubbed (a worker
    process), so the writer only stores it. The hash of the text the scrub checked is stored with it."""
    return {
        "doc_id": r.doc_id,
        "tenant_id": r.tenant_id,
        "text": r.text,
        "offset_map": to_json(r.offset_map.model_dump()),  # the same text as every other JSON column
        "pii_counts": to_json(r.pii_counts),
        "pii_total": sum(r.pii_counts.values()),
        "scrubber_version": r.scrubber_version,
        "policy": to_json(r.policy),
        "checked_sha256": text_sha256(r.text),
    }


@retry_conflicts
def upsert_scrubbed(
    con: duckdb.DuckDBPyConnection,
    rows: Sequence[ScrubbedDocument | dict[str, Any]],
    sealed: Sequence[SealedMapping] = (),
) -> None:
    """Store scrubbed documents (or their rows, `scrubbed_row`) and, in the same transaction, their vault entries.

    A re-scrubbed document's old vault entry is removed with it, so an entry always matches the stored text.
    The rows come from the scrub, which checked each text for unmasked values: the hash of that checked text
    is stored with it (`checked_sha256`), and its fingerprint (`checked_hash`).
    """
    if not rows:
        return
    stamp = now()
    values = [{**(r if isinstance(r, dict) else scrubbed_row(r)), "scrubbed_at": stamp} for r in rows]
    doc_ids = [v["doc_id"] for v in values]
    with transaction(con):
        merge_rows(con, "scrubbed_documents", values, update=[c for c in values[0] if c not in ("doc_id", "tenant_id")])
        if not on_lake(con):  # the text just written is the one the scrub checked: its fingerprint
            con.execute(
                f"UPDATE scrubbed_documents SET checked_hash = {SCRUBBED_FINGERPRINT} "
                f"WHERE {by_rowid(con, 'scrubbed_documents', doc_ids)}",
                [doc_ids],
            )
        con.execute("DELETE FROM pii_vault WHERE doc_id IN (SELECT unnest(?))", [doc_ids])
        insert_rows(con, "pii_vault", [entry.row() for entry in sealed])


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def masked_quotes(con: duckdb.DuckDBPyConnection, spans: Sequence[tuple[str, str, int, int]]) -> dict[str, str]:
    """Raw-text spans `(key, doc_id, char_start, char_end)` as the scrubbed text shows them, by key: what a person
    reads of evidence (the review queue, the UI's previews), never its raw quote.

    Only the offset maps and the cut quotes are read: loading every listed document's whole scrubbed text to cut one
    quote from each was most of a fresh `review list`'s time in the warehouse (megabytes for a page of 200 rows).
    """
    doc_ids = sorted({doc_id for _, doc_id, _, _ in spans})
    if not doc_ids:
        return {}
    maps = {
        doc_id: OffsetMap.model_validate_json(raw)
        for doc_id, raw in con.execute(
            f"SELECT doc_id, offset_map FROM scrubbed_documents WHERE {by_rowid(con, 'scrubbed_documents', doc_ids)}",
            [doc_ids],
        ).fetchall()
    }
    quotes = {key: NOT_SCRUBBED for key, doc_id, _, _ in spans if doc_id not in maps}
    cuts = [(key, doc_id, *maps[doc_id].to_scrubbed(start, end)) for key, doc_id, start, end in spans if doc_id in maps]
    if cuts:
        keys, docs, starts, ends = (list(column) for column in zip(*cuts, strict=True))
        quotes.update(
            con.execute(
                f"""SELECT c.key, substr(s.text, c.start + 1, c.stop - c.start)
                    FROM (SELECT unnest(?) AS key, unnest(?) AS doc_id, unnest(?) AS start, unnest(?) AS stop) c
                    JOIN (SELECT doc_id, text FROM scrubbed_documents
                          WHERE {by_rowid(con, "scrubbed_documents", sorted(set(docs)))}) s
                    USING (doc_id)""",
                [keys, docs, starts, ends, sorted(set(docs))],
            ).fetchall()
        )
    return quotes


def load_scrubbed(con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str]) -> dict[str, ScrubbedDocument]:
    return {r["doc_id"]: scrubbed_from_row(r) for r in scrubbed_rows(con, doc_ids)}


def scrubbed_rows(
    con: duckdb.DuckDBPyConnection, doc_ids: Sequence[str], rowids: Mapping[str, int] | None = None
) -> list[dict[str, Any]]:
    """The scrubbed rows of these documents as stored (`scrubbed_from_row` makes each a ScrubbedDocument);
    `rowids`: where planning found them (`_rows_at`)."""
    if not doc_ids:
        return []
    return _rows_at(
        con,
        "SELECT doc_id, tenant_id, text, offset_map, pii_counts, scrubber_version FROM scrubbed_documents WHERE {}",
        "scrubbed_documents",
        doc_ids,
        rowids,
    )


def scrubbed_from_row(row: dict[str, Any]) -> ScrubbedDocument:
    return ScrubbedDocument.model_validate(
        {
            **row,
            "offset_map": OffsetMap.model_validate_json(row["offset_map"]),
            "pii_counts": json.loads(row["pii_counts"]),
        }
    )


class FileStamp(NamedTuple):
    """An inbox file as it was read: size, modification and change times (ctime: None in rows older than the column),
    and the digest of its content when the stamp alone could not tell a later edit (`stages.ingest`)."""

    size: int
    mtime_ns: int
    ctime_ns: int | None = None
    content_sha256: str | None = None


def file_stamps(con: duckdb.DuckDBPyConnection) -> dict[str, FileStamp]:
    """Every inbox file's stamp when it was last read, by its path under the inbox."""
    rows = con.execute("SELECT source_uri, size, mtime_ns, ctime_ns, content_sha256 FROM inbox_files").fetchall()
    return {uri: FileStamp(*stamp) for uri, *stamp in rows}


@retry_conflicts
def record_file_stamps(con: duckdb.DuckDBPyConnection, stamps: Mapping[str, FileStamp]) -> None:
    """Remember the files just read (after their documents and dead letters are stored), so an unchanged file
    is not read again; none asks the warehouse nothing."""
    if stamps:
        with transaction(con):
            _merge_file_stamps(con, stamps)


def _merge_file_stamps(con: duckdb.DuckDBPyConnection, stamps: Mapping[str, FileStamp]) -> None:
    stamp = now()
    rows = [
        {"source_uri": uri, "tenant_id": uri.split("/")[0], **file._asdict(), "read_at": stamp}
        for uri, file in stamps.items()
    ]
    merge_rows(con, "inbox_files", rows, update=["size", "mtime_ns", "ctime_ns", "content_sha256", "read_at"])


@retry_conflicts
def store_ingest_batch(
    con: duckdb.DuckDBPyConnection,
    docs: Sequence[Document | StoredDocument],
    letters: Sequence[DeadLetter],
    stamps: Mapping[str, FileStamp],
) -> tuple[int, int]:
    """A batch of ingest in one transaction: its new documents, its dead letters, and the stamps of the files whose
    records are all stored with it (a file is stamped only with the last of its documents, so a crash before reads
    it again); (documents inserted, dead letters new). One commit, not three: each is a write to disk."""
    if not (docs or letters or stamps):
        return 0, 0
    with transaction(con):
        inserted = _merge_documents(con, docs)
        new_letters = _merge_dead_letters(con, letters)
        if stamps:
            _merge_file_stamps(con, stamps)
    return inserted, new_letters
