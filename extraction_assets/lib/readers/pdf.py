"""PDF files become text through pypdf: the text layer of every page, pages separated by a blank line.

Contracts arrive as PDFs. Only the text layer is read; a scanned PDF without one, an encrypted or a
broken file raises ``PdfError`` with a reason a person can act on, and the reader turns it into a
dead letter instead of stopping the inbox.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from io import BytesIO
from typing import TYPE_CHECKING

from extraction_assets.lib.readers.record import MAX_TEXT_CHARS, Unreadable

if TYPE_CHECKING:  # pypdf (~0.3 s) loads with the first PDF, not with every inbox walk
    from pypdf import PdfReader

__all__ = ["PdfError", "PdfText", "read_pdf"]

PAGE_BREAK = "\n\n"
MAX_PAGES = 2000  # the longest contracts run to a few hundred pages
logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed files are reported as dead letters, not log noise


class PdfError(Unreadable, ValueError):
    """A PDF whose text cannot be read; the message is the dead letter's reason."""


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: int


def read_pdf(data: bytes) -> PdfText:
    """The text of every page of a PDF, in page order, with newlines normalised."""
    if not data.lstrip().startswith(b"%PDF-"):
        raise PdfError("not a PDF (no %PDF- header)")
    from pypdf import PdfReader  # pypdf loads with the first PDF (~0.3 s)
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        reader = PdfReader(BytesIO(data))
        if reader.is_encrypted:
            _open_without_password(reader)
        if len(reader.pages) > MAX_PAGES:
            raise PdfError(f"PDF has {len(reader.pages)} pages (limit {MAX_PAGES})")
        pages: list[str] = []
        chars = 0
        for number, page in enumerate(reader.pages, start=1):
            pages.append(_page_text(page.extract_text(), number))
            chars += len(pages[-1])
            if chars > MAX_TEXT_CHARS:
                raise PdfError(f"PDF text larger than {MAX_TEXT_CHARS} characters by page {number}")
    except PdfError:
        raise
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise PdfError(f"malformed PDF: {type(exc).__name__}: {exc}") from None
    text = PAGE_BREAK.join(pages).strip("\n")
    if not text.strip():
        raise PdfError(f"PDF has no text layer on its {len(pages)} page(s) (a scan?): run OCR on it first")
    return PdfText(text=text, pages=len(pages))


def _open_without_password(reader: PdfReader) -> None:
    """Many PDFs are encrypted with an empty user password (print and copy restrictions only)."""
    from pypdf.errors import PyPdfError  # with the first PDF

    try:
        opened = reader.decrypt("")
    except PyPdfError as exc:
        raise PdfError(f"encrypted PDF that cannot be opened: {exc}") from None
    if not opened:
        raise PdfError("encrypted PDF: it needs a password")


def _page_text(raw: str | None, number: int) -> str:
    if raw is None:
        raise PdfError(f"page {number} has no readable content stream")
    return raw.replace("\r\n", "\n").replace("\r", "\n").rstrip()
