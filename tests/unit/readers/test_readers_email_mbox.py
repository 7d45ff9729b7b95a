"""mbox files: one e-mail document per message, `file.mbox#N`, each failure costing only its message."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import RecordContext, read_file, read_inbox, read_mbox
from extraction_assets.lib.readers import email as email_reader
from extraction_assets.lib.readers.email import mbox_messages

INVOICE = """Message-ID: <inv-1@northwind.test>
Date: Fri, 27 Nov 2026 11:20:00 -0600
From: Northwind Billing <billing@northwind.test>
To: Dana <dana@acme.test>
Subject: Invoice INV-7

The total amount due is $4,210.00.

> old quoted line with $9,000.00
"""
BROKEN = """Message-ID: <broken@acme.test>
From: Scanner <scanner@acme.test>
Subject: Scan
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="never-there"

truncated
"""
HELLO = """Message-ID: <hello@acme.test>
Date: Sat, 28 Nov 2026 08:00:00 +0000
From: Sam <sam@acme.test>
Subject: Lunch

Lunch is at noon, from the kitchen.
"""


def mbox(*messages: str) -> str:
    return "".join(f"From MAILER-DAEMON Mon Nov 30 12:00:00 2026\n{m}\n" for m in messages)


def test_each_message_is_a_document_numbered_in_file_order(tmp_path: Path) -> None:
    path = tmp_path / "box.mbox"
    path.write_text(mbox(INVOICE, BROKEN, HELLO), encoding="utf-8")
    results = read_file(path, "acme", "acme/mail/box.mbox")
    assert [r.source_uri for r in results] == ["acme/mail/box.mbox#1", "acme/mail/box.mbox#2", "acme/mail/box.mbox#3"]
    first, broken, third = results
    assert isinstance(first, Document) and isinstance(third, Document)
    assert isinstance(broken, ReadFailure) and broken.reason.startswith("broken MIME")
    assert broken.tenant_id == "acme"
    assert first.kind == "email" and first.metadata["message_id"] == "<inv-1@northwind.test>"
    assert first.title == "Invoice INV-7"
    # quoted history stays in the text but out of the extractable turns
    assert "$9,000.00" in first.text
    assert [first.text[t.start : t.end] for t in first.turns] == ["The total amount due is $4,210.00."]


def test_a_message_reads_exactly_like_the_same_eml_file(tmp_path: Path) -> None:
    (tmp_path / "box.mbox").write_text(mbox(INVOICE), encoding="utf-8")
    (tmp_path / "one.eml").write_text(INVOICE, encoding="utf-8")
    from_box = read_file(tmp_path / "box.mbox", "acme", "acme/box.mbox")[0]
    from_eml = read_file(tmp_path / "one.eml", "acme", "acme/one.eml")[0]
    assert isinstance(from_box, Document) and isinstance(from_eml, Document)
    assert from_box.text == from_eml.text
    assert from_box.doc_id == from_eml.doc_id  # same content, same document: re-reading is a no-op
    assert from_box.turns == from_eml.turns


def test_escaped_from_lines_in_a_body_do_not_split_a_message(tmp_path: Path) -> None:
    path = tmp_path / "box.mbox"
    escaped = HELLO.replace("Lunch is at noon", ">From the kitchen: lunch is at noon")
    path.write_text(mbox(escaped, INVOICE), encoding="utf-8")
    results = read_file(path, "acme", "acme/box.mbox")
    assert len(results) == 2 and all(isinstance(r, Document) for r in results)


def test_a_file_without_from_lines_is_one_clear_failure(tmp_path: Path) -> None:
    path = tmp_path / "box.mbox"
    path.write_text(INVOICE, encoding="utf-8")
    (failure,) = read_file(path, "acme", "acme/box.mbox")
    assert isinstance(failure, ReadFailure)
    assert failure.source_uri == "acme/box.mbox"
    assert "no messages" in failure.reason


def test_a_reader_crash_costs_only_its_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "box.mbox"
    path.write_text(mbox(HELLO, HELLO.replace("Lunch", "Crash")), encoding="utf-8")
    read_email = email_reader.read_email

    def reader(data: bytes, ctx: RecordContext) -> Document:
        if b"Crash" in data:
            raise RuntimeError("boom")
        return read_email(data, ctx)

    monkeypatch.setattr(email_reader, "read_email", reader)
    results = read_mbox(path.read_bytes(), RecordContext("acme", "acme/box.mbox"))
    assert isinstance(results[0], Document)
    assert isinstance(results[1], ReadFailure) and results[1].reason == "boom"
    assert results[1].source_uri == "acme/box.mbox#2"


def test_inbox_walk_reads_mbox_files(tmp_path: Path) -> None:
    (tmp_path / "acme").mkdir()
    (tmp_path / "acme" / "2026-11-30-box.mbox").write_text(mbox(INVOICE, HELLO), encoding="utf-8")
    docs = [r for r in read_inbox(tmp_path) if isinstance(r, Document)]
    assert [d.source_uri for d in docs] == ["acme/2026-11-30-box.mbox#1", "acme/2026-11-30-box.mbox#2"]
    assert {d.tenant_id for d in docs} == {"acme"}


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["From a@b Sat Jan 3 01:05:34 1996\n", "From: x\n", "\n", "body From here\n", "x"]), max_size=30
    )
)
def test_the_split_of_a_mailbox_is_the_stdlib_split(lines: list[str]) -> None:
    """The messages are cut from the bytes already read (the file is never opened again by name), as `mailbox` cuts."""
    import mailbox
    import tempfile

    data = "".join(lines).encode()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "box.mbox"
        path.write_bytes(data)
        box = mailbox.mbox(path, create=False)
        expected = [box.get_bytes(key) for key in box.iterkeys()]
        box.close()
    assert mbox_messages(data) == expected


_HEADERS_MESSAGE = (
    b'From: "Doe, Jane" <jane.doe@example.com>\r\n'
    b"To: a@example.com,\r\n\tBob <b@example.com>, (a comment) c@example.com\r\n"
    b"Subject: =?utf-8?q?Caf=C3=A9?= menu\r\nDate: Mon, 14 May 2001 16:39:00 -0700 (PDT)\r\nMessage-ID: <1.2@x>\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\n\r\nhello\r\n"
)


def test_header_classes_are_made_once_and_headers_read_as_the_standard_policy_reads_them() -> None:
    from email import policy
    from email.headerregistry import HeaderRegistry
    from email.parser import BytesParser

    registry = email_reader.POLICY.header_factory
    assert isinstance(registry, HeaderRegistry)
    assert registry["To"] is registry["to"] is registry["TO"]  # the class for a header name is made once
    standard = BytesParser(policy=policy.default).parsebytes(_HEADERS_MESSAGE)
    for _ in range(2):  # the second read uses the classes the first one made
        ours = BytesParser(policy=email_reader.POLICY).parsebytes(_HEADERS_MESSAGE)
        for name in ("From", "To", "Subject", "Date", "Message-ID", "Content-Type"):
            assert str(ours[name]) == str(standard[name])
            assert type(ours[name]).__mro__[1:] == type(standard[name]).__mro__[1:]
    doc = email_reader.read_email(_HEADERS_MESSAGE, RecordContext("acme", "acme/m.eml"))
    assert doc.metadata["subject"] == "Café menu" and doc.metadata["to"].count("@") == 3


def test_a_mime_header_is_parsed_once_per_value_and_reads_as_the_standard_policy_reads_it() -> None:
    from email import policy
    from email.parser import BytesParser

    standard = BytesParser(policy=policy.default).parsebytes(_HEADERS_MESSAGE)
    first, second = (BytesParser(policy=email_reader.POLICY).parsebytes(_HEADERS_MESSAGE) for _ in range(2))
    assert first["Content-Type"] is second["Content-Type"]  # the same value: one parse, one (immutable) header
    assert str(first["Content-Type"]) == str(standard["Content-Type"])
    assert first["Content-Type"].params == standard["Content-Type"].params
    assert first.get_content_type() == standard.get_content_type() == "text/plain"
    assert first["To"] is not second["To"]  # an address header is parsed each time it is read


_ADDRESS_CHARS = 'ab.Z9-_+@ ,\t"<>()!#~=;:[]\\é'
_BARE = st.from_regex(r"\A[a-z0-9._+-]{1,8}@[a-z0-9-]{1,6}(\.[a-z0-9-]{1,4}){0,2}\Z")


@settings(max_examples=600, deadline=None)
@given(
    st.one_of(
        st.text(alphabet=_ADDRESS_CHARS, max_size=40),
        st.lists(st.tuples(_BARE, st.sampled_from(["", " ", "\t", "  "])), min_size=1, max_size=4).map(
            lambda parts: ",".join(space + address + space for address, space in parts)
        ),
    ),
    st.sampled_from(["To", "From", "to"]),
)
def test_a_list_of_bare_addresses_reads_as_the_standard_parser_prints_it(value: str, name: str) -> None:
    from email import policy
    from email.message import Message

    msg = Message(policy=email_reader.POLICY)
    msg.set_raw(name, value)  # as the parser stores a header: its raw value
    read = email_reader._bare_addresses(msg, name)
    try:
        parsed = policy.default.header_factory(name, value)
    except Exception:  # the standard parser fails on some values ("0@0, .@0"): they are never read the short way
        assert read is None
        return
    if read is not None:
        assert read == str(parsed)
    assert email_reader._header(msg, name) == (" ".join(str(parsed).split()) or None)
