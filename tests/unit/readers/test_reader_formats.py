"""The reader table: each extension's row names a reader that exists, a new format is one row, and whatever a reader
raises becomes the file's dead letter."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import read_file
from extraction_assets.lib.readers.formats import FORMATS, Format, reader_of
from extraction_assets.lib.readers.record import Rejected


@pytest.mark.parametrize(("suffix", "row"), sorted(FORMATS.items()))
def test_every_row_names_a_reader_of_its_content_and_context(suffix: str, row: Format) -> None:
    reader = reader_of(row.reader)
    assert callable(reader) and suffix.startswith(".") and suffix == suffix.lower()
    assert list(inspect.signature(reader).parameters)[:2] in (["data", "ctx"], ["text", "ctx"])
    assert row.takes in ("binary", "bytes", "text")


def test_a_new_format_is_one_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    note = tmp_path / "acme" / "standup.note"
    note.parent.mkdir()
    note.write_text("# Standup\nDana will send the report by Friday.\n", encoding="utf-8")
    (refused,) = read_file(note, "acme", "standup.note")
    assert isinstance(refused, ReadFailure) and refused.reason == "unsupported file type .note"
    monkeypatch.setitem(FORMATS, ".note", Format("text:read_markdown", "text"))
    (doc,) = read_file(note, "acme", "standup.note")
    assert isinstance(doc, Document) and doc.title == "Standup" and doc.tenant_id == "acme"


def _refuses(data: str, ctx: object) -> Document:
    raise Rejected("no standup in this file")


def _breaks(data: str, ctx: object) -> Document:
    raise KeyError("column")


@pytest.mark.parametrize(
    ("reader", "reason"),
    [("_refuses", "no standup in this file"), ("_breaks", "reader error: KeyError: 'column'")],
)
def test_what_a_reader_raises_is_the_files_dead_letter(
    reader: str, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(FORMATS, ".note", Format(f"{__name__}:{reader}", "text"))
    reader_of.cache_clear()
    note = tmp_path / "standup.note"
    note.write_text("Dana will send the report.\n", encoding="utf-8")
    try:
        (failure,) = read_file(note, "acme", "standup.note")
    finally:
        reader_of.cache_clear()
    assert isinstance(failure, ReadFailure) and failure.reason == reason


@pytest.mark.parametrize(("suffix", "content"), [(".txt", b"   \n\t"), (".json", b"\x00\x01\x02binary"), (".md", b"")])
def test_text_formats_refuse_empty_and_binary_files_before_their_reader(
    suffix: str, content: bytes, tmp_path: Path
) -> None:
    path = tmp_path / f"x{suffix}"
    path.write_bytes(content)
    (failure,) = read_file(path, "acme", path.name)
    assert isinstance(failure, ReadFailure) and failure.reason
