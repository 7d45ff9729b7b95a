"""Walk the inbox and hand each file to its format's reader: Documents, or ReadFailures with a reason.

The inbox has one sub-folder per tenant; everything below it is read. Offsets in `Turn.start`/`Turn.end`
are Python `str` indices into `Document.text`, so `text[turn.start:turn.end]` is exactly the answer /
message / turn content, whatever the script.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers.formats import FORMATS, reader_of
from extraction_assets.lib.readers.record import (
    RecordContext,
    Rejected,
    Unreadable,
    check_not_empty_or_binary,
    date_from_name,
    decode_utf8,
    utf16_as_utf8,
)
from extraction_assets.lib.readers.tenant_files import (
    HIDDEN_FILE,
    HIDDEN_FOLDER,
    Refused,
    os_reason,
    read_regular,
    walk,
)

# Tenant id recorded on failures for files that sit directly in the inbox root.
NO_TENANT = "_no_tenant"
# Inbox files are notes, pulses, e-mails and contracts (the longest real ones are a few hundred KB); anything
# bigger than this default is almost certainly a mistake or an attack. `EXTRACTION_MAX_FILE_MB` sets another.
MAX_FILE_BYTES = 8 * 1024 * 1024
INBOX_DOCS = frozenset({"readme.md", "readme.txt"})
_SKIPPED = frozenset({HIDDEN_FILE, HIDDEN_FOLDER})


# ----------------------------------------------------------------------------------------------------------
# Inbox walking
# ----------------------------------------------------------------------------------------------------------


# Whether a tenant's file must be read, from its path under the inbox, the walk's stat of it, and a way to its bytes
# (opened as the readers open it) for when the stat cannot tell.
NeedsReading = Callable[[str, os.stat_result, Callable[[], bytes]], bool]


def read_inbox(
    inbox: Path,
    max_file_bytes: int | None = None,
    needs_reading: NeedsReading | None = None,
) -> Iterator[Document | ReadFailure]:
    """Yield every Document and ReadFailure under `inbox`, in a deterministic (sorted path) order.

    `needs_reading(source_uri, stat, content)` says whether a tenant's file must be read; a file it declines
    (unchanged since it was last read) yields nothing. None reads every file.

    Tenants are the first-level folders; hidden files and folders, and a README in the root (it documents
    the inbox), are skipped and reported as skipped, so they are counted; other files directly in the root
    have no tenant and are reported rather than guessed.
    """
    for entry in planned_reads(inbox, max_file_bytes, needs_reading):
        yield from read_planned([entry])


class FileRead(NamedTuple):
    """A file the inbox walk found to read, with what `read_file` needs: a worker process can read it."""

    path: Path
    tenant_id: str
    source_uri: str
    max_file_bytes: int | None
    beneath: Path
    walked: os.stat_result


def planned_reads(
    inbox: Path,
    max_file_bytes: int | None = None,
    needs_reading: NeedsReading | None = None,
) -> Iterator[FileRead | ReadFailure]:
    """`read_inbox` without the reading: each file to read, and each entry that is not read with its reason, in
    the walk's order (`read_planned` reads them, in this process or another)."""
    inbox = Path(inbox)
    if not inbox.is_dir():
        yield ReadFailure(tenant_id=NO_TENANT, source_uri="", reason=f"inbox folder not found: {inbox.name}")
        return
    beneath = Path(os.path.realpath(inbox))
    for path, rel, problem, info in walk(inbox):
        parts = rel.split("/")
        if problem is not None or info is None:  # a walked file without a problem always has its stat
            tenant = parts[0] if len(parts) > 1 else NO_TENANT
            problem = problem or "unreadable file"
            yield ReadFailure(tenant_id=tenant, source_uri=rel, reason=problem, skipped=problem in _SKIPPED)
        elif len(parts) < 2 and rel.lower() in INBOX_DOCS:
            yield ReadFailure(tenant_id=NO_TENANT, source_uri=rel, reason="the inbox's own README", skipped=True)
        elif len(parts) < 2:
            yield ReadFailure(tenant_id=NO_TENANT, source_uri=rel, reason="file outside a tenant folder")
        elif needs_reading is None or needs_reading(rel, info, _content(path, max_file_bytes, beneath, info)):
            yield FileRead(Path(path), parts[0], rel, max_file_bytes, beneath, info)


def read_planned(entries: Sequence[FileRead | ReadFailure]) -> list[Document | ReadFailure]:
    """Each planned file read (`read_file`, every check made again as it is opened), each entry not read passed
    on, in order."""
    records: list[Document | ReadFailure] = []
    for entry in entries:
        if isinstance(entry, ReadFailure):
            records.append(entry)
        else:
            path, tenant, rel, limit, beneath, walked = entry
            records.extend(read_file(path, tenant, rel, limit, beneath=beneath, walked=walked))
    return records


def _content(path: str, limit: int | None, beneath: Path, walked: os.stat_result) -> Callable[[], bytes]:
    return lambda: read_regular(Path(path), limit or MAX_FILE_BYTES, beneath, walked)


# ----------------------------------------------------------------------------------------------------------
# Single file dispatch
# ----------------------------------------------------------------------------------------------------------


def read_file(
    path: Path,
    tenant_id: str,
    source_uri: str,
    max_file_bytes: int | None = None,
    beneath: Path | None = None,
    walked: os.stat_result | None = None,
) -> list[Document | ReadFailure]:
    """Read one file into Documents; every problem is returned as a ReadFailure, never raised.

    `beneath` and `walked`: see `tenant_files.read_regular` (the inbox walk passes both)."""
    path = Path(path)

    def fail(reason: str) -> list[Document | ReadFailure]:
        return [ReadFailure(tenant_id=tenant_id, source_uri=source_uri, reason=reason)]

    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        return fail(f"unsupported file type {suffix}" if suffix else "unsupported file type (no extension)")
    try:
        data = read_regular(path, max_file_bytes or MAX_FILE_BYTES, beneath, walked)
    except Refused as exc:
        return fail(str(exc))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the path itself is a link: read_inbox hands over real paths only
            return fail("symlink not followed")
        return fail(f"unreadable file: {os_reason(exc)}")

    ctx = RecordContext(tenant_id=tenant_id, source_uri=source_uri, name_date=date_from_name(path.name))
    return _documents(data, suffix, ctx, fail)


def _documents(
    data: bytes, suffix: str, ctx: RecordContext, fail: Callable[[str], list[Document | ReadFailure]]
) -> list[Document | ReadFailure]:
    """The file's bytes through its format's reader (`formats.FORMATS`); the file's budget (`ctx.budget`) stops any
    reader that would make it more than one file may become (`record.TooLarge`): the whole file is then one dead
    letter, saying why."""
    fmt = FORMATS[suffix]
    try:
        content: bytes | str = data
        if fmt.takes != "binary":
            content = utf16_as_utf8(data)
            check_not_empty_or_binary(content)
            if fmt.takes == "text":
                content = decode_utf8(content)
                if not content.strip():
                    raise Rejected("empty file (whitespace only)")
        read = reader_of(fmt.reader)(content, ctx)
        return read if isinstance(read, list) else [read]
    except Unreadable as exc:
        return fail(str(exc))
    except Exception as exc:  # a reader bug must not stop the whole inbox
        return fail(f"reader error: {type(exc).__name__}: {exc}")
