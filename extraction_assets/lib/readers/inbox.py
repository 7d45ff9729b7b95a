"""Walk the inbox and hand each file to its format's reader: Documents, or ReadFailures with a reason.

The inbox has one sub-folder per tenant; everything below it is read. Offsets in `Turn.start`/`Turn.end`
are Python `str` indices into `Document.text`, so `text[turn.start:turn.end]` is exactly the answer /
message / turn content, whatever the script.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers.email import read_email, read_mbox
from extraction_assets.lib.readers.image import OcrError, read_image
from extraction_assets.lib.readers.json_formats import read_json, read_jsonl
from extraction_assets.lib.readers.pdf import PdfError, read_pdf
from extraction_assets.lib.readers.record import (
    MAX_TEXT_CHARS,
    RecordContext,
    Rejected,
    check_not_empty_or_binary,
    date_from_name,
    decode_utf8,
    utf16_as_utf8,
)
from extraction_assets.lib.readers.sheets import SheetError, csv_records, sheet_documents, xlsx_records
from extraction_assets.lib.readers.text import image_document, read_text

# Tenant id recorded on failures for files that sit directly in the inbox root.
NO_TENANT = "_no_tenant"
# Inbox files are notes, pulses, e-mails and contracts (the longest real ones are a few hundred KB); anything
# bigger than this default is almost certainly a mistake or an attack. `EXTRACTION_MAX_FILE_MB` sets another.
MAX_FILE_BYTES = 8 * 1024 * 1024
INBOX_DOCS = frozenset({"readme.md", "readme.txt"})
_HIDDEN_FILE, _HIDDEN_FOLDER = "hidden file (not read)", "hidden folder (not read)"
_SKIPPED = frozenset({_HIDDEN_FILE, _HIDDEN_FOLDER})
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg")
SUPPORTED_EXTENSIONS = (".txt", ".md", ".json", ".jsonl", ".eml", ".mbox", ".csv", ".xlsx", ".pdf", *IMAGE_EXTENSIONS)


# ----------------------------------------------------------------------------------------------------------
# Inbox walking
# ----------------------------------------------------------------------------------------------------------


def read_inbox(
    inbox: Path,
    max_file_bytes: int | None = None,
    needs_reading: Callable[[str, int, int], bool] | None = None,
) -> Iterator[Document | ReadFailure]:
    """Yield every Document and ReadFailure under `inbox`, in a deterministic (sorted path) order.

    `needs_reading(source_uri, size, mtime_ns)` says whether a tenant's file must be read; a file it
    declines (unchanged since it was last read) yields nothing. None reads every file.

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
    needs_reading: Callable[[str, int, int], bool] | None = None,
) -> Iterator[FileRead | ReadFailure]:
    """`read_inbox` without the reading: each file to read, and each entry that is not read with its reason, in
    the walk's order (`read_planned` reads them, in this process or another)."""
    inbox = Path(inbox)
    if not inbox.is_dir():
        yield ReadFailure(tenant_id=NO_TENANT, source_uri="", reason=f"inbox folder not found: {inbox.name}")
        return
    beneath = Path(os.path.realpath(inbox))
    for path, rel, problem, info in _walk(inbox):
        parts = rel.split("/")
        if problem is not None or info is None:  # a walked file without a problem always has its stat
            tenant = parts[0] if len(parts) > 1 else NO_TENANT
            problem = problem or "unreadable file"
            yield ReadFailure(tenant_id=tenant, source_uri=rel, reason=problem, skipped=problem in _SKIPPED)
        elif len(parts) < 2 and rel.lower() in INBOX_DOCS:
            yield ReadFailure(tenant_id=NO_TENANT, source_uri=rel, reason="the inbox's own README", skipped=True)
        elif len(parts) < 2:
            yield ReadFailure(tenant_id=NO_TENANT, source_uri=rel, reason="file outside a tenant folder")
        elif needs_reading is None or needs_reading(rel, info.st_size, info.st_mtime_ns):
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


# A file to read: its path under the inbox's real path (a link's target), its POSIX path under the inbox, and its stat
# taken in the walk (an unchanged inbox costs one stat per file); or an entry that is not read, with its problem and
# no stat.
_Entry = tuple[str, str, None, os.stat_result] | tuple[str, str, str, None]


def _walk(root: Path) -> Iterator[_Entry]:
    """(path to read, POSIX path relative to root, problem or None, stat or None) for every visible entry, sorted by
    relative path.

    Only regular files are read. A symbolic link is read only when its real path is a regular file inside
    its own tenant's folder; any other link, device, FIFO or socket is a problem, and its target is never
    opened. The path returned for a link is its target's, so the reader never follows a link itself. A file with
    more hard links than names in its tenant's folder shares its content with a file elsewhere (another
    tenant's, or outside the inbox): a problem too, since which name came first cannot be told.
    """
    found: list[_Entry] = []
    stack = [(str(root), "")]  # a folder, and its path under the root with a trailing slash
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError as exc:
            found.append((folder, prefix[:-1] or ".", f"unreadable folder: {_os_reason(exc)}", None))
            continue
        for entry in entries:
            rel = prefix + entry.name
            if entry.name.startswith("."):  # counted, never read (.git, .DS_Store, editor files)
                hidden = _HIDDEN_FOLDER if entry.is_dir(follow_symlinks=False) else _HIDDEN_FILE
                found.append((entry.path, rel, hidden, None))
                continue
            try:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    found.append(_link(root, entry.path, rel))
                elif stat.S_ISDIR(info.st_mode):
                    stack.append((entry.path, rel + "/"))
                elif stat.S_ISREG(info.st_mode):
                    found.append((rel, rel, None, info))
                else:
                    found.append((entry.path, rel, f"not a regular file ({_file_type(info.st_mode)})", None))
            except OSError as exc:
                found.append((entry.path, rel, f"unreadable file: {_os_reason(exc)}", None))
    yield from sorted(_outside_hard_links(found), key=lambda item: item[1])


def _outside_hard_links(found: list[_Entry]) -> list[_Entry]:
    """The walk's entries, a file whose hard links are not all in its tenant's folder turned into a problem."""
    names: Counter[tuple[str, int, int]] = Counter()
    for path, rel, problem, info in found:
        if problem is None and path == rel:  # a name, not a symbolic link to one
            names[(rel.split("/")[0], info.st_dev, info.st_ino)] += 1  # type: ignore[union-attr]
    return [
        (path, rel, "hard link to a file outside the tenant folder", None)
        if info is not None and info.st_nlink > names[(rel.split("/")[0], info.st_dev, info.st_ino)]
        else (path, rel, problem, info)  # type: ignore[misc]
        for path, rel, problem, info in found
    ]


def _link(root: Path, link: str, rel: str) -> _Entry:
    """Where a symbolic link may be read from, or why not: only a regular file inside the link's tenant folder."""
    parts = rel.split("/")
    try:
        target = os.path.realpath(link, strict=True)
    except FileNotFoundError:
        return link, rel, "broken symlink", None
    except OSError as exc:  # a loop, or a folder on the way that cannot be searched
        loop = exc.errno == errno.ELOOP or "loop" in str(exc).lower()
        return link, rel, "symlink loop" if loop else f"unreadable symlink: {_os_reason(exc)}", None
    real_root = Path(os.path.realpath(root))
    tenant_folder = real_root / parts[0] if len(parts) > 1 else None
    if tenant_folder is None or not Path(target).is_relative_to(tenant_folder):
        return link, rel, "link outside the tenant folder", None
    info = os.lstat(target)
    if stat.S_ISDIR(info.st_mode):
        return link, rel, "symlinked folder not followed", None
    if not stat.S_ISREG(info.st_mode):
        return link, rel, f"link to something other than a regular file ({_file_type(info.st_mode)})", None
    return Path(target).relative_to(real_root).as_posix(), rel, None, info


def _file_type(mode: int) -> str:
    kinds = ((stat.S_ISFIFO, "FIFO"), (stat.S_ISSOCK, "socket"), (stat.S_ISCHR, "character device"))
    return next((name for test, name in kinds if test(mode)), "block device" if stat.S_ISBLK(mode) else "special file")


def _read_regular(path: Path, limit: int, beneath: Path | None = None, walked: os.stat_result | None = None) -> bytes:
    """A regular file's bytes, opened without following a link, and never more than `limit` bytes read.

    With `beneath`, `path` is relative to it and opened one folder at a time, none of them followed if it is a
    link: a folder swapped for a link to another tenant's after the walk cannot lead the read there. `walked` is the
    walk's stat of the file: an open file that is not the one the walk saw (swapped, or its name given to another
    file) is refused. The other checks are made on the open file (not on its name), so a file swapped for a link
    or a FIFO after the inbox walk is refused too.
    """
    fd = _open_beneath(beneath, path) if beneath is not None else os.open(path, _FILE_FLAGS)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _Refused(f"not a regular file ({_file_type(info.st_mode)})")
        if walked is not None and (info.st_dev, info.st_ino) != (walked.st_dev, walked.st_ino):
            raise _Refused("file replaced while the inbox was read (read again next run)")
        if info.st_size > limit:
            raise _Refused(f"file too large ({info.st_size} bytes, limit {limit})")
        data = handle.read(limit + 1)
    if len(data) > limit:  # it grew while we read
        raise _Refused(f"file too large (more than {limit} bytes)")
    return data


_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def _open_beneath(root: Path, path: Path) -> int:
    """A descriptor of `root / path`, each folder on the way opened from the one before it without following a link
    (`O_NOFOLLOW` on the last component alone would follow a folder that became a link)."""
    *folders, name = path.parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for folder in folders:
            try:
                inner = os.open(folder, _FOLDER_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise _Refused("a folder on its path is no longer a folder (a link?): not followed") from exc
                raise
            os.close(fd)
            fd = inner
        return os.open(name, _FILE_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


class _Refused(Exception):
    """A file that is not read at all (not regular, too large); the message becomes the ReadFailure reason."""


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

    `beneath` and `walked`: see `_read_regular` (the inbox walk passes both)."""
    path = Path(path)

    def fail(reason: str) -> list[Document | ReadFailure]:
        return [ReadFailure(tenant_id=tenant_id, source_uri=source_uri, reason=reason)]

    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        return fail(f"unsupported file type {suffix}" if suffix else "unsupported file type (no extension)")
    try:
        data = _read_regular(path, max_file_bytes or MAX_FILE_BYTES, beneath, walked)
    except _Refused as exc:
        return fail(str(exc))
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # the path itself is a link: read_inbox hands over real paths only
            return fail("symlink not followed")
        return fail(f"unreadable file: {_os_reason(exc)}")

    ctx = RecordContext(tenant_id=tenant_id, source_uri=source_uri, name_date=date_from_name(path.name))
    return [_within_cap(r) for r in _documents(data, suffix, ctx, fail)]


def _within_cap(record: Document | ReadFailure) -> Document | ReadFailure:
    """Whatever the reader, no document longer than `MAX_TEXT_CHARS` (a dead letter instead)."""
    if isinstance(record, Document) and len(record.text) > MAX_TEXT_CHARS:
        reason = f"document text larger than {MAX_TEXT_CHARS} characters ({len(record.text)})"
        return ReadFailure(tenant_id=record.tenant_id, source_uri=record.source_uri, reason=reason)
    return record


def _documents(
    data: bytes, suffix: str, ctx: RecordContext, fail: Callable[[str], list[Document | ReadFailure]]
) -> list[Document | ReadFailure]:
    """The file's bytes through its format's reader."""
    try:
        if suffix == ".xlsx":  # a zip archive: binary by nature
            return sheet_documents(xlsx_records(data), ctx)
        if suffix == ".pdf":  # binary by nature too: its text layer becomes a text document
            pdf = read_pdf(data)
            doc = read_text(pdf.text, ctx, markdown=False)
            return [doc.model_copy(update={"metadata": {"format": "pdf", "pages": pdf.pages}})]
        if suffix in IMAGE_EXTENSIONS:  # a screenshot: its OCR text is the document's text, its words keep boxes
            return [image_document(read_image(data), ctx)]
        data = utf16_as_utf8(data)
        check_not_empty_or_binary(data)
        if suffix == ".jsonl":
            return read_jsonl(data, ctx)
        if suffix == ".eml":
            return [read_email(data, ctx)]
        if suffix == ".mbox":
            return read_mbox(data, ctx)
        text = decode_utf8(data)
        if not text.strip():
            raise Rejected("empty file (whitespace only)")
        if suffix == ".json":
            return [read_json(text, ctx)]
        if suffix == ".csv":
            return sheet_documents(csv_records(text), ctx)
        return [read_text(text, ctx, markdown=suffix == ".md")]
    except (Rejected, SheetError, PdfError, OcrError) as exc:
        return fail(str(exc))
    except Exception as exc:  # a reader bug must not stop the whole inbox
        return fail(f"reader error: {type(exc).__name__}: {exc}")


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
