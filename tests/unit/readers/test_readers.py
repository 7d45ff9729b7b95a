"""Readers: text layout, exact turn offsets, deterministic ids, and every failure as a ReadFailure."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import html_to_text, read_file, read_inbox
from extraction_assets.lib.readers import inbox as readers
from extraction_assets.lib.readers import text as text_reader

SAMPLE_INBOX = Path(__file__).resolve().parents[3] / "extraction_assets" / "sample_inbox"

VI_ANSWERS = [
    ("Hôm nay bạn sẽ làm gì?", "Tôi sẽ gửi báo giá trước thứ hai tuần sau."),
    ("Có rủi ro nào không?", "Chờ vật tư, khách hủy đơn nếu trễ; có thể bị phạt 5%."),
    ("Bạn cần ai quyết định?", "Cần anh quyết định, em không có quyền."),
]


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def read_one(path: Path, tenant: str = "acme", uri: str | None = None) -> Document | ReadFailure:
    results = read_file(path, tenant, uri or f"{tenant}/{path.name}")
    assert len(results) == 1, results
    return results[0]


def read_doc(path: Path, tenant: str = "acme", uri: str | None = None) -> Document:
    result = read_one(path, tenant, uri)
    assert isinstance(result, Document), result
    return result


def read_fail(path: Path, tenant: str = "acme", uri: str | None = None) -> ReadFailure:
    return failed(read_one(path, tenant, uri))


def failed(result: Document | ReadFailure) -> ReadFailure:
    """A result that must be a failure (to read its reason)."""
    assert isinstance(result, ReadFailure), result
    return result


def pulse_obj(answers=VI_ANSWERS, **extra) -> dict:
    return {**extra, "answers": [{"question": q, "answer": a} for q, a in answers]}


def source_turn_texts(inbox: Path, doc: Document) -> list[str]:
    """The turn contents straight from the raw JSON / JSONL record the document came from."""
    rel, _, line = doc.source_uri.partition("#L")
    raw = (inbox / rel).read_text(encoding="utf-8")
    obj = json.loads(raw.splitlines()[int(line) - 1] if line else raw)
    if doc.kind == "pulse":
        return [a["answer"] for a in obj["answers"]]
    if doc.kind == "chat":
        return [m["text"] for m in obj["messages"]]
    return [t["text"] for t in obj["turns"]]


# ---------------------------------------------------------------------------------------------- text / markdown


def test_txt_strips_bom_and_normalises_newlines(tmp_path: Path) -> None:
    path = write(tmp_path, "note.txt", b"\xef\xbb\xbfCall notes\r\nI will send the quote by Friday.\rDone.\r\n")
    doc = read_doc(path, uri="acme/note.txt")
    assert doc.kind == "text"
    assert doc.text == "Call notes\nI will send the quote by Friday.\nDone.\n"
    assert doc.title == "Call notes"
    assert doc.turns == []
    assert doc.source_uri == "acme/note.txt"
    assert doc.tenant_id == "acme"
    assert doc.doc_id == Document.make_id("acme", "text", doc.text)


def test_markdown_title_is_first_heading_and_name_date_is_doc_date(tmp_path: Path) -> None:
    path = write(tmp_path, "2026-11-24-standup.md", "Some preamble\n\n## Ops stand-up ##\n- Dana will send it.\n")
    doc = read_doc(path)
    assert doc.kind == "text"
    assert doc.title == "Ops stand-up"
    assert doc.doc_date == date(2026, 11, 24)
    assert doc.metadata["format"] == "markdown"


def test_vietnamese_text_is_kept_byte_for_byte_including_decomposed_forms(tmp_path: Path) -> None:
    nfc = "Em đảm bảo giao hàng trước 10h, khách hủy đơn nếu trễ.\n"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc
    assert read_doc(write(tmp_path, "a.txt", nfc)).text == nfc
    assert read_doc(write(tmp_path, "b.txt", nfd)).text == nfd  # no silent re-normalisation


# ---------------------------------------------------------------------------------------------- pulse (.json)


def test_pulse_json_layout_offsets_and_fields(tmp_path: Path) -> None:
    obj = pulse_obj(author="Nguyễn Thị Lan", date="2026-11-23", language="vi")
    doc = read_doc(write(tmp_path, "p.json", json.dumps(obj, ensure_ascii=False)), tenant="saigon-foods")
    expected = "".join(f"{q}\n{a}\n\n" for q, a in VI_ANSWERS)
    assert doc.kind == "pulse"
    assert doc.text == expected
    assert [t.turn_id for t in doc.turns] == ["a1", "a2", "a3"]
    for turn, (question, answer) in zip(doc.turns, VI_ANSWERS, strict=True):
        assert doc.text[turn.start : turn.end] == answer
        assert turn.question == question
        assert turn.speaker == "Nguyễn Thị Lan"
        assert turn.timestamp is None
        # the question sits on the line right before the answer
        assert doc.text[: turn.start].endswith(f"{question}\n")
    assert doc.doc_date == date(2026, 11, 23)
    assert doc.title == "Pulse: Nguyễn Thị Lan 2026-11-23"
    assert doc.metadata == {"author": "Nguyễn Thị Lan", "date": "2026-11-23", "language": "vi"}


def test_pulse_accepts_member_key_multiline_and_empty_answers(tmp_path: Path) -> None:
    answers = [("Blockers?", "Supplier delay.\r\nStill waiting on brackets."), ("Anything else?", "")]
    doc = read_doc(write(tmp_path, "p.json", json.dumps(pulse_obj(answers, member="Marcus"))))
    assert doc.turns[0].speaker == "Marcus"
    assert doc.text[doc.turns[0].start : doc.turns[0].end] == "Supplier delay.\nStill waiting on brackets."
    assert doc.text[doc.turns[1].start : doc.turns[1].end] == ""
    assert doc.doc_date is None
    assert doc.title == "Pulse: Marcus"


def test_pulse_with_datetime_date(tmp_path: Path) -> None:
    obj = pulse_obj(author="Dana", date="2026-11-24T17:30:00+07:00")
    assert read_doc(write(tmp_path, "p.json", json.dumps(obj))).doc_date == date(2026, 11, 24)


@pytest.mark.parametrize(
    ("obj", "reason"),
    [
        ({"answers": []}, "pulse 'answers' must be a non-empty list"),
        ({"answers": "nope"}, "pulse 'answers' must be a non-empty list"),
        ({"answers": [{"question": "Q"}]}, "pulse answer 1 needs string 'question' and 'answer'"),
        ({"answers": ["x"]}, "pulse answer 1 is not an object"),
        ({"answers": [{"question": "Q", "answer": "  "}]}, "pulse has no non-empty answers"),
    ],
)
def test_bad_pulse_shapes_fail_clearly(tmp_path: Path, obj: dict, reason: str) -> None:
    assert read_fail(write(tmp_path, "p.json", json.dumps(obj))).reason == reason


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    answers=st.lists(
        st.tuples(st.text(max_size=30), st.text(min_size=1, max_size=60).filter(str.strip)), min_size=1, max_size=6
    ),
    author=st.text(max_size=20),
)
def test_pulse_offsets_round_trip_for_any_text(tmp_path: Path, answers: list[tuple[str, str]], author: str) -> None:
    path = write(tmp_path, "prop.json", json.dumps(pulse_obj(answers, author=author)))
    doc = read_doc(path)
    for turn, (_, answer) in zip(doc.turns, answers, strict=True):
        assert doc.text[turn.start : turn.end] == answer.replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------------------------------------- chat


def test_chat_export_layout_and_offsets(tmp_path: Path) -> None:
    messages = [
        {"sender": "Marcus", "time": "2026-11-25T07:58:00-08:00", "text": "We're overloaded again."},
        {"sender": "Sam", "time": "2026-11-25T08:20:00-08:00", "text": "Should we bring in temps?"},
    ]
    obj = {"channel": "#ops", "messages": messages}
    doc = read_doc(write(tmp_path, "c.json", json.dumps(obj)))
    assert doc.kind == "chat"
    assert doc.text == (
        "[2026-11-25T07:58:00-08:00] Marcus: We're overloaded again.\n"
        "[2026-11-25T08:20:00-08:00] Sam: Should we bring in temps?\n"
    )
    assert [t.turn_id for t in doc.turns] == ["m1", "m2"]
    for turn, msg in zip(doc.turns, messages, strict=True):
        assert doc.text[turn.start : turn.end] == msg["text"]
        assert turn.speaker == msg["sender"]
        assert turn.timestamp == msg["time"]
    assert doc.doc_date == date(2026, 11, 25)
    assert doc.title == "#ops"
    assert doc.metadata["channel"] == "#ops"
    assert doc.metadata["participants"] == ["Marcus", "Sam"]


def test_chat_with_from_timestamp_keys_and_vietnamese(tmp_path: Path) -> None:
    messages = [
        {"from": "Lê Thị Hoa", "timestamp": "2026-11-26 08:05", "text": "Dạ em đảm bảo giao hàng đúng giờ."},
        {"from": "Phạm Quốc Bảo", "timestamp": "hôm qua", "text": "Em không có quyền duyệt, cần anh quyết định."},
    ]
    doc = read_doc(write(tmp_path, "c.json", json.dumps({"title": "Nhóm kho", "messages": messages})))
    assert doc.title == "Nhóm kho"
    assert doc.text.splitlines()[0] == "[2026-11-26 08:05] Lê Thị Hoa: Dạ em đảm bảo giao hàng đúng giờ."
    assert [doc.text[t.start : t.end] for t in doc.turns] == [m["text"] for m in messages]
    assert doc.doc_date == date(2026, 11, 26)


def test_chat_unparseable_first_time_gives_no_date(tmp_path: Path) -> None:
    obj = {"messages": [{"sender": "A", "time": "28/11 9am", "text": "hi"}]}
    assert read_doc(write(tmp_path, "c.json", json.dumps(obj))).doc_date is None


# ---------------------------------------------------------------------------------------------- transcript


def test_transcript_ids_from_file_and_fallback(tmp_path: Path) -> None:
    turns = [
        {"turn_id": "T1", "speaker": "Sam", "text": "Where are we on the delay?"},
        {"id": "T2", "speaker": "Dana", "text": "I will confirm with Rita by 3pm."},
        {"speaker": "Priya", "text": "Cascade could slip too."},
    ]
    obj = {"title": "Supplier review", "date": "2026-11-27", "turns": turns}
    doc = read_doc(write(tmp_path, "t.json", json.dumps(obj)))
    assert doc.kind == "transcript"
    assert doc.text == (
        "Sam: Where are we on the delay?\nDana: I will confirm with Rita by 3pm.\nPriya: Cascade could slip too.\n"
    )
    assert [t.turn_id for t in doc.turns] == ["T1", "T2", "t3"]
    assert [doc.text[t.start : t.end] for t in doc.turns] == [t["text"] for t in turns]
    assert [t.speaker for t in doc.turns] == ["Sam", "Dana", "Priya"]
    assert doc.doc_date == date(2026, 11, 27)
    assert doc.title == "Supplier review"


def test_transcript_duplicate_ids_fail(tmp_path: Path) -> None:
    obj = {"turns": [{"id": "1", "speaker": "A", "text": "x"}, {"id": "1", "speaker": "B", "text": "y"}]}
    assert "used twice" in read_fail(write(tmp_path, "t.json", json.dumps(obj))).reason


def test_json_of_unknown_shape_fails(tmp_path: Path) -> None:
    for i, content in enumerate(['{"rows": [1, 2]}', "[1, 2, 3]", '"just a string"']):
        failure = read_fail(write(tmp_path, f"x{i}.json", content))
        assert failure.reason == "JSON is not a pulse, chat export or transcript"


# ---------------------------------------------------------------------------------------------- JSONL


def test_jsonl_bad_lines_are_isolated(tmp_path: Path) -> None:
    good1 = json.dumps(pulse_obj(author="Bảo", date="2026-11-26"), ensure_ascii=False)
    good2 = json.dumps(pulse_obj(author="Hoa", date="2026-11-27"), ensure_ascii=False)
    lines = [good1, '{"answers": [ broken', "", json.dumps({"messages": []}), good2]
    path = write(tmp_path, "week.jsonl", "\n".join(lines) + "\n")
    results = read_file(path, "saigon-foods", "saigon-foods/pulses/week.jsonl")
    docs = [r for r in results if isinstance(r, Document)]
    fails = [r for r in results if isinstance(r, ReadFailure)]
    assert [d.source_uri for d in docs] == ["saigon-foods/pulses/week.jsonl#L1", "saigon-foods/pulses/week.jsonl#L5"]
    assert [d.doc_date for d in docs] == [date(2026, 11, 26), date(2026, 11, 27)]
    assert all(d.kind == "pulse" for d in docs)
    assert [f.source_uri for f in fails] == ["saigon-foods/pulses/week.jsonl#L2", "saigon-foods/pulses/week.jsonl#L4"]
    assert fails[0].reason.startswith("malformed JSON at line 2 col ")
    assert fails[1].reason == "JSONL record is not a pulse check-in"
    for doc in docs:
        assert [doc.text[t.start : t.end] for t in doc.turns] == [a for _, a in VI_ANSWERS]


def test_jsonl_invalid_utf8_line_is_isolated(tmp_path: Path) -> None:
    good = json.dumps(pulse_obj(author="A")).encode()
    path = write(tmp_path, "w.jsonl", good + b"\n" + b'{"author": "\xff"}\n' + good + b"\n")
    results = read_file(path, "acme", "acme/w.jsonl")
    assert [type(r).__name__ for r in results] == ["Document", "ReadFailure", "Document"]
    failure = results[1]
    assert isinstance(failure, ReadFailure)
    assert failure.source_uri == "acme/w.jsonl#L2"
    assert failure.reason.startswith(f"invalid UTF-8 at byte offset {len(good) + 1 + 12}")


# ---------------------------------------------------------------------------------------------- e-mail

PLAIN_EML = """Message-ID: <q-1@acme.test>
Date: Tue, 24 Nov 2026 09:15:00 -0800
From: Dana Whitfield <dana@acme.test>
To: Sam Patel <sam@acme.test>
Subject: Brightline quote
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Hi Sam,
I will send the quote by Friday. Need your approval on the discount.
"""


def test_plain_email_layout_and_metadata(tmp_path: Path) -> None:
    doc = read_doc(write(tmp_path, "q.eml", PLAIN_EML.replace("\n", "\r\n")))
    assert doc.kind == "email"
    assert doc.text == (
        "From: Dana Whitfield <dana@acme.test>\n"
        "To: Sam Patel <sam@acme.test>\n"
        "Subject: Brightline quote\n"
        "Date: Tue, 24 Nov 2026 09:15:00 -0800\n"
        "\n"
        "Hi Sam,\nI will send the quote by Friday. Need your approval on the discount.\n"
    )
    # the extractable body is the document's one turn (quoted replies and signatures would be left out)
    assert [doc.text[t.start : t.end] for t in doc.turns] == [
        "Hi Sam,\nI will send the quote by Friday. Need your approval on the discount."
    ]
    assert doc.title == "Brightline quote"
    assert doc.doc_date == date(2026, 11, 24)
    assert doc.metadata == {
        "message_id": "<q-1@acme.test>",
        "from": "Dana Whitfield <dana@acme.test>",
        "to": "Sam Patel <sam@acme.test>",
        "subject": "Brightline quote",
        "date": "Tue, 24 Nov 2026 09:15:00 -0800",
    }


def test_email_only_present_headers_are_written(tmp_path: Path) -> None:
    eml = "From: a@acme.test\nContent-Type: text/plain\n\nsupplier delay\n"
    doc = read_doc(write(tmp_path, "m.eml", eml))
    assert doc.text == "From: a@acme.test\n\nsupplier delay\n"
    assert doc.doc_date is None
    assert doc.title is None


def test_multipart_alternative_prefers_plain(tmp_path: Path) -> None:
    eml = """From: rita@northwind.test
To: dana@acme.test
Subject: PO delay
Date: Wed, 25 Nov 2026 14:02:10 -0600
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="ALT"

--ALT
Content-Type: text/plain; charset=utf-8

Plain: shipping on 2026-12-14.
--ALT
Content-Type: text/html; charset=utf-8

<p>HTML: shipping on <b>2026-12-14</b>.</p>
--ALT--
"""
    doc = read_doc(write(tmp_path, "alt.eml", eml))
    assert doc.text.endswith("\n\nPlain: shipping on 2026-12-14.\n")
    assert "HTML:" not in doc.text


def test_html_only_email_gets_readable_text(tmp_path: Path) -> None:
    eml = """From: it@acme.test
To: jordan@acme.test
Subject: Rotation
MIME-Version: 1.0
Content-Type: text/html; charset=utf-8

<html><head><title>ignored title</title><style>p { color: red; }</style><script>var x = 1;</script></head>
<body><h2>Notice</h2><p>We will <strong>rotate</strong> the keys on 2026-11-29.</p>


<ul><li>Ticket IT-7731</li><li>Quota 95%</li></ul><p>Thanks,<br>IT &middot; desk</p></body></html>
"""
    doc = read_doc(write(tmp_path, "h.eml", eml))
    body = doc.text.split("\n\n", 1)[1]
    assert body == (
        "Notice\n\nWe will rotate the keys on 2026-11-29.\n\nTicket IT-7731\nQuota 95%\n\nThanks,\nIT · desk\n"
    )
    assert "color" not in doc.text and "var x" not in doc.text and "ignored title" not in doc.text


def test_html_to_text_collapses_blank_runs() -> None:
    assert html_to_text("<div>a</div>\n\n\n\n<div>b</div>") == "a\n\nb"


def test_encoded_vietnamese_headers_and_base64_body(tmp_path: Path) -> None:
    from email.message import EmailMessage

    msg = EmailMessage()
    msg["From"] = "Nguyễn Thị Lan <lan@saigonfoods.test>"
    msg["Subject"] = "Báo giá tháng 12"
    msg["Date"] = "Wed, 25 Nov 2026 16:45:00 +0700"
    msg.set_content("Tôi sẽ gửi báo giá trước thứ hai tuần sau.\n", charset="utf-8", cte="base64")
    doc = read_doc(write(tmp_path, "vi.eml", msg.as_bytes()), tenant="saigon-foods")
    assert doc.title == "Báo giá tháng 12"
    assert doc.metadata["from"] == "Nguyễn Thị Lan <lan@saigonfoods.test>"
    assert doc.text.endswith("\n\nTôi sẽ gửi báo giá trước thứ hai tuần sau.\n")
    assert doc.doc_date == date(2026, 11, 25)


@pytest.mark.parametrize(
    ("body", "defect"),
    [
        ("no boundary lines at all\n", "StartBoundaryNotFoundDefect"),
        ("--B\nContent-Type: text/plain\n\nhi\n", "CloseBoundaryNotFoundDefect"),
    ],
)
def test_broken_mime_is_a_failure_naming_the_defect(tmp_path: Path, body: str, defect: str) -> None:
    eml = f'From: x@acme.test\nSubject: s\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n{body}'
    failure = read_fail(write(tmp_path, "b.eml", eml))
    assert failure.reason.startswith("broken MIME: ")
    assert defect in failure.reason


def test_multipart_without_boundary_parameter_fails(tmp_path: Path) -> None:
    eml = "From: x@acme.test\nMIME-Version: 1.0\nContent-Type: multipart/mixed\n\nhello\n"
    assert "NoBoundaryInMultipartDefect" in read_fail(write(tmp_path, "b.eml", eml)).reason


def test_email_with_only_an_attachment_has_no_readable_body(tmp_path: Path) -> None:
    eml = """From: scanner@acme.test
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="B"

--B
Content-Type: application/pdf
Content-Disposition: attachment; filename="scan.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQK
--B--
"""
    assert "no readable body" in read_fail(write(tmp_path, "a.eml", eml)).reason


def test_eml_without_headers_is_rejected(tmp_path: Path) -> None:
    assert "not an e-mail" in read_fail(write(tmp_path, "n.eml", "just some words\nno headers\n")).reason


def test_email_body_with_wrong_charset_fails(tmp_path: Path) -> None:
    eml = b"From: a@acme.test\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: 8bit\n\ncaf\xe9\n"
    assert read_fail(write(tmp_path, "c.eml", eml)).reason == "e-mail body is not valid utf-8 at byte offset 3"


# ---------------------------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("scan.txt", b"%PDF-1.4\n\x00\x01\x02", "binary content (NUL byte at offset 9)"),
        ("old.txt", "Ghi chú".encode() + b" \xe0 cu", "invalid UTF-8 at byte offset 9 (bytes e0 20 63 75)"),
        ("bom.txt", b"\xef\xbb\xbfok \xff", "invalid UTF-8 at byte offset 6 (bytes ff)"),
        ("empty.md", b"", "empty file"),
        ("blank.txt", b"  \n\t\r\n", "empty file (whitespace only)"),
        ("nbsp.txt", "\u00a0\u3000\n".encode(), "empty file (whitespace only)"),
        ("blank.eml", b"\n\n", "empty file (whitespace only)"),
        ("bad.json", b'{\n  "answers": [\n    {"question": "Q" "answer": "A"}\n  ]\n}', None),
        ("report.pdf", b"%PDF", "not a PDF (no %PDF- header)"),
        ("Makefile", b"all:", "unsupported file type (no extension)"),
    ],
)
def test_each_failure_kind_has_a_specific_reason(tmp_path: Path, name: str, content: bytes, reason: str | None) -> None:
    failure = read_fail(write(tmp_path, name, content))
    if reason is None:  # malformed JSON: position matters more than wording
        assert failure.reason.startswith("malformed JSON at line 3 col 22: ")
    else:
        assert failure.reason == reason
    assert failure.tenant_id == "acme"
    assert failure.source_uri == f"acme/{name}"


def test_unreadable_file_is_a_failure(tmp_path: Path) -> None:
    folder = tmp_path / "looks-like.txt"
    folder.mkdir()
    assert read_fail(folder).reason.startswith("unreadable file: ")


def test_os_error_while_reading_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "ok.txt", "fine")

    def boom(path: Path, limit: int, *where: object) -> bytes:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(readers, "read_regular", boom)
    assert read_fail(path).reason == "unreadable file: Permission denied"


def test_oversized_file_is_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readers, "MAX_FILE_BYTES", 10)
    assert read_fail(write(tmp_path, "big.txt", "x" * 11)).reason == "file too large (11 bytes, limit 10)"


def test_unexpected_reader_error_becomes_a_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(*args: object, **kwargs: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr(text_reader, "read_text", explode)
    assert read_fail(write(tmp_path, "n.txt", "hello")).reason == "reader error: RuntimeError: bug"


# ---------------------------------------------------------------------------------------------- inbox walking


def test_read_inbox_tenants_order_hidden_and_failures_do_not_stop(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    write(inbox, "stray.txt", "no tenant")
    write(inbox, "acme/b/2.txt", "second")
    write(inbox, "acme/a.txt", "first")
    write(inbox, "acme/broken.json", "{oops")
    write(inbox, "acme/scan.txt", b"\x00\x00")
    write(inbox, "acme/.hidden.txt", "skip me")
    write(inbox, "acme/.cache/x.txt", "skip me too")
    write(inbox, ".git/config", "skip")
    write(inbox, "saigon-foods/ghi-chu.md", "Tôi sẽ gửi báo giá")
    everything = list(read_inbox(inbox))
    skipped = [(r.tenant_id, r.source_uri, r.reason) for r in everything if isinstance(r, ReadFailure) and r.skipped]
    assert skipped == [  # hidden entries are never read, but they are counted
        ("_no_tenant", ".git", "hidden folder (not read)"),
        ("acme", "acme/.cache", "hidden folder (not read)"),
        ("acme", "acme/.hidden.txt", "hidden file (not read)"),
    ]
    results = [r for r in everything if not (isinstance(r, ReadFailure) and r.skipped)]
    summary = [(type(r).__name__, r.tenant_id, r.source_uri) for r in results]
    assert summary == [
        ("Document", "acme", "acme/a.txt"),
        ("Document", "acme", "acme/b/2.txt"),
        ("ReadFailure", "acme", "acme/broken.json"),
        ("ReadFailure", "acme", "acme/scan.txt"),
        ("Document", "saigon-foods", "saigon-foods/ghi-chu.md"),
        ("ReadFailure", readers.NO_TENANT, "stray.txt"),
    ]
    assert failed(results[-1]).reason == "file outside a tenant folder"
    assert list(read_inbox(inbox)) == everything  # deterministic


def test_missing_inbox_is_a_failure_not_an_exception(tmp_path: Path) -> None:
    results = list(read_inbox(tmp_path / "nope"))
    assert len(results) == 1
    assert isinstance(results[0], ReadFailure)
    assert results[0].reason.startswith("inbox folder not found")


def test_doc_id_is_deterministic_and_tenant_scoped(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    write(inbox, "acme/x.txt", "I will send the quote by Friday.")
    write(inbox, "acme/copy/y.txt", "I will send the quote by Friday.")
    write(inbox, "other/x.txt", "I will send the quote by Friday.")
    first = [r for r in read_inbox(inbox) if isinstance(r, Document)]
    second = [r for r in read_inbox(inbox) if isinstance(r, Document)]
    ids = {d.source_uri: d.doc_id for d in first}
    assert ids == {d.source_uri: d.doc_id for d in second}
    assert ids["acme/x.txt"] == ids["acme/copy/y.txt"]  # same tenant, same content: same document
    assert ids["acme/x.txt"] != ids["other/x.txt"]
    assert ids["other/x.txt"] == Document.make_id("other", "text", "I will send the quote by Friday.")


# ---------------------------------------------------------------------------------------------- bundled sample inbox

BROKEN_SAMPLES = {
    "acme/scans/scan.txt": "binary content",
    "acme/email/2026-11-27-broken-mime.eml": "broken MIME",
    "saigon-foods/ghi-chu/ghi-chu-cu-windows-1258.txt": "invalid UTF-8",
    "saigon-foods/ghi-chu/2026-11-28-trong.md": "empty file",
    "saigon-foods/pulses/2026-11-27-bao-loi.json": "malformed JSON",
    "minsk-legal/scans/2026-03-05-skan-dogovora.pdf": "PDF has no text layer",
}


def test_bundled_sample_inbox() -> None:
    results = list(read_inbox(SAMPLE_INBOX))
    docs = [r for r in results if isinstance(r, Document)]
    fails = {r.source_uri: r for r in results if isinstance(r, ReadFailure) and not r.skipped}
    skipped = {r.source_uri: r.reason for r in results if isinstance(r, ReadFailure) and r.skipped}
    assert skipped == {"README.md": "the inbox's own README"}  # counted as skipped, never read as a document

    assert len(docs) >= 20
    assert {d.tenant_id for d in docs} >= {"acme", "saigon-foods"}
    assert {d.kind for d in docs} == {"text", "pulse", "email", "chat", "transcript"}
    for uri, reason in BROKEN_SAMPLES.items():
        assert uri in fails, uri
        assert fails[uri].reason.startswith(reason), fails[uri].reason
    assert "README.md" not in fails  # the inbox's own documentation is not a document
    assert set(fails) == set(BROKEN_SAMPLES)  # nothing else is broken

    assert len({d.doc_id for d in docs}) == len(docs)
    assert sum(1 for d in docs if ".jsonl#L" in d.source_uri) == 3
    for doc in docs:
        assert doc.text.strip()
        if doc.turns and doc.source_uri.partition("#")[0].endswith((".json", ".jsonl")):
            # every turn offset round-trips to the exact source field
            assert [doc.text[t.start : t.end] for t in doc.turns] == source_turn_texts(SAMPLE_INBOX, doc)
        if doc.kind == "pulse":
            assert doc.doc_date is not None
            assert len(doc.turns) == 6
            assert all(doc.text[: t.start].endswith(f"{t.question}\n") for t in doc.turns)
        if doc.kind in ("pulse", "chat", "transcript"):
            assert doc.turns
        if doc.kind == "email":
            assert doc.title and doc.doc_date is not None
            assert "<p>" not in doc.text and "<html" not in doc.text.lower()

    by_uri = {d.source_uri: d for d in docs}
    interview = by_uri["saigon-foods/phong-van/2026-11-26-phong-van-bep-nha.json"]
    assert [t.turn_id for t in interview.turns] == ["1", "2", "3", "4", "5", "6"]
    assert interview.turns[2].speaker == "Nguyễn Thị Lan"
    html_only = by_uri["saigon-foods/email/2026-11-26-ncc-bao-bi.eml"]
    assert "PO-SGF-2026-118" in html_only.text and "Thông báo giao hàng trễ" in html_only.text


# ---------------------------------------------------------------------------------------------- links and special files


def test_links_are_read_only_inside_their_own_tenant_folder(tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    write(inbox, "acme/secret.txt", "Acme's own note: the margin is 31%.")
    write(inbox, "evil/own.txt", "Evil's own note.")
    (inbox / "evil" / "passwd.txt").symlink_to("/etc/passwd")
    (inbox / "evil" / "status.txt").symlink_to("/proc/self/status")
    (inbox / "evil" / "zero.txt").symlink_to("/dev/zero")
    (inbox / "evil" / "acme-copy.txt").symlink_to(inbox / "acme" / "secret.txt")
    (inbox / "evil" / "relative.txt").symlink_to("../acme/secret.txt")
    (inbox / "evil" / "outside-dir").symlink_to(tmp_path)
    (inbox / "evil" / "loop-a.txt").symlink_to(inbox / "evil" / "loop-b.txt")
    (inbox / "evil" / "loop-b.txt").symlink_to(inbox / "evil" / "loop-a.txt")
    (inbox / "evil" / "gone.txt").symlink_to(inbox / "evil" / "never-there.txt")
    (inbox / "evil" / "alias.txt").symlink_to("own.txt")  # inside the tenant's own folder: read
    (inbox / "stray-link.txt").symlink_to(inbox / "acme" / "secret.txt")

    results = list(read_inbox(inbox))
    evil_docs = [r for r in results if isinstance(r, Document) and r.tenant_id == "evil"]
    reasons = {r.source_uri: r.reason for r in results if isinstance(r, ReadFailure)}

    assert [d.text for d in evil_docs] == ["Evil's own note.", "Evil's own note."]  # own.txt and alias.txt
    assert not any(
        "margin" in d.text or "root:" in d.text for d in results if isinstance(d, Document) and d.tenant_id != "acme"
    )
    for name in ("passwd.txt", "status.txt", "zero.txt", "acme-copy.txt", "relative.txt", "outside-dir"):
        assert reasons[f"evil/{name}"] == "link outside the tenant folder", name
    assert reasons["evil/loop-a.txt"] == reasons["evil/loop-b.txt"] == "symlink loop"
    assert reasons["evil/gone.txt"] == "broken symlink"
    assert reasons["stray-link.txt"] == "link outside the tenant folder"


@pytest.mark.parametrize("name", ["board.txt", "box.mbox"])
def test_a_folder_swapped_for_a_link_after_the_walk_does_not_lead_the_read_into_another_tenant(
    tmp_path: Path, name: str
) -> None:
    """The walk saw evil/zz/<name> as a regular file; before it is read, evil/zz becomes a link to acme's folder."""
    import shutil

    inbox = tmp_path / "inbox"
    secret = "From a@acme.test Mon Nov 30 09:00:00 2026\nSubject: board\n\nAcme's board pack: the margin is 31%.\n"
    write(inbox, f"acme/notes/{name}", secret)
    write(inbox, "evil/aa.txt", "Evil's first note.")
    write(inbox, f"evil/zz/{name}", "From e@evil.test Mon Nov 30 09:00:00 2026\nSubject: x\n\nEvil's own.\n")
    results = read_inbox(inbox)
    first = next(r for r in results if r.source_uri == "evil/aa.txt")  # the walk is over: every entry was seen
    assert isinstance(first, Document)
    shutil.rmtree(inbox / "evil" / "zz")
    (inbox / "evil" / "zz").symlink_to("../acme/notes")
    rest = [r for r in results if r.tenant_id == "evil"]
    assert not any(isinstance(r, Document) and "margin" in r.text for r in rest)
    assert [(r.source_uri, r.reason) for r in rest if isinstance(r, ReadFailure)] == [
        (f"evil/zz/{name}", "a folder on its path is no longer a folder (a link?): not followed")
    ]


def test_a_file_swapped_after_the_walk_is_refused(tmp_path: Path) -> None:
    """A file renamed over the walked one (another tenant's content, linked or moved in) is not the file walked."""
    import os

    inbox = tmp_path / "inbox"
    write(inbox, "evil/aa.txt", "Evil's first note.")
    write(inbox, "evil/zz.txt", "Evil's own note.")
    results = read_inbox(inbox)
    next(results)
    write(tmp_path, "other.txt", "Someone else's note.")
    os.replace(tmp_path / "other.txt", inbox / "evil" / "zz.txt")
    (rest,) = list(results)
    assert isinstance(rest, ReadFailure) and rest.reason == "file replaced after it was listed (read again next run)"


def test_a_hard_link_to_a_file_outside_its_tenant_folder_is_not_read(tmp_path: Path) -> None:
    import os

    inbox = tmp_path / "inbox"
    write(inbox, "acme/secret.txt", "Acme's own note: the margin is 31%.")
    outside = write(tmp_path, "outside.txt", "A file outside the inbox.")
    write(inbox, "evil/own.txt", "Evil's own note.")
    os.link(inbox / "acme" / "secret.txt", inbox / "evil" / "copy.txt")
    os.link(outside, inbox / "evil" / "outside.txt")
    os.link(inbox / "evil" / "own.txt", inbox / "evil" / "own-again.txt")  # both names in the tenant: read
    results = list(read_inbox(inbox))
    evil = [r for r in results if r.tenant_id == "evil"]
    assert sorted(r.source_uri for r in evil if isinstance(r, Document)) == ["evil/own-again.txt", "evil/own.txt"]
    reasons = {r.source_uri: r.reason for r in results if isinstance(r, ReadFailure)}
    assert reasons["evil/copy.txt"] == reasons["evil/outside.txt"] == "hard link to a file outside the tenant folder"
    # which name came first cannot be told: acme's name of the shared file is held back too, and said why
    assert reasons["acme/secret.txt"] == "hard link to a file outside the tenant folder"


def test_special_files_are_refused_without_being_opened_for_reading(tmp_path: Path) -> None:
    import os

    inbox = tmp_path / "inbox"
    write(inbox, "acme/ok.txt", "fine")
    os.mkfifo(inbox / "acme" / "pipe.txt")  # reading a FIFO with no writer would block the whole run
    results = list(read_inbox(inbox))
    reasons = {r.source_uri: r.reason for r in results if isinstance(r, ReadFailure)}
    assert reasons == {"acme/pipe.txt": "not a regular file (FIFO)"}
    assert read_fail(inbox / "acme" / "pipe.txt").reason == "not a regular file (FIFO)"


def test_read_file_never_follows_a_link_itself(tmp_path: Path) -> None:
    target = write(tmp_path, "real.txt", "hello")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    assert read_fail(link).reason == "symlink not followed"


# ---------------------------------------------------------------------------------------------- hostile and odd input


def test_a_bad_jsonl_line_costs_only_itself(tmp_path: Path) -> None:
    good = '{"author": "Lan", "date": "2026-11-23", "answers": [{"question": "Q?", "answer": "Giao hàng ổn."}]}'
    deep = "[" * 10_000 + "]" * 10_000
    huge = '{"answers": ' + "9" * 5_000 + "}"
    path = write(tmp_path, "acme/w.jsonl", "\n".join([good, deep, huge, good.replace("Lan", "Minh")]) + "\n")
    results = read_file(path, "acme", "acme/w.jsonl")
    kinds = [(type(r).__name__, r.source_uri) for r in results]
    assert kinds == [
        ("Document", "acme/w.jsonl#L1"),
        ("ReadFailure", "acme/w.jsonl#L2"),
        ("ReadFailure", "acme/w.jsonl#L3"),
        ("Document", "acme/w.jsonl#L4"),
    ]
    assert failed(results[1]).reason == "JSON nested too deeply at line 2"
    assert failed(results[2]).reason.startswith("JSON value out of range at line 3")


def test_an_overlong_jsonl_line_is_refused_by_its_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from extraction_assets.lib.readers import json_formats

    monkeypatch.setattr(json_formats, "MAX_JSONL_LINE_BYTES", 100)
    good = '{"answers": [{"question": "Q?", "answer": "ok"}]}'
    path = write(tmp_path, "acme/w.jsonl", good + "\n" + '{"answers": "' + "x" * 200 + '"}\n')
    first, second = read_file(path, "acme", "acme/w.jsonl")
    assert isinstance(first, Document)
    assert failed(second).reason == "JSONL line 2 too long (215 bytes, limit 100)"


def test_a_deeply_nested_json_file_names_what_was_found(tmp_path: Path) -> None:
    path = write(tmp_path, "acme/deep.json", "[" * 10_000 + "]" * 10_000)
    assert read_fail(path).reason == "JSON nested too deeply"


def test_utf16_text_with_a_byte_order_mark_is_decoded(tmp_path: Path) -> None:
    text = "Ghi chú: tôi sẽ gửi báo giá trước thứ Sáu.\r\n"
    for encoding, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")):
        path = write(tmp_path, f"acme/{encoding}.txt", bom + text.encode(encoding))
        (doc,) = read_file(path, "acme", f"acme/{encoding}.txt")
        assert isinstance(doc, Document) and doc.text == text.replace("\r\n", "\n")


def test_a_file_over_the_configured_limit_is_refused_without_reading_it(tmp_path: Path) -> None:
    path = write(tmp_path, "acme/big.txt", "x" * 2048)
    assert failed(read_file(path, "acme", "acme/big.txt", max_file_bytes=1024)[0]).reason == (
        "file too large (2048 bytes, limit 1024)"
    )
    inbox = tmp_path / "inbox"
    write(inbox, "acme/big.txt", "x" * 2048)
    [failure] = read_inbox(inbox, max_file_bytes=1024)
    assert failed(failure).reason == "file too large (2048 bytes, limit 1024)"


def test_an_xlsx_decompression_bomb_is_refused_before_it_is_inflated(tmp_path: Path) -> None:
    import zipfile

    path = tmp_path / "acme" / "bomb.xlsx"
    path.parent.mkdir(parents=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * (40 * 1024 * 1024))
    assert read_fail(path).reason.startswith("decompression bomb: xl/worksheets/sheet1.xml unpacks")


def test_an_unchanged_inbox_costs_one_stat_per_file_from_the_folder_scan(tmp_path: Path, monkeypatch) -> None:
    """The walk's own stat of each file is the one `needs_reading` is given: no file is stat'ed again, none opened
    (resolving the link is its only extra stat)."""
    import os

    for i in range(3):
        (tmp_path / "acme" / "notes").mkdir(parents=True, exist_ok=True)
        (tmp_path / "acme" / "notes" / f"{i}.txt").write_text(f"note {i}")
    (tmp_path / "acme" / "link.txt").symlink_to(tmp_path / "acme" / "notes" / "0.txt")
    expected = {
        f"acme/notes/{i}.txt": (
            os.stat(tmp_path / "acme" / "notes" / f"{i}.txt").st_size,
            os.stat(tmp_path / "acme" / "notes" / f"{i}.txt").st_mtime_ns,
        )
        for i in range(3)
    }
    expected["acme/link.txt"] = expected["acme/notes/0.txt"]  # a link is judged by the file it reads
    calls: list[str] = []

    def counted(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append(name)
            return real(*args, **kwargs)

        return call

    for name in ("stat", "open"):
        monkeypatch.setattr(os, name, counted(name, getattr(os, name)))
    asked: dict[str, tuple[int, int]] = {}

    def unchanged(source_uri: str, info: os.stat_result, content: object) -> bool:
        asked[source_uri] = (info.st_size, info.st_mtime_ns)
        return False

    assert list(read_inbox(tmp_path, needs_reading=unchanged)) == []
    assert asked == expected and calls == ["stat"]
