"""Spreadsheets in the inbox: CSV and Excel check-ins become pulses laid out like pulse JSON; other sheets chats."""

from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import date, datetime
from pathlib import Path

import openpyxl
import pytest

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import SheetError, csv_records, read_file, xlsx_records
from extraction_assets.lib.readers.record import MAX_TEXT_CHARS

QUESTIONS = ["Hôm nay bạn sẽ làm gì?", "Có rủi ro nào không?", "Bạn cần ai quyết định?"]
LAN = ["Tôi sẽ gửi báo giá trước thứ hai tuần sau.", "Khách hủy đơn nếu giao trễ.", "Cần anh quyết định giá mới."]
MINH = ["Kiểm kho lạnh.", "Thiếu người ca sáng.", ""]


def _csv(rows: list[list[str]], delimiter: str = ",") -> str:
    out = io.StringIO()
    csv.writer(out, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _long_rows() -> list[list[str]]:
    rows = [["Thành viên", "Ngày", "Câu hỏi", "Trả lời"]]
    rows += [["Lan", "2026-11-30", q, a] for q, a in zip(QUESTIONS, LAN, strict=True)]
    rows += [["Minh", "2026-11-30", q, a] for q, a in zip(QUESTIONS, MINH, strict=True)]
    return rows


def _read(tmp_path: Path, name: str, content: str | bytes, tenant: str = "saigon-foods") -> list:
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return read_file(path, tenant, f"{tenant}/{name}")


def _docs(results: list) -> list[Document]:
    assert all(isinstance(r, Document) for r in results), results
    return results


def _workbook(sheets: dict[str, list[list[object]]]) -> bytes:
    book = openpyxl.Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title)
        for row in rows:
            sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


# ---------------------------------------------------------------------------------------------------- pulse layouts


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_long_layout_groups_rows_into_one_pulse_per_member_and_day(tmp_path: Path, delimiter: str) -> None:
    lan, minh = _docs(_read(tmp_path, "checkin.csv", _csv(_long_rows(), delimiter)))
    assert (lan.kind, lan.source_uri, lan.doc_date) == ("pulse", "saigon-foods/checkin.csv#row2", date(2026, 11, 30))
    assert minh.source_uri == "saigon-foods/checkin.csv#row5"
    assert [t.question for t in lan.turns] == QUESTIONS
    assert [lan.text[t.start : t.end] for t in lan.turns] == LAN
    assert [minh.text[t.start : t.end] for t in minh.turns] == MINH
    assert {t.speaker for t in lan.turns} == {"Lan"}
    assert lan.title == "Pulse: Lan 2026-11-30"


def test_a_sheet_pulse_is_the_same_document_as_the_json_pulse(tmp_path: Path) -> None:
    """The chaos import feeds the same output: identical text, turns and id as the app's own pulse file."""
    (from_sheet, _) = _docs(_read(tmp_path, "checkin.csv", _csv(_long_rows())))
    answers = [{"question": q, "answer": a} for q, a in zip(QUESTIONS, LAN, strict=True)]
    (from_json,) = _docs(
        _read(tmp_path, "lan.json", json.dumps({"author": "Lan", "date": "2026-11-30", "answers": answers}))
    )
    assert from_sheet.doc_id == from_json.doc_id
    assert from_sheet.text == from_json.text
    assert from_sheet.turns == from_json.turns


def test_wide_layout_is_one_pulse_per_row_with_a_column_per_question(tmp_path: Path) -> None:
    rows = [
        ["Timestamp", "Name", *QUESTIONS],
        ["2026-11-30 08:14:02", "Lan", *LAN],
        ["2026-11-30 09:00:00", "Minh", *MINH],
    ]
    lan, minh = _docs(_read(tmp_path, "form.csv", _csv(rows)))
    assert lan.source_uri.endswith("form.csv#row2") and minh.source_uri.endswith("form.csv#row3")
    assert [lan.text[t.start : t.end] for t in lan.turns] == LAN
    assert [t.question for t in minh.turns] == QUESTIONS
    assert lan.doc_date == date(2026, 11, 30)
    assert minh.turns[2].start == minh.turns[2].end  # an empty answer keeps its slot


def test_a_row_without_any_answer_fails_alone(tmp_path: Path) -> None:
    rows = [["Name", "Date", *QUESTIONS], ["Lan", "2026-11-30", *LAN], ["Minh", "2026-11-30", "", "", ""]]
    good, bad = _read(tmp_path, "form.csv", _csv(rows))
    assert isinstance(good, Document)
    assert isinstance(bad, ReadFailure)
    assert bad.source_uri == "saigon-foods/form.csv#row3"
    assert "no non-empty answers" in bad.reason


def test_non_iso_dates_are_not_guessed(tmp_path: Path) -> None:
    rows = [["Member", "Date", "Question", "Answer"], ["Lan", "03/04/2026", "Plans?", "I will call the client."]]
    (doc,) = _docs(_read(tmp_path, "pulse.csv", _csv(rows)))
    assert doc.doc_date is None
    assert doc.metadata["date"] == "03/04/2026"


# ---------------------------------------------------------------------------------------------------- other sheets


def test_a_sheet_with_sender_and_message_columns_is_a_chat(tmp_path: Path) -> None:
    rows = [
        ["Thời gian", "Người gửi", "Nội dung"],
        ["07:45", "Lan", "Rau về trễ."],
        ["", "", ""],
        ["07:52", "Anh Khoa", "Em sẽ gọi nhà cung cấp."],
    ]
    (doc,) = _docs(_read(tmp_path, "zalo.csv", _csv(rows)))
    assert (doc.kind, doc.source_uri) == ("chat", "saigon-foods/zalo.csv")
    assert [(t.speaker, t.timestamp, doc.text[t.start : t.end]) for t in doc.turns] == [
        ("Lan", "07:45", "Rau về trễ."),
        ("Anh Khoa", "07:52", "Em sẽ gọi nhà cung cấp."),
    ]


def test_any_other_table_becomes_a_chat_whose_rows_are_labelled_turns(tmp_path: Path) -> None:
    rows = [["Order", "Status", "Note"], ["SO-88412", "late", "supplier delay"], ["SO-88413", "ok", ""]]
    (doc,) = _docs(_read(tmp_path, "orders.csv", _csv(rows)))
    assert doc.kind == "chat"
    assert [doc.text[t.start : t.end] for t in doc.turns] == [
        "Order: SO-88412 | Status: late | Note: supplier delay",
        "Order: SO-88413 | Status: ok",
    ]


def test_utf8_bom_and_crlf_are_tolerated(tmp_path: Path) -> None:
    data = "\ufeff" + _csv(_long_rows()).replace("\n", "\r\n")
    lan, _ = _docs(_read(tmp_path, "excel-export.csv", data))
    assert [lan.text[t.start : t.end] for t in lan.turns] == LAN


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("Name,Date\n", "no rows below its header"),
        (b"Name,Note\nLan,\xff\xfe\n", "invalid UTF-8"),
        (b"", "empty file"),
    ],
)
def test_unreadable_csv_is_one_clear_failure(tmp_path: Path, content: str | bytes, reason: str) -> None:
    (failure,) = _read(tmp_path, "bad.csv", content)
    assert isinstance(failure, ReadFailure)
    assert reason in failure.reason


def test_csv_records_are_json_shaped() -> None:
    (record,) = csv_records(_csv([["Member", "Question", "Answer"], ["Lan", "Plans?", "Ship it."]]))
    assert record.kind == "pulse"
    assert record.fragment == "row2"
    assert record.data == {"author": "Lan", "date": None, "answers": [{"question": "Plans?", "answer": "Ship it."}]}


# ---------------------------------------------------------------------------------------------------- Excel


def test_workbook_sheets_are_read_separately_with_their_names(tmp_path: Path) -> None:
    data = _workbook(
        {
            "Check-in": [
                ["Dấu thời gian", "Họ tên", *QUESTIONS],
                [datetime(2026, 12, 1, 8, 5), "Lan", *LAN],
                [datetime(2026, 12, 1), "Minh", *MINH[:2], None],
            ],
            "Zalo": [["Time", "Sender", "Message"], ["08:10", "Minh", "Khách có thể hủy đơn."]],
            "Empty": [],
        }
    )
    lan, minh, chat = _docs(_read(tmp_path, "2026-12-01-report.xlsx", data))
    assert lan.source_uri == "saigon-foods/2026-12-01-report.xlsx#Check-in!row2"
    assert lan.doc_date == date(2026, 12, 1)
    assert lan.metadata["date"] == "2026-12-01 08:05:00"
    assert minh.metadata["date"] == "2026-12-01"  # a midnight datetime is a plain date
    assert [lan.text[t.start : t.end] for t in lan.turns] == LAN
    assert (chat.kind, chat.source_uri, chat.title) == ("chat", "saigon-foods/2026-12-01-report.xlsx#Zalo", "Zalo")


def test_excel_numbers_and_formulas_read_as_people_see_them(tmp_path: Path) -> None:
    data = _workbook({"S": [["Item", "Qty", "Price"], ["boxes", 3.0, 12.5], ["total", "=B2*2", True]]})
    (doc,) = _docs(_read(tmp_path, "stock.xlsx", data))
    assert [doc.text[t.start : t.end] for t in doc.turns] == [
        "Item: boxes | Qty: 3 | Price: 12.5",
        "Item: total | Price: True",  # a formula never computed by Excel has no cached value
    ]


def test_every_row_and_column_is_read_whatever_size_the_sheet_says_it_has(tmp_path: Path) -> None:
    """A sheet's `<dimension>` is written by whatever saved it and may be wrong (here: one cell): the rows and
    columns outside it are read all the same, none dropped."""
    header: list[object] = ["Sender", "Message", "Note"]
    data = _workbook({"S": [header, ["Lan", "Giao trước thứ hai.", "gấp"], ["Minh", "Kiểm kho."]]})
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for entry in source.infolist():
            part = source.read(entry)
            if entry.filename == "xl/worksheets/sheet1.xml":
                assert b'<dimension ref="A1:C3"' in part
                part = part.replace(b'<dimension ref="A1:C3"', b'<dimension ref="A1:A1"')
            target.writestr(entry, part)
    (chat,) = _docs(_read(tmp_path, "chat.xlsx", out.getvalue()))
    assert [chat.text[t.start : t.end] for t in chat.turns] == ["Giao trước thứ hai.", "Kiểm kho."]
    assert [t.speaker for t in chat.turns] == ["Lan", "Minh"]


@pytest.mark.parametrize("content", [b"", b"PK\x03\x04 not really a zip", b"plain text saved as xlsx"])
def test_a_broken_workbook_is_a_failure_not_a_crash(tmp_path: Path, content: bytes) -> None:
    (failure,) = _read(tmp_path, "broken.xlsx", content)
    assert isinstance(failure, ReadFailure)
    assert failure.reason.startswith("not a readable Excel workbook")
    with pytest.raises(SheetError):
        xlsx_records(content)


def test_a_workbook_of_empty_sheets_is_a_failure(tmp_path: Path) -> None:
    (failure,) = _read(tmp_path, "empty.xlsx", _workbook({"A": [], "B": [[None, None]]}))
    assert isinstance(failure, ReadFailure)
    assert "no rows" in failure.reason


def _one_string_on_every_row(rows: int) -> bytes:
    """A workbook whose sheet refers `rows` times to one shared string of a million characters (just under the zip
    checks' size floor). openpyxl writes inline strings, so the shared-string table and its references are added."""
    workbook = openpyxl.Workbook()
    workbook.active.append(["note"])
    written = io.BytesIO()
    workbook.save(written)
    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    strings = (
        f'<sst xmlns="{main}" count="2" uniqueCount="2"><si><t>note</t></si><si><t>{"x" * 1_000_000}</t></si></sst>'
    )
    cells = "".join(f'<row r="{n}"><c r="A{n}" t="s"><v>1</v></c></row>' for n in range(2, rows + 2))
    relation = (
        '<Relationship Id="rIdStrings" Target="sharedStrings.xml" '
        'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings"/>'
    )
    override = (
        '<Override PartName="/xl/sharedStrings.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(written) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for entry in source.infolist():
            part = source.read(entry).decode()
            if entry.filename == "xl/worksheets/sheet1.xml":
                part = part.replace("</row></sheetData>", "</row>" + cells + "</sheetData>")
                part = part.replace('<dimension ref="A1:A1"', f'<dimension ref="A1:A{rows + 1}"')
            elif entry.filename == "xl/_rels/workbook.xml.rels":
                part = part.replace("</Relationships>", relation + "</Relationships>")
            elif entry.filename == "[Content_Types].xml":
                part = part.replace("</Types>", override + "</Types>")
            target.writestr(entry.filename, part)
        target.writestr("xl/sharedStrings.xml", strings)
    return out.getvalue()


def test_one_shared_string_referenced_by_every_row_is_capped_not_a_document_of_gigabytes(tmp_path: Path) -> None:
    """A few KB of file that would become a document of 100 million characters: a dead letter with its reason."""
    bomb = tmp_path / "acme" / "bomb.xlsx"
    bomb.parent.mkdir()
    bomb.write_bytes(_one_string_on_every_row(100))
    assert bomb.stat().st_size < 100_000
    [failure] = read_file(bomb, "acme", "acme/bomb.xlsx")
    assert isinstance(failure, ReadFailure)
    assert failure.reason == f"sheet text larger than {MAX_TEXT_CHARS} characters"
