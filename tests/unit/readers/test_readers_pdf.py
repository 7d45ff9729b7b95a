"""PDF input: the text layer through pypdf, and every unreadable PDF as a clear failure, never a crash."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import PdfError, read_file, read_inbox, read_pdf
from extraction_assets.lib.settings import SAMPLE_INBOX

SAMPLE_PDF = SAMPLE_INBOX / "minsk-legal" / "contracts" / "2026-03-03-dogovor-uslug.pdf"


def _pdf(*pages: str, user_password: str | None = None) -> bytes:
    from fpdf import FPDF  # a PDF writer and its font tools: imported by the worker that runs these tests alone

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    if user_password is not None:
        pdf.set_encryption(owner_password="owner-secret", user_password=user_password)
    for page in pages:
        pdf.add_page()
        if page:
            pdf.multi_cell(0, 5, page)
    return bytes(pdf.output())


def test_every_page_is_read_in_order() -> None:
    result = read_pdf(_pdf("SUPPLY AGREEMENT\nmade on March 2, 2026.", "Page two: governing law."))
    assert result.pages == 2
    assert result.text == "SUPPLY AGREEMENT\nmade on March 2, 2026.\n\nPage two: governing law."


def test_an_empty_user_password_opens_the_file() -> None:
    assert "LEASE" in read_pdf(_pdf("LEASE AGREEMENT", user_password="")).text


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: b"just text, renamed to .pdf", "not a PDF"),
        (lambda: _pdf("SERVICES AGREEMENT " * 40)[:400], "malformed PDF"),
        (lambda: _pdf(""), "no text layer"),
        (lambda: _pdf("CONFIDENTIAL", user_password="s3cret"), "needs a password"),
    ],
    ids=["not-a-pdf", "cut-short", "no-text-layer", "password"],
)
def test_unreadable_pdfs_raise_a_clear_reason(make: Callable[[], bytes], reason: str) -> None:
    data = make()  # written when the test runs: collecting the file writes no PDF
    with pytest.raises(PdfError, match=reason):
        read_pdf(data)


def test_the_reader_turns_a_pdf_into_a_text_document(tmp_path: Path) -> None:
    path = tmp_path / "agreement.pdf"
    path.write_bytes(_pdf("NON-DISCLOSURE AGREEMENT", "Signed in Minsk."))
    [doc] = read_file(path, "tenant", "tenant/agreement.pdf")
    assert isinstance(doc, Document)
    assert doc.kind == "text"
    assert doc.title == "NON-DISCLOSURE AGREEMENT"
    assert doc.metadata == {"format": "pdf", "pages": 2}
    assert doc.text.endswith("Signed in Minsk.")


def test_a_broken_pdf_in_the_inbox_is_a_dead_letter_and_the_rest_goes_on(tmp_path: Path) -> None:
    tenant = tmp_path / "inbox" / "acme"
    tenant.mkdir(parents=True)
    (tenant / "scan.pdf").write_bytes(_pdf(""))
    (tenant / "good.pdf").write_bytes(_pdf("AGENCY AGREEMENT"))
    records = list(read_inbox(tmp_path / "inbox"))
    failures = [r for r in records if isinstance(r, ReadFailure)]
    assert [(f.source_uri, "no text layer" in f.reason) for f in failures] == [("acme/scan.pdf", True)]
    assert [r.source_uri for r in records if isinstance(r, Document)] == ["acme/good.pdf"]


def test_the_sample_pdf_keeps_its_cyrillic_text() -> None:
    assert SAMPLE_PDF.stat().st_size < 50_000
    [doc] = read_file(SAMPLE_PDF, "minsk-legal", "minsk-legal/contracts/2026-03-03-dogovor-uslug.pdf")
    assert isinstance(doc, Document)
    assert doc.title == "ДОГОВОР ВОЗМЕЗДНОГО ОКАЗАНИЯ УСЛУГ № 27-У"
    assert "«03» марта 2026 г." in doc.text
    assert "белорусских рублей" in doc.text
