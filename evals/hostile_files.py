"""Files of many tiny rows, each shape a reader builds per-row objects for: within the file size limit, they would
hold millions of rows, lines, messages, answers or turns (for the tests and the hostile-inbox benchmark)."""

from __future__ import annotations

import json
import random
import zipfile
from collections.abc import Callable
from pathlib import Path

_XLSX_PARTS = {
    "[Content_Types].xml": (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships'
        '+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override '
        'PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.'
        'spreadsheetml.worksheet+xml"/></Types>'
    ),
    "_rels/.rels": (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
    ),
    "xl/workbook.xml": (
        '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
        'main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" '
        'sheetId="1" r:id="rId1"/></sheets></workbook>'
    ),
    "xl/_rels/workbook.xml.rels": (
        '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
    ),
}


def tiny_rows_xlsx(path: Path, rows: int) -> Path:
    """A workbook of `rows` one-number rows, inside the zip bounds: no row or cell references, numbers that do not
    repeat (1 M rows: about 4 MB packed, 31 MB unpacked)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    numbers = random.Random(7)
    body = "".join(f"<row><c><v>{numbers.randrange(10**6)}</v></c></row>" for _ in range(rows))
    sheet = (
        '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/'
        f'main"><sheetData>{body}</sheetData></worksheet>'
    )
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in {**_XLSX_PARTS, "xl/worksheets/sheet1.xml": sheet}.items():
            archive.writestr(name, text)
    return path


def tiny_rows(path: Path, count: int) -> Path:
    """`count` records of the file's format (by its name), each as small as the format allows."""
    name = path.name
    if name.endswith(".xlsx"):
        return tiny_rows_xlsx(path, count)
    # built on demand: only the asked shape (building all of them for 4 M rows took about 3 CPU-s)
    shapes: dict[str, Callable[[], bytes]] = {
        ".csv": lambda: b"a\n" * count,  # one chat, a message a row
        "wide.csv": lambda: b"name,Q1?\n" + b"a,b\n" * count,  # a wide pulse sheet: a check-in a row
        ".jsonl": lambda: b"{}\n" * count,  # lines that are no check-in
        ".mbox": lambda: b"From a\n\nx\n" * count,
        ".txt": lambda: b"[1:00] A: x\n" * count,  # a pasted chat
        ".json": lambda: b'{"messages":[' + b",".join([b'{"text":"a"}'] * count) + b"]}",
        "pulse.json": lambda: json.dumps({"answers": [{"question": "q", "answer": "a"}] * count}).encode(),
        ".eml": lambda: b"From: a@example.org\nSubject: s\n\n" + b"a\n" * count,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(shapes[name if name in shapes else path.suffix]())
    return path
