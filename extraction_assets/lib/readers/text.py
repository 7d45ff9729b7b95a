"""Plain text and Markdown notes: kept verbatim, titled by their first heading or line; pasted chats become chats.
A PDF's text layer and a screenshot's OCR text are read the same way (a screenshot of a chat becomes a chat)."""

from __future__ import annotations

import re

from extraction_assets.lib.models import Document
from extraction_assets.lib.readers.image import OcrText, read_image
from extraction_assets.lib.readers.pasted_chat import pasted_chat_turns
from extraction_assets.lib.readers.pdf import read_pdf
from extraction_assets.lib.readers.record import RecordContext, parse_iso_date

_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


def read_text(text: str, ctx: RecordContext, *, markdown: bool) -> Document:
    """Notes are kept verbatim; only the title is derived (first heading or first line)."""
    title = None
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if markdown:
        for line in lines:
            match = _MD_HEADING.match(line)
            if match:
                title = match.group(1)
                break
    if title is None and lines:
        title = lines[0].lstrip("#").strip()
    if title and len(title) > 120:
        title = title[:117].rstrip() + "..."
    if not markdown and (turns := pasted_chat_turns(text, ctx.budget)):
        header = text[: text.rfind("\n", 0, turns[0].start) + 1].strip()  # a title line above the messages
        speakers = sorted({t.speaker for t in turns if t.speaker})
        metadata = {"format": "pasted chat", "message_count": len(turns), "participants": speakers}
        return ctx.document(
            "chat",
            text,
            turns=turns,
            doc_date=parse_iso_date(turns[0].timestamp),
            title=header.split("\n")[0][:120] if header else None,
            metadata=metadata,
        )
    fmt = "markdown" if markdown else "plain"
    return ctx.document("text", text, title=title, metadata={"format": fmt})


def read_plain(text: str, ctx: RecordContext) -> Document:
    return read_text(text, ctx, markdown=False)


def read_markdown(text: str, ctx: RecordContext) -> Document:
    return read_text(text, ctx, markdown=True)


def read_pdf_text(data: bytes, ctx: RecordContext) -> Document:
    """A PDF's text layer as a note, with its page count."""
    pdf = read_pdf(data)
    doc = read_text(pdf.text, ctx, markdown=False)
    return doc.model_copy(update={"metadata": {"format": "pdf", "pages": pdf.pages}})


def read_screenshot(data: bytes, ctx: RecordContext) -> Document:
    """A screenshot's OCR text as a note (or a pasted chat), every word with its box."""
    return image_document(read_image(data), ctx)


def image_document(ocr: OcrText, ctx: RecordContext) -> Document:
    """The OCR text read as a note (or a pasted chat), with the image's facts and every word's box."""
    doc = read_text(ocr.text, ctx, markdown=False)
    confidence = sum(w.confidence for w in ocr.words) / len(ocr.words) if ocr.words else 0.0
    image = {"format": ocr.image_format, "width": ocr.width, "height": ocr.height}
    facts = {
        "engine": ocr.engine,
        "languages": ocr.languages,
        "words": len(ocr.words),
        "mean_confidence": round(confidence, 1),
    }
    return doc.model_copy(update={"metadata": {**doc.metadata, "image": image, "ocr": facts}, "ocr_words": ocr.words})
