"""Which reader reads a file, by its extension: one row per format, a `"module:function"` target loaded on first use
(as the heuristic pack table names its packs). A new format is one module and one row here.

A reader takes the file's content and its `RecordContext` and returns a Document, or a list of Documents and
ReadFailures (a file of many records). What it is given depends on the row's `takes`:
- `binary`: the bytes as read (a zip archive, a PDF, an image);
- `bytes`: the bytes as UTF-8 (UTF-16 with a byte-order mark converted), known not empty and not binary;
- `text`: that decoded to a string, known not whitespace only.
A reader refuses a file by raising `record.Unreadable` (its message is the dead letter's reason).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import import_module
from typing import Any, Literal, NamedTuple

from extraction_assets.lib.models import Document, ReadFailure

Takes = Literal["binary", "bytes", "text"]
Reader = Callable[[Any, Any], "Document | list[Document | ReadFailure]"]


class Format(NamedTuple):
    reader: str  # "module:function": a module of this package, or a dotted module path
    takes: Takes


FORMATS: dict[str, Format] = {
    ".txt": Format("text:read_plain", "text"),
    ".md": Format("text:read_markdown", "text"),
    ".json": Format("json_formats:read_json", "text"),
    ".jsonl": Format("json_formats:read_jsonl", "bytes"),
    ".eml": Format("email:read_email", "bytes"),
    ".mbox": Format("email:read_mbox", "bytes"),
    ".csv": Format("sheets:read_csv", "text"),
    ".xlsx": Format("sheets:read_xlsx", "binary"),  # a zip archive: binary by nature
    ".pdf": Format("text:read_pdf_text", "binary"),  # its text layer becomes a text document
    ".png": Format("text:read_screenshot", "binary"),  # its OCR text is the document's text, its words keep boxes
    ".jpg": Format("text:read_screenshot", "binary"),
    ".jpeg": Format("text:read_screenshot", "binary"),
}


@cache
def reader_of(target: str) -> Reader:
    """The function a `"module:function"` target names, its module imported the first time it is asked for."""
    module, _, function = target.partition(":")
    reader: Reader = getattr(import_module(module if "." in module else f"{__package__}.{module}"), function)
    return reader
