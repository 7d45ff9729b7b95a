"""Ingest: the inbox's new and changed files become raw_documents, a batch at a time; what cannot be read, and a
copy of a document already stored, becomes a dead letter."""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from extraction_assets.lib.models import DeadLetter, Document, ReadFailure
from extraction_assets.lib.parallel import in_order, load_in_workers, settled_at, workers_for
from extraction_assets.lib.stages.connect import Connect
from extraction_assets.lib.warehouse import (
    FileStamp,
    StoredDocument,
    file_stamps,
    iter_batches,
    record_file_stamps,
    row_count,
    store_ingest_batch,
    stored_document,
    stored_sources,
)

INGEST_BATCH = 200
READ_CHUNK = 32  # files a worker reads at a time: enough work to outweigh sending it, little to hold
READ_CHUNK_BYTES = 4 * 1024 * 1024  # and at most this many bytes of them (a large file is a chunk of its own)
# A file written this close to when it was stamped may be written again within the same timestamp (the file system
# keeps them coarser than nanoseconds, two seconds on some), leaving size and times as they were: its stamp keeps the
# content's digest, which the next pass compares instead of trusting the stamp.
RACY_NS = 2_000_000_000
load_in_workers(__name__, "extraction_assets.lib.readers")  # a worker reads files (`read_to_store`)

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
    a file's stamp is recorded with the batch that stores the last of its documents and dead letters, so a crash
    before reads it again and loses nothing, and the ingest holds the stamps of the files in flight alone. Files are
    read `READ_CHUNK` at a time in the process's worker pool when there is more than one chunk (`niceness` below this
    process); this process stores what comes back, in the walk's order."""
    from extraction_assets.lib.readers import planned_reads  # pypdf, openpyxl load with a first PDF or xlsx

    report = IngestReport()
    seen: dict[str, str] = {}  # id -> first source: documents are read, stored and let go a batch at a time
    with connect() as con:
        last_read = file_stamps(con)
    read_now: dict[str, FileStamp] = {}  # files to read not stamped yet: those walked ahead and in flight
    restamped: dict[str, FileStamp] = {}  # in doubt, found unchanged: stamped again, not read

    def needs_reading(source_uri: str, info: os.stat_result, content: Callable[[], bytes]) -> bool:
        stamp = _stamp(info, content)
        if _unchanged(last_read.get(source_uri), stamp, content):
            report.files_unchanged += 1
            if last_read[source_uri].content_sha256 is not None:
                restamped[source_uri] = stamp
            return False
        read_now[source_uri] = stamp
        report.files_read += 1
        return True

    planned, workers = _plan_ahead(planned_reads(inbox, max_file_bytes, needs_reading))
    in_flight: deque[list[str]] = deque()  # the files each chunk sent to be read reads, in the chunks' order

    def chunks() -> Iterator[tuple[Sequence[FileRead | ReadFailure]]]:
        for chunk in iter_batches(planned, READ_CHUNK, _file_size, READ_CHUNK_BYTES):
            in_flight.append([entry.source_uri for entry in chunk if not isinstance(entry, ReadFailure)])
            yield (chunk,)

    def store(records: list[StoredDocument | ReadFailure], files: list[str]) -> None:
        """A batch of records stored, then the stamps of `files` (all their records are stored by then)."""
        batch: list[StoredDocument] = []
        letters: list[DeadLetter] = []
        for record in records:
            if isinstance(record, ReadFailure):
                letters.append(_letter(record))
                if not record.skipped:
                    report.unreadable.append(record)
                report.skipped += record.skipped
            elif record.doc_id in seen:  # the same document again in this run: the first file wins, the copy counts
                letters.append(_duplicate(record, seen[record.doc_id]))
            else:
                seen[record.doc_id] = record.source_uri
                batch.append(record)
        with connect() as con:
            known = stored_sources(con, [d.doc_id for d in batch])
            new_docs = [d for d in batch if d.doc_id not in known]
            letters += [
                _duplicate(d, known[d.doc_id]) for d in batch if known.get(d.doc_id, d.source_uri) != d.source_uri
            ]
            report.duplicates += sum(letter.stage == "duplicate" for letter in letters)
            inserted, new_letters = store_ingest_batch(con, new_docs, letters, {uri: read_now[uri] for uri in files})
            report.inserted += inserted
            report.new_dead_letters += new_letters
            for uri in files:
                del read_now[uri]
        report.new_by_kind.update(d.kind for d in new_docs)

    records: list[StoredDocument | ReadFailure] = []
    finished: list[str] = []  # files all of whose records are stored or in `records`
    for read in in_order(read_to_store, chunks(), workers, niceness):
        files = in_flight.popleft()
        for record in read:
            records.append(record)
            if len(records) == INGEST_BATCH:  # the chunk's files go on into the next batch: stamped after it
                store(records, finished)
                records, finished = [], []
        finished += files
    if records or finished:
        store(records, finished)
    with connect() as con:  # files in doubt found unchanged
        record_file_stamps(con, restamped)
        report.total = row_count(con, "raw_documents")
    report.documents_read = len(seen)
    return report


def _letter(failure: ReadFailure) -> DeadLetter:
    """A file not read (skipped: hidden, the inbox's README) or not readable, as its dead letter."""
    return DeadLetter(
        stage="skipped" if failure.skipped else "ingest",
        tenant_id=failure.tenant_id,
        source_uri=failure.source_uri,
        reason=failure.reason,
    )


def _plan_ahead(plan: Iterator[FileRead | ReadFailure]) -> tuple[Iterator[FileRead | ReadFailure], int]:
    """The inbox's plan as a stream (the walk goes on as its files are read: a plan of the whole inbox is never held),
    and the workers its reads are worth (`workers_for`): the walk is read ahead only until that number is known (the
    whole plan of a small inbox; of a large one, a chunk per worker of the pool, or `POOL_WORTH` files where a pool
    must be worth its start-up, and one file more)."""
    from extraction_assets.lib.readers import FileRead

    ahead: list[FileRead | ReadFailure] = []
    reads = 0
    settled: int | None = None
    for entry in plan:
        ahead.append(entry)
        if isinstance(entry, FileRead):
            reads += 1
            if reads > READ_CHUNK and reads > (settled := settled_at(READ_CHUNK) if settled is None else settled):
                break  # more reads than the pool's workers take at once, and than a pool is worth: every worker
    return chain(ahead, plan), workers_for(reads, READ_CHUNK)


def _stamp(info: os.stat_result, content: Callable[[], bytes]) -> FileStamp:
    """The file's stamp now, with its content's digest when the stamp alone could not tell a later edit."""
    racy = time.time_ns() - max(info.st_mtime_ns, info.st_ctime_ns) < RACY_NS
    return FileStamp(info.st_size, info.st_mtime_ns, info.st_ctime_ns, _digest(content) if racy else None)


def _unchanged(last: FileStamp | None, now: FileStamp, content: Callable[[], bytes]) -> bool:
    """Whether a file is as it was last read: the same size and times (any write, and any reset of its modification
    time, moves its change time), or, when its last stamp was taken too soon after a write to tell, the same content.
    A stamp from before change times were kept is compared by size and modification time."""
    if last is None or (last.size, last.mtime_ns) != (now.size, now.mtime_ns):
        return False
    if last.ctime_ns is not None and last.ctime_ns != now.ctime_ns:
        return False
    return last.content_sha256 is None or last.content_sha256 == (now.content_sha256 or _digest(content))


def _digest(content: Callable[[], bytes]) -> str | None:
    """The content's SHA-256, or None when it cannot be read (the reader then says why)."""
    from extraction_assets.lib.readers.tenant_files import Refused  # the readers load with a file, not the code

    try:
        return hashlib.sha256(content()).hexdigest()
    except (Refused, OSError):
        return None
