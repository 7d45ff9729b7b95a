"""Inbox files into Documents: the inbox walk, and one reader per format (e-mail and mbox, JSON formats,
sheets, PDF, screenshots through OCR, text); which files landed (the inbox sensor's stamps), and which mail files
are new since the mail sensor's cursor."""

from extraction_assets.lib.readers.email import html_to_text, read_mbox
from extraction_assets.lib.readers.email_body import (
    BodyPart,
    body_parts,
    body_start,
    body_turns,
    is_forward,
    line_spans,
)
from extraction_assets.lib.readers.image import OcrError, read_image
from extraction_assets.lib.readers.inbox import FileRead, planned_reads, read_file, read_inbox, read_planned
from extraction_assets.lib.readers.inbox_watch import inbox_stamps, stamps_digest
from extraction_assets.lib.readers.mail_watch import MailCursor, mail_stamps
from extraction_assets.lib.readers.pasted_chat import pasted_chat_turns
from extraction_assets.lib.readers.pdf import PdfError, read_pdf
from extraction_assets.lib.readers.record import RecordContext
from extraction_assets.lib.readers.sheets import SheetError, csv_records, xlsx_records

__all__ = [
    "BodyPart",
    "FileRead",
    "MailCursor",
    "OcrError",
    "PdfError",
    "RecordContext",
    "SheetError",
    "body_parts",
    "body_start",
    "body_turns",
    "csv_records",
    "html_to_text",
    "inbox_stamps",
    "is_forward",
    "line_spans",
    "mail_stamps",
    "pasted_chat_turns",
    "planned_reads",
    "read_file",
    "read_image",
    "read_inbox",
    "read_mbox",
    "read_pdf",
    "read_planned",
    "stamps_digest",
    "xlsx_records",
]
