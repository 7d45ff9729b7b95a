"""Pasted chat text in a .txt note: message lines become turns; ordinary notes stay text."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from extraction_assets.lib.models import Document
from extraction_assets.lib.readers import pasted_chat_turns, read_file

ZALO = """Nhóm Zalo: Giao hàng
[08:02] Tuấn: Xe số 2 bị thủng lốp, đơn Bếp Nhà có thể giao trễ.
[08:05] Lan: Anh gọi báo khách trước giúp em nhé.
Số khách 0912 345 678.
[08:06] Tuấn: Ok, tôi sẽ gọi ngay.
"""


def _read(tmp_path: Path, text: str, name: str = "2026-11-29-paste.txt") -> Document:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    (doc,) = read_file(path, "saigon-foods", f"saigon-foods/{name}")
    assert isinstance(doc, Document), doc
    return doc


def test_zalo_paste_becomes_a_chat_with_message_turns(tmp_path: Path) -> None:
    doc = _read(tmp_path, ZALO)
    assert doc.kind == "chat"
    assert doc.text == ZALO  # kept exactly as pasted
    assert [(t.turn_id, t.speaker, t.timestamp) for t in doc.turns] == [
        ("m1", "Tuấn", "08:02"),
        ("m2", "Lan", "08:05"),
        ("m3", "Tuấn", "08:06"),
    ]
    assert [doc.text[t.start : t.end] for t in doc.turns] == [
        "Xe số 2 bị thủng lốp, đơn Bếp Nhà có thể giao trễ.",
        "Anh gọi báo khách trước giúp em nhé.\nSố khách 0912 345 678.",  # a continuation line stays in its message
        "Ok, tôi sẽ gọi ngay.",
    ]
    assert doc.title == "Nhóm Zalo: Giao hàng"
    assert doc.doc_date == date(2026, 11, 29)  # from the file name: the messages carry only times
    assert doc.metadata == {"format": "pasted chat", "message_count": 3, "participants": ["Lan", "Tuấn"]}


@pytest.mark.parametrize(
    ("line", "speaker", "stamp", "body"),
    [
        ("[10:02] Lan: Em sẽ gửi.", "Lan", "10:02", "Em sẽ gửi."),
        ("[25/11/2026 10:02] Anh Minh: Ok anh.", "Anh Minh", "25/11/2026 10:02", "Ok anh."),
        ("[25/11/26, 10:02:15] Dana: Done.", "Dana", "25/11/26, 10:02:15", "Done."),
        ("25/11/2026, 10:02 - Jordan: Van 3 won't start.", "Jordan", "25/11/2026, 10:02", "Van 3 won't start."),
        ("[2026-11-25 09:12] 王芳：转写已上传。", "王芳", "2026-11-25 09:12", "转写已上传。"),
        (
            "[28.11.2026 10:02] Олег Смирнов: Машина задерживается.",
            "Олег Смирнов",
            "28.11.2026 10:02",
            "Машина задерживается.",
        ),
        ("[9:05 PM] Priya: Sent.", "Priya", "9:05 PM", "Sent."),
    ],
)
def test_message_line_formats(line: str, speaker: str, stamp: str, body: str) -> None:
    text = f"{line}\n{line}\n"
    turns = pasted_chat_turns(text)
    assert [(t.speaker, t.timestamp, text[t.start : t.end]) for t in turns] == [(speaker, stamp, body)] * 2


def test_iso_date_of_the_first_message_is_the_document_date(tmp_path: Path) -> None:
    doc = _read(tmp_path, "[2026-11-25 09:12] 王芳：上传了。\n[2026-11-25 09:20] 李明：收到。\n", name="paste.txt")
    assert doc.doc_date == date(2026, 11, 25)
    assert doc.title is None


@pytest.mark.parametrize(
    "text",
    [
        "Call notes\nI will send the quote by Friday.\nThe supplier delay is a risk.\n",
        # one quoted message inside a longer note is still a note
        "Weekly note\n[10:02] Lan: I will send it.\nWe discussed the budget.\nNext steps follow.\nMore.\n",
        # timestamps in a note's agenda are not chat messages: too few message lines for the rest
        "Agenda\n[09:00] Intro: welcome\nThen a long discussion.\nAnd another point.\nAnd one more.\nEnd.\n",
        # a sentence is not a sender
        "[10:02] We agreed on this at the meeting. Note: ship it.\n[10:03] Then we all left the room. Note: ok.\n",
        # too many title lines before the first message
        "a\nb\nc\nd\n[10:02] Lan: one\n[10:03] Minh: two\n",
    ],
)
def test_plain_notes_stay_text(tmp_path: Path, text: str) -> None:
    assert pasted_chat_turns(text) == []
    assert _read(tmp_path, text).kind == "text"


def test_markdown_is_never_read_as_a_chat(tmp_path: Path) -> None:
    assert _read(tmp_path, ZALO, name="paste.md").kind == "text"


def test_message_line_with_nothing_after_the_sender_has_no_turn() -> None:
    text = "[10:01] Lan: <Media omitted>\n[10:02] Minh:\n[10:03] Lan: Ok.\n"
    turns = pasted_chat_turns(text)
    assert [(t.turn_id, text[t.start : t.end]) for t in turns] == [("m1", "<Media omitted>"), ("m3", "Ok.")]
