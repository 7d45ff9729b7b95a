"""Spreadsheets in the inbox (CSV, Excel .xlsx): the "chaos import" of check-ins kept outside the app.

Owners keep check-ins in sheets and paste chat exports into them. A sheet of pulse answers becomes
pulse records shaped exactly like a pulse JSON file, so the pulse reader lays them out and they are
extracted like check-ins typed into the app; any other sheet becomes one chat record whose rows are
messages (turns). `sheet_documents` lays those records out through the JSON formats' pulse and chat readers.

Pulse layouts recognised (header row first, column names in English, Vietnamese, Chinese, Russian):
- long: one row per answer, with question and answer columns (and member / date columns), grouped
  into one pulse per (member, date);
- wide: one row per check-in, member and/or date columns and one column per question (at least one
  header is a question ending in "?").
"""

from __future__ import annotations

import csv
import functools
import io
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Literal

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers.json_formats import chat_document, pulse_document
from extraction_assets.lib.readers.record import MAX_TEXT_CHARS, ReadBudget, RecordContext, Rejected, Unreadable

Role = Literal["member", "date", "question", "answer", "time", "message"]

# Header names per column role, compared case-insensitively after trimming ":" and spaces.
_ROLE_NAMES: dict[Role, frozenset[str]] = {
    "member": frozenset({
        "member", "author", "name", "full name", "sender", "from", "người", "tên", "họ tên", "họ và tên",
        "thành viên", "nhân viên", "người gửi", "姓名", "成员", "员工", "名字", "发送者", "发送人",
        "участник", "сотрудник", "имя", "фио", "автор", "отправитель",
    }),
    "date": frozenset({"date", "day", "ngày", "ngày báo cáo", "日期", "дата"}),
    "time": frozenset({"time", "timestamp", "thời gian", "giờ", "dấu thời gian", "时间", "时间戳", "время"}),
    "question": frozenset({"question", "câu hỏi", "问题", "вопрос"}),
    "answer": frozenset({"answer", "reply", "trả lời", "câu trả lời", "回答", "答案", "ответ"}),
    "message": frozenset({
        "message", "text", "content", "nội dung", "tin nhắn", "内容", "消息", "сообщение", "текст",
    }),
}  # fmt: skip
_QUESTION_ENDINGS = ("?", "？")
_CSV_DELIMITERS = ",;\t|"


class SheetError(Unreadable, ValueError):
    """A spreadsheet that cannot be read at all; the message says why."""


@dataclass(frozen=True)
class SheetRecord:
    """One future document: `data` has the JSON shape the pulse or chat reader accepts."""

    kind: Literal["pulse", "chat"]
    fragment: str | None  # appended to the file's source_uri after "#", e.g. "row2" or "Team A!row5"
    data: dict[str, Any]


@dataclass(frozen=True)
class _Table:
    name: str | None  # the worksheet title; None for CSV
    rows: list[tuple[int, list[str]]]  # (1-based row number in the sheet, cells as text)


def csv_records(text: str, budget: ReadBudget | None = None) -> list[SheetRecord]:
    """Records of a decoded CSV file; the delimiter (comma, semicolon, tab, bar) is sniffed. Rows are read one at a
    time and counted in the file's `budget`: reading stops at its bound, whatever the rows' shape."""
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:8192], delimiters=_CSV_DELIMITERS)
    except csv.Error:
        dialect = csv.excel  # one column, or too little text to tell
    try:
        rows = _numbered(csv.reader(io.StringIO(text), dialect), budget or ReadBudget())
    except csv.Error as exc:
        raise SheetError(f"malformed CSV: {exc}") from None
    return _sheet_records(_Table(None, rows))


MAX_UNZIPPED_BYTES = 64 * 1024 * 1024  # a workbook's parts, uncompressed, all together
MAX_ZIP_RATIO = 200  # uncompressed / compressed size of one part; real sheets stay far below


def _check_zip_bounds(data: bytes) -> None:
    """Refuse a decompression bomb before anything is inflated: sizes come from the zip's own directory."""
    try:
        entries = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise SheetError(f"not a readable Excel workbook ({type(exc).__name__}: {exc})") from None
    total = sum(e.file_size for e in entries)
    if total > MAX_UNZIPPED_BYTES:
        raise SheetError(f"workbook too large when unpacked ({total} bytes, limit {MAX_UNZIPPED_BYTES})")
    for entry in entries:
        if entry.file_size > 1024 * 1024 and entry.file_size > MAX_ZIP_RATIO * max(entry.compress_size, 1):
            ratio = entry.file_size // max(entry.compress_size, 1)
            raise SheetError(f"decompression bomb: {entry.filename} unpacks {ratio}x (limit {MAX_ZIP_RATIO}x)")


def xlsx_records(data: bytes, budget: ReadBudget | None = None) -> list[SheetRecord]:
    """Records of every worksheet of an Excel workbook (cached values, not formulas), within the zip bounds; rows
    are read one at a time (openpyxl's read-only mode) and counted in the file's `budget`."""
    _check_zip_bounds(data)
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = _load_workbook()(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError) as exc:
        raise SheetError(f"not a readable Excel workbook ({type(exc).__name__}: {exc})") from None
    budget = budget or ReadBudget()
    try:
        tables = [
            _Table(sheet.title, _numbered(_capped(sheet.iter_rows(values_only=True)), budget))
            for sheet in workbook.worksheets
        ]
    finally:
        workbook.close()
    return [record for table in tables for record in _sheet_records(table)]


@functools.cache
def _load_workbook() -> Callable[..., Any]:
    """openpyxl's `load_workbook` (~0.2 s to import: loaded with the first workbook, not with every inbox walk), its
    read-only sheets left unsized. openpyxl sizes each read-only sheet as it opens the workbook, from the sheet's
    `<dimension>` element; a sheet without one (which the format allows) it parses whole to find where it starts
    (a million one-cell rows: about 5 CPU-s before the first row is read and the file's budget is asked). Unsized,
    as openpyxl's documented `reset_dimensions()` leaves a sheet, rows are read until the last, so reading stops at
    the budget; and a wrong `<dimension>` no longer cuts rows or columns off."""
    import openpyxl
    from openpyxl.reader import excel
    from openpyxl.worksheet._read_only import ReadOnlyWorksheet

    class UnsizedSheet(ReadOnlyWorksheet):
        def _get_size(self) -> None:
            """Not sized before reading."""

    excel.ReadOnlyWorksheet = UnsizedSheet  # the class openpyxl's reader opens read-only sheets with
    return openpyxl.load_workbook


def _capped(rows: Iterable[Iterable[object]]) -> Iterator[list[str]]:
    """The rows' cells as text, stopped once they hold more than `MAX_TEXT_CHARS` characters in all: one shared
    string referenced by every row passes the zip checks and would become a document of gigabytes."""
    total = 0
    for row in rows:
        cells = [_cell_text(v) for v in row]
        total += sum(len(c) for c in cells)
        if total > MAX_TEXT_CHARS:
            raise SheetError(f"sheet text larger than {MAX_TEXT_CHARS} characters")
        yield cells


def _sheet_records(table: _Table) -> list[SheetRecord]:
    """Pulse records when the header says the sheet holds check-ins, else one chat record."""
    if not table.rows:
        return []
    (_, header), body = table.rows[0], table.rows[1:]
    roles = _roles(header)
    if "question" in roles and "answer" in roles:
        return _long_pulses(table.name, roles, body)
    who_or_when = {"member", "date", "time"} & roles.keys()
    if who_or_when and any(h.strip().endswith(_QUESTION_ENDINGS) for h in header):
        return _wide_pulses(table.name, header, roles, body)
    return _chat(table.name, header, roles, body)


# ---------------------------------------------------------------------------------------------------------
# layouts
# ---------------------------------------------------------------------------------------------------------


def _long_pulses(name: str | None, roles: dict[Role, int], body: Sequence[tuple[int, list[str]]]) -> list[SheetRecord]:
    """One pulse per (member, date), answers in row order; the first row of a group names it."""
    groups: dict[tuple[str, str], tuple[int, list[dict[str, str]]]] = {}
    for number, cells in body:
        key = (_cell(cells, roles.get("member")), _cell(cells, roles.get("date")))
        _, answers = groups.setdefault(key, (number, []))
        answers.append({"question": _cell(cells, roles["question"]), "answer": _cell(cells, roles["answer"])})
    return [
        SheetRecord("pulse", _fragment(name, f"row{first}"), _pulse(member, when, answers))
        for (member, when), (first, answers) in groups.items()
    ]


def _wide_pulses(
    name: str | None, header: list[str], roles: dict[Role, int], body: Sequence[tuple[int, list[str]]]
) -> list[SheetRecord]:
    """One pulse per row; every column that is not the member or the date is a question."""
    meta_columns = {roles[r] for r in ("member", "date", "time") if r in roles}
    questions = [(i, h.strip()) for i, h in enumerate(header) if i not in meta_columns and h.strip()]
    records = []
    for number, cells in body:
        answers = [{"question": q, "answer": _cell(cells, i)} for i, q in questions]
        when = _cell(cells, roles.get("date")) or _cell(cells, roles.get("time"))
        records.append(
            SheetRecord(
                "pulse", _fragment(name, f"row{number}"), _pulse(_cell(cells, roles.get("member")), when, answers)
            )
        )
    return records


def _chat(
    name: str | None, header: list[str], roles: dict[Role, int], body: Sequence[tuple[int, list[str]]]
) -> list[SheetRecord]:
    """The whole sheet as one chat: each row a message (its message column, or all its cells labelled)."""
    meta_columns = {roles[r] for r in ("member", "time", "date") if r in roles}
    messages = []
    for _, cells in body:
        if "message" in roles:
            text = _cell(cells, roles["message"])
        else:
            labelled = [
                f"{header[i].strip()}: {value}" if i < len(header) and header[i].strip() else value
                for i, value in enumerate(cells)
                if value and i not in meta_columns
            ]
            text = " | ".join(labelled)
        if not text:
            continue
        when = " ".join(p for p in (_cell(cells, roles.get("date")), _cell(cells, roles.get("time"))) if p)
        messages.append({"sender": _cell(cells, roles.get("member")) or None, "time": when or None, "text": text})
    if not messages:
        return []
    return [SheetRecord("chat", name, {"title": name, "messages": messages})]


# ---------------------------------------------------------------------------------------------------------
# cells
# ---------------------------------------------------------------------------------------------------------


def _pulse(member: str, when: str, answers: list[dict[str, str]]) -> dict[str, Any]:
    return {"author": member or None, "date": when or None, "answers": answers}


def _fragment(sheet: str | None, where: str) -> str:
    return f"{sheet}!{where}" if sheet else where


def _roles(header: list[str]) -> dict[Role, int]:
    """The first column of each role; a header cell has at most one role."""
    found: dict[Role, int] = {}
    for index, cell in enumerate(header):
        label = cell.strip().rstrip(":：").strip().casefold()
        for role, names in _ROLE_NAMES.items():
            if label in names and role not in found:
                found[role] = index
                break
    return found


def _numbered(rows: Iterable[list[str]], budget: ReadBudget) -> list[tuple[int, list[str]]]:
    """Rows with their sheet row numbers, cells trimmed; blank rows are dropped, the others counted in `budget`."""
    numbered = []
    for number, row in enumerate(rows, start=1):
        cells = [c.strip() for c in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            budget.row("rows")
            numbered.append((number, cells))
    return numbered


def _cell(cells: list[str], index: int | None) -> str:
    return cells[index] if index is not None and index < len(cells) else ""


def _cell_text(value: object) -> str:
    """A cell as people see it: dates in ISO form, whole numbers without ".0", nothing for empty cells."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(sep=" ")
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def sheet_documents(records: list[SheetRecord], ctx: RecordContext) -> list[Document | ReadFailure]:
    """Sheet records through the pulse and chat readers; a bad record costs only itself, like a JSONL line."""
    if not records:
        raise Rejected("spreadsheet has no rows below its header")
    out: list[Document | ReadFailure] = []
    for record in records:
        uri = f"{ctx.source_uri}#{record.fragment}" if record.fragment else ctx.source_uri
        try:
            if record.kind == "pulse":
                out.append(pulse_document(record.data, ctx, source_uri=uri))
            else:
                out.append(chat_document(record.data, ctx, source_uri=uri))
        except Rejected as exc:
            out.append(ReadFailure(tenant_id=ctx.tenant_id, source_uri=uri, reason=str(exc)))
    return out


def read_csv(text: str, ctx: RecordContext) -> list[Document | ReadFailure]:
    """A CSV file's rows as check-ins or chats (`sheet_documents`)."""
    return sheet_documents(csv_records(text, ctx.budget), ctx)


def read_xlsx(data: bytes, ctx: RecordContext) -> list[Document | ReadFailure]:
    """An Excel workbook's rows as check-ins or chats (`sheet_documents`)."""
    return sheet_documents(xlsx_records(data, ctx.budget), ctx)
