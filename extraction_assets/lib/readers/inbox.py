"""Walk the inbox and hand each file to its format's reader: Documents, or ReadFailures with a reason.

The inbox has one sub-folder per tenant; everything below it is read. Offsets in `Turn.start`/`Turn.end`
are Python `str` indices into `Document.text`, so `text[turn.start:turn.end]` is exactly the answer /
message / turn content, whatever the script.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers.email import read_email, read_mbox
from extraction_assets.lib.readers.json_formats import read_json, read_jsonl
from extraction_assets.lib.readers.pdf import PdfError, read_pdf
from extraction_assets.lib.readers.record import (
    RecordContext,
    Rejected,
    check_not_empty_or_binary,
    date_from_name,
    decode_utf8,
)
from extraction_assets.lib.readers.sheets import SheetError, csv_records, sheet_documents, xlsx_records
from extraction_assets.lib.readers.text import read_text

# Tenant id recorded on failures for files that sit directly in the inbox root.
NO_TENANT = "_no_tenant"
# Inbox files are notes, pulses and e-mails; anything bigger is almost certainly a mistake (or an attack).
MAX_FILE_BYTES = 20 * 1024 * 1024
INBOX_DOCS = frozenset({"readme.md", "readme.txt"})
SUPPORTED_EXTENSIONS = (".txt", ".md", ".json", ".jsonl", ".eml", ".mbox", ".csv", ".xlsx", ".pdf")


# ----------------------------------------------------------------------------------------------------------
# Inbox walking
# ----------------------------------------------------------------------------------------------------------


def read_inbox(inbox: Path) -> Iterator[Document | ReadFailure]:
    """Yield every Document and ReadFailure under `inbox`, in a deterministic (sorted path) order.

    Tenants are the first-level folders; hidden files and folders are skipped; a README in the root
    documents the inbox and is skipped; other files directly in the root have no tenant and are
    reported rather than guessed.
    """
    inbox = Path(inbox)
    if not inbox.is_dir():
        yield ReadFailure(tenant_id=NO_TENANT, source_uri="", reason=f"inbox folder not found: {inbox.name}")
        return
    for path, rel, problem in _walk(inbox):
        parts = PurePosixPath(rel).parts
        if problem is not None:
            tenant = parts[0] if len(parts) > 1 else NO_TENANT
            yield ReadFailure(tenant_id=tenant, source_uri=rel, reason=problem)
        elif len(parts) < 2 and rel.lower() in INBOX_DOCS:
            continue
        elif len(parts) < 2:
            yield ReadFailure(tenant_id=NO_TENANT, source_uri=rel, reason="file outside a tenant folder")
        else:
            yield from read_file(path, parts[0], rel)


def _walk(root: Path) -> Iterator[tuple[Path, str, str | None]]:
    """(path, POSIX path relative to root, problem or None) for every visible file, sorted by relative path."""
    found: list[tuple[str, Path, str | None]] = []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            entries = list(folder.iterdir())
        except OSError as exc:
            rel = folder.relative_to(root).as_posix()
            found.append((rel, folder, f"unreadable folder: {_os_reason(exc)}"))
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = entry.relative_to(root).as_posix()
            try:
                if entry.is_dir():
                    if entry.is_symlink():  # not followed: it could loop or leave the tenant folder
                        found.append((rel, entry, "symlinked folder not followed"))
                    else:
                        stack.append(entry)
                elif entry.is_file():
                    found.append((rel, entry, None))
                elif entry.is_symlink():
                    found.append((rel, entry, "broken symlink"))
                else:
                    found.append((rel, entry, "not a regular file"))
            except OSError as exc:
                found.append((rel, entry, f"unreadable file: {_os_reason(exc)}"))
    for rel, path, problem in sorted(found, key=lambda item: item[0]):
        yield path, rel, problem


# ----------------------------------------------------------------------------------------------------------
# Single file dispatch
# ----------------------------------------------------------------------------------------------------------


def read_file(path: Path, tenant_id: str, source_uri: str) -> list[Document | ReadFailure]:
    """Read one file into Documents; every problem is returned as a ReadFailure, never raised."""
    path = Path(path)

    def fail(reason: str) -> list[Document | ReadFailure]:
        return [ReadFailure(tenant_id=tenant_id, source_uri=source_uri, reason=reason)]

    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_EXTENSIONS:
        return fail(f"unsupported file type {suffix}" if suffix else "unsupported file type (no extension)")
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return fail(f"file too large ({size} bytes, limit {MAX_FILE_BYTES})")
        data = path.read_bytes()
    except OSError as exc:
        return fail(f"unreadable file: {_os_reason(exc)}")

    ctx = RecordContext(tenant_id=tenant_id, source_uri=source_uri, name_date=date_from_name(path.name))
    try:
        if suffix == ".xlsx":  # a zip archive: binary by nature
            return sheet_documents(xlsx_records(data), ctx)
        if suffix == ".pdf":  # binary by nature too: its text layer becomes a text document
            pdf = read_pdf(data)
            doc = read_text(pdf.text, ctx, markdown=False)
            return [doc.model_copy(update={"metadata": {"format": "pdf", "pages": pdf.pages}})]
        check_not_empty_or_binary(data)
        if suffix == ".jsonl":
            return read_jsonl(data, ctx)
        if suffix == ".eml":
            return [read_email(data, ctx)]
        if suffix == ".mbox":
            return read_mbox(path, ctx)
        text = decode_utf8(data)
        if not text.strip():
            raise Rejected("empty file (whitespace only)")
        if suffix == ".json":
            return [read_json(text, ctx)]
        if suffix == ".csv":
            return sheet_documents(csv_records(text), ctx)
        return [read_text(text, ctx, markdown=suffix == ".md")]
    except (Rejected, SheetError, PdfError) as exc:
        return fail(str(exc))
    except Exception as exc:  # a reader bug must not stop the whole inbox
        return fail(f"reader error: {type(exc).__name__}: {exc}")


def _os_reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__
