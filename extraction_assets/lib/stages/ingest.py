"""Ingest: the inbox's new and changed files become raw_documents, a batch at a time; what cannot be read, and a
copy of a document already stored, becomes a dead letter."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.models import DeadLetter, Document, ReadFailure
from extraction_assets.lib.parallel import in_order, workers_for
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.warehouse import (
    StoredDocument,
    batched,
    file_stamps,
    insert_documents,
    iter_batches,
    record_dead_letters,
    record_file_stamps,
    row_count,
    stored_document,
    stored_sources,
)

INGEST_BATCH = 200
READ_CHUNK = 32  # files a worker reads at a time: enough work to outweigh sending it, little to hold
READ_CHUNK_BYTES = 4 * 1024 * 1024  # and at most this many bytes of them (a large file is a chunk of its own)

if TYPE_CHECKING:
    from extraction_assets.lib.readers import FileRead


@dataclass
class IngestReport:
    """What one ingest did: the figures its materialization shows."""

    documents_read: int = 0
    inserted: int = 0
    new_by_kind: Counter[str] = field(default_factory=Counter)
    unreadable: list[ReadFailure] = field(default_factory=list)  # warned about once: an unchanged file is not read
    skipped: int = 0  # hidden files, the inbox's README: counted, never read
    files_read: int = 0
    files_unchanged: int = 0
    duplicates: int = 0
    new_dead_letters: int = 0
    total: int = 0  # raw_documents rows after the run

    @property
    def skipped_known(self) -> int:
        return self.documents_read - sum(self.new_by_kind.values())


def _file_size(entry: FileRead | ReadFailure) -> int:
    return 0 if isinstance(entry, ReadFailure) else entry.walked.st_size


def read_to_store(entries: Sequence[FileRead | ReadFailure]) -> list[StoredDocument | ReadFailure]:
    """Planned files read, each document made into the rows it is stored as (in a worker process: the writer only
    stores them)."""
    from extraction_assets.lib.readers import read_planned

    return [stored_document(r) if isinstance(r, Document) else r for r in read_planned(entries)]


def _duplicate(doc: StoredDocument, first_source: str) -> DeadLetter:
    """A copy of a document already read from another file: counted, never stored twice."""
    return DeadLetter(
        stage="duplicate",
        tenant_id=doc.tenant_id,
        source_uri=doc.source_uri,
        doc_id=doc.doc_id,
        reason=f"same document as {first_source}",
    )


def ingest_inbox(
    connect: Connect, inbox: Path, max_file_bytes: int | None, niceness: int | None = None
) -> IngestReport:
    """Read only new and changed files (an unchanged inbox costs a stat per file), store documents not stored yet;
    the files' stamps are recorded last, so a crash before reads them again and loses nothing. Files are read
    `READ_CHUNK` at a time in the process's worker pool when there is more than one chunk (`niceness` below this
    process); this process stores what comes back, in the walk's order."""
    from extraction_assets.lib.readers import FileRead, planned_reads  # pypdf, openpyxl load with a first PDF or xlsx

    report = IngestReport()
    seen: dict[str, str] = {}  # id -> first source: documents are read, stored and let go a batch at a time
    failures: list[ReadFailure] = []
    duplicates: list[DeadLetter] = []
    with connect() as con:
        last_read = file_stamps(con)
    read_now: dict[str, tuple[int, int]] = {}

    def needs_reading(source_uri: str, size: int, mtime_ns: int) -> bool:
        if last_read.get(source_uri) == (size, mtime_ns):
            report.files_unchanged += 1
            return False
        read_now[source_uri] = (size, mtime_ns)
        return True

    planned = list(planned_reads(inbox, max_file_bytes, needs_reading))
    workers = workers_for(sum(isinstance(p, FileRead) for p in planned), READ_CHUNK)
    chunked = batched(planned, READ_CHUNK, _file_size, READ_CHUNK_BYTES)
    chunks = in_order(read_to_store, ((chunk,) for chunk in chunked), workers, niceness)
    for records in iter_batches((record for chunk in chunks for record in chunk), INGEST_BATCH):
        batch: list[StoredDocument] = []
        for record in records:
            if isinstance(record, ReadFailure):
                failures.append(record)
            elif record.doc_id in seen:  # the same document again in this run: the first file wins, the copy counts
                duplicates.append(_duplicate(record, seen[record.doc_id]))
            else:
                seen[record.doc_id] = record.source_uri
                batch.append(record)
        with connect() as con:
            known = stored_sources(con, [d.doc_id for d in batch])
            new_docs = [d for d in batch if d.doc_id not in known]
            report.inserted += insert_documents(con, new_docs)
        duplicates += [
            _duplicate(d, known[d.doc_id]) for d in batch if known.get(d.doc_id, d.source_uri) != d.source_uri
        ]
        report.new_by_kind.update(d.kind for d in new_docs)
    letters = [
        DeadLetter(
            stage="skipped" if f.skipped else "ingest", tenant_id=f.tenant_id, source_uri=f.source_uri, reason=f.reason
        )
        for f in failures
    ] + duplicates
    with connect() as con:
        report.new_dead_letters = record_dead_letters(con, letters)
        record_file_stamps(con, read_now)
        report.total = row_count(con, "raw_documents")
    report.documents_read = len(seen)
    report.unreadable = [f for f in failures if not f.skipped]
    report.skipped = len(failures) - len(report.unreadable)
    report.files_read = len(read_now)
    report.duplicates = len(duplicates)
    return report
