"""E-mail body structure: own text and forwards are extractable; quoted replies and signatures are not."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from extraction_assets.lib.readers import BodyPart, body_parts, body_start, body_turns, is_forward, line_spans

HEAD = "From: Dana <[EMAIL_1]>\nSubject: Re: quote\n\n"


def parts(body: str, forwarded: bool = False) -> list[tuple[str, str]]:
    text = HEAD + body
    found = body_parts(text, body_start(text), forwarded=forwarded)
    for part in found:
        assert text[part.start : part.end].strip() == text[part.start : part.end]  # trimmed, exact slice
    return [(p.kind, text[p.start : p.end]) for p in found]


def test_body_starts_after_the_first_blank_line() -> None:
    assert body_start(HEAD + "Hello") == len(HEAD)
    assert body_start("From: a\r\nSubject: b\r\n\r\nHello") == len("From: a\r\nSubject: b\r\n\r\n")
    assert body_start("no header block at all") == 0


def test_quoted_lines_and_signature_are_separated_from_own_text() -> None:
    body = (
        "Thanks, I will pay the invoice.\n\n"
        "> earlier text\n> more earlier\n\n"
        "Inline answer here.\n\n"
        "-- \nDana Whitfield\nDirect: [PHONE_1]\n"
    )
    assert parts(body) == [
        ("text", "Thanks, I will pay the invoice."),
        ("quoted", "> earlier text\n> more earlier"),
        ("text", "Inline answer here."),
        ("signature", "-- \nDana Whitfield\nDirect: [PHONE_1]"),
    ]


def test_wrapped_attribution_line_is_quoted_with_what_follows() -> None:
    body = "Sounds good.\n\nOn Mon, 24 Nov 2026 at 10:00, Sam Patel <[EMAIL_2]>\nwrote:\n> can you pay $900?\n"
    assert parts(body) == [
        ("text", "Sounds good."),
        ("quoted", "On Mon, 24 Nov 2026 at 10:00, Sam Patel <[EMAIL_2]>\nwrote:\n> can you pay $900?"),
    ]


def test_attribution_without_quote_marks_quotes_the_rest() -> None:
    # HTML mail turned into text loses the ">" marks: everything under the attribution is history
    body = "Yes, go ahead.\n\nVào 24/11/2026, Lan đã viết:\nGửi anh báo giá mới.\nTổng 5.000.000 VND\n"
    assert parts(body) == [
        ("text", "Yes, go ahead."),
        ("quoted", "Vào 24/11/2026, Lan đã viết:\nGửi anh báo giá mới.\nTổng 5.000.000 VND"),
    ]


def test_outlook_history_is_quoted_to_the_end_unless_the_message_is_a_forward() -> None:
    body = "Please see below.\n\n-----Original Message-----\nFrom: X\nSent: Monday\nSubject: y\n\nOld stuff\n"
    assert parts(body) == [
        ("text", "Please see below."),
        ("quoted", "-----Original Message-----\nFrom: X\nSent: Monday\nSubject: y\n\nOld stuff"),
    ]
    forwarded = parts(body, forwarded=True)
    assert forwarded[0] == ("text", "Please see below.")
    assert ("forwarded", "Sent: Monday\nSubject: y\n\nOld stuff") in forwarded
    assert all(kind != "quoted" for kind, _ in forwarded)


def test_pasted_outlook_headers_and_underscore_rules_start_history() -> None:
    assert parts("Done.\nFrom: Rita\nSent: Monday\nOld\n")[1][0] == "quoted"
    assert parts("Done.\n________________________________\nFrom: Rita\nOld\n")[1][0] == "quoted"


def test_forward_marker_keeps_forwarded_content_extractable() -> None:
    body = (
        "FYI.\n---------------------- Forwarded by Ann/HOU on 10/06/99 01:39 \nPM ---------------------------\n\n"
        "The invoice total is $4,210.00.\n"
    )
    assert parts(body) == [
        ("text", "FYI."),
        ("separator", "---------------------- Forwarded by Ann/HOU on 10/06/99 01:39 \nPM ---------------------------"),
        ("forwarded", "The invoice total is $4,210.00."),
    ]


def test_crlf_text_keeps_exact_offsets() -> None:
    text = "Subject: x\r\n\r\nHeads up.\r\n-- \r\nsig\r\n"
    found = body_parts(text, body_start(text))
    assert [(p.kind, text[p.start : p.end]) for p in found] == [("text", "Heads up."), ("signature", "-- \r\nsig")]


def test_turns_are_the_extractable_parts_only() -> None:
    found = [
        BodyPart(kind="text", start=0, end=5),
        BodyPart(kind="quoted", start=6, end=9),
        BodyPart(kind="forwarded", start=10, end=20),
        BodyPart(kind="signature", start=21, end=30),
    ]
    assert [(t.turn_id, t.start, t.end) for t in body_turns(found)] == [("b1", 0, 5), ("b2", 10, 20)]


def test_forward_subjects() -> None:
    assert is_forward("Fwd: report") and is_forward("FW: report") and is_forward("TR : rapport")
    assert not is_forward("Re: Fwd: report") and not is_forward("Forward planning") and not is_forward(None)


def own_text(body: str) -> list[str]:
    text = HEAD + body
    return [text[t.start : t.end] for t in body_turns(body_parts(text, body_start(text)))]


def test_outlook_header_blocks_in_all_their_variants_start_history() -> None:
    bold = "Hi\n\n  *From:* Rob [mailto:\n  rob@example.com]\n  *Sent:* Wednesday\n  *Subject:* Hello\n\nOld\n"
    assert own_text(bold) == ["Hi"]
    assert own_text("Done.\n\nFrom: Rob\nDate: Wed, 16 May 2012\n\nOld\n") == ["Done."]
    assert own_text("Done.\nDate: Fri, 28 Sep 2012 10:55\nFrom: tickets\nTo: Rob\n\nOld\n") == ["Done."]
    behalf = "Yes.\n\nFrom: Rob On Behalf Of Rita\nSent: Monday\nTo: Dana\n\nOld\n"
    assert own_text(behalf) == ["Yes."]
    assert own_text("Fine.\n------------------------------\n*From:* Rob\n*Sent:* Monday\n\nOld\n") == ["Fine."]


def test_header_words_in_own_text_alone_are_not_history() -> None:
    body = "Note.\nDate: Friday works for me.\n\nThe rest is on the invoice.\n"  # no header field follows it
    assert own_text(body) == ["Note.\nDate: Friday works for me.\n\nThe rest is on the invoice."]


def test_localized_attributions_and_header_blocks_start_history() -> None:
    for attribution in (
        "W dniu 28 stycznia 2015 01:53 użytkownik Zoe <[EMAIL_2]>\nnapisał:",
        "Op 13-02-2014 3:18 schreef Julius <[EMAIL_2]>:",
        "Op 17-feb.-2015, om 13:18 heeft Julius <[EMAIL_2]> het volgende geschreven:",
        "Den 14 september, 2015 02:23:18, Valentino (valentino) skrev:",
        "29.01.2015, 13:15, пользователь Иван <[EMAIL_2]> написал:",
        "Понедельник, 12 января 2015, 13:10 +03:00 от Иван <[EMAIL_2]>:",
        "Am 24.11.2026 um 10:00 schrieb Sam <[EMAIL_2]>:",
    ):
        assert own_text(f"Lorem\n\n{attribution}\n\nOld words\n") == ["Lorem"], attribution
    for block in ("Fra: Rob\nSendt: 19. march 2011\nTil: Dana", "Från: Rob\nSkickat: den 26 augusti\nTill: Dana"):
        assert own_text(f"Allo!\n{block}\n\nOld words\n") == ["Allo!"], block


def test_reply_message_rules_start_history() -> None:
    for rule in ("-----Reply Message-----", "-----Antwort Nachricht-----", "---- John Smith wrote ----"):
        assert own_text(f"Test reply\n\n{rule}\n\nOld words\n") == ["Test reply"], rule


def test_reply_on_the_same_line_as_the_attribution_is_own_text() -> None:
    text = HEAD + "ok, paid On Wed, Apr 4, 2012 at 3:59 PM, [EMAIL_2] wrote:\n> Hi\n"
    found = body_parts(text, body_start(text))
    assert [(p.kind, text[p.start : p.end]) for p in found] == [
        ("text", "ok, paid"),
        ("quoted", "On Wed, Apr 4, 2012 at 3:59 PM, [EMAIL_2] wrote:\n> Hi"),
    ]
    assert own_text("reply\nbla - bla--- On Wed, Apr 4, 2012, [EMAIL_2] wrote:\n> Hi\n") == ["reply\nbla - bla"]


def test_mailing_list_footer_and_dash_sign_off_are_signatures() -> None:
    body = (
        "Hi folks\n\nHow do I clear a bucket?\n\n-Abhishek Kona\n\n\n"
        "_______________________________________________\nriak-users mailing list\n"
        "http://lists.example.com/mailman/listinfo/riak-users\n"
    )
    assert own_text(body) == ["Hi folks\n\nHow do I clear a bucket?"]
    assert own_text("Buy:\n-Milk\n-Eggs\nthen call me.\n") == ["Buy:\n-Milk\n-Eggs\nthen call me."]


def test_sent_from_my_device_is_a_signature_only_where_own_text_ends() -> None:
    assert own_text("Here it is\n\nSent from my iPhone\n") == ["Here it is"]
    assert own_text("Here it is\nSent from my BlackBerry Wireless Handheld (www.BlackBerry.net)\n") == ["Here it is"]
    assert own_text("Here it is\nSent from my iPhone\n\nOn Mon, Sam wrote:\n> old\n") == ["Here it is"]
    middle = "Here it is\n\nSent from my phone\n\nAlso, the invoice is $900.\n"
    assert own_text(middle) == ["Here it is\n\nSent from my phone\n\nAlso, the invoice is $900."]
    sentence = "Here it is\n\nSent from my desk, is much easier then my mobile phone.\n"
    assert own_text(sentence) == ["Here it is\n\nSent from my desk, is much easier then my mobile phone."]


# A line as a pattern (what the line spans were found with before `str.find`): the reference they must meet.
_PLAIN_LINE = re.compile(r"[^\n]*\n?")


def _plain_line_spans(text: str, start: int) -> list[tuple[int, int]]:
    spans = []
    for m in _PLAIN_LINE.finditer(text, start):
        if m.start() == m.end():
            break
        end = m.end()
        while end > m.start() and text[end - 1] in "\r\n":
            end -= 1
        spans.append((m.start(), end))
    return spans


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab \t\r\n\u2028", max_size=30), st.integers(0, 32))
def test_line_spans_are_the_lines_a_pattern_finds(text: str, start: int) -> None:
    assert line_spans(text, start) == _plain_line_spans(text, start)
