"""The pulse heuristic pack: keyword signals become grounded, honestly scored candidate items."""

from __future__ import annotations

import unicodedata
from datetime import date

import pytest

from extraction_assets.lib.heuristics import HEURISTIC_PACKS, get_pack
from extraction_assets.lib.heuristics.pulse import (
    CONFIDENCE_MAX,
    CONFIDENCE_MIN,
    DEADLINE_KEYWORD,
    KEYWORDS,
    MAX_ITEMS,
    extract_pulse,
    score_confidence,
)
from extraction_assets.lib.models import CandidateItem, DocumentKind, ExtractionInput, Turn
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS

WED = date(2026, 11, 25)


def _doc(
    text: str, kind: DocumentKind = "text", doc_date: date | None = WED, turns: list[Turn] | None = None
) -> ExtractionInput:
    return ExtractionInput(doc_id="d1", tenant_id="t1", kind=kind, text=text, turns=turns or [], doc_date=doc_date)


def _pulse(answers: list[tuple[str, str]], speaker: str | None = "Lan", doc_date: date | None = WED) -> ExtractionInput:
    """A pulse document laid out as question line, answer line; each answer is one turn."""
    text = ""
    turns: list[Turn] = []
    for i, (question, answer) in enumerate(answers):
        text += question + "\n"
        start = len(text)
        text += answer + "\n"
        turns.append(Turn(turn_id=f"q{i}", start=start, end=start + len(answer), speaker=speaker, question=question))
    return _doc(text, kind="pulse", doc_date=doc_date, turns=turns)


def _by_type(items: list[CandidateItem], item_type: str) -> list[CandidateItem]:
    return [item for item in items if item.item_type == item_type]


def _check_invariants(doc: ExtractionInput, items: list[CandidateItem]) -> None:
    assert len(items) <= MAX_ITEMS
    for item in items:
        assert item.span_hint is not None
        assert doc.text[item.span_hint : item.span_hint + len(item.evidence_span)] == item.evidence_span
        assert CONFIDENCE_MIN <= item.confidence <= CONFIDENCE_MAX
        assert item.confidence == round(item.confidence, 2)
        assert 0 < len(item.title) <= 120
        assert item.value["matched_keywords"]
        assert set(item.value) == {"due_date", "owner_name", "risk_type", "severity", "matched_keywords", "turn_id"}
    assert [i.span_hint for i in items] == sorted(i.span_hint or 0 for i in items)


CORPUS = [
    "Tôi sẽ gửi báo giá trước thứ sáu. Khách hủy đơn vì giao trễ! Cần anh quyết định giá mới.",
    "I will send the report by Friday. The shipment is delayed; we need your approval on the new supplier.",
    "我会周五前发送报告。供应商缺货，可能延迟。请批准预算。",
    "Em cam kết hoàn thành trước 15/12. Công ty bị phạt tiền 15.000.000 VND. Xin ý kiến anh về hợp đồng.",
    "Should we cancel the event? Team is short-staffed and overloaded. I promise to hire by next week.",
    "Không có rủi ro gì. Mọi việc ổn.",
    "Vốn hết, không có tiền trả lương; nhân viên nhập viện; chờ linh kiện từ nhà cung cấp [EMAIL_1].",
    "- Gọi [PHONE_2] trước ngày mai\n- We'll sign off EOW\n- Khách huỷ đơn gấp",
]


@pytest.mark.parametrize("text", CORPUS)
def test_invariants_hold_on_corpus(text: str) -> None:
    doc = _doc(text)
    _check_invariants(doc, extract_pulse(doc))


@pytest.mark.parametrize(
    ("text", "item_type", "keyword"),
    [
        ("Em sẽ gửi hợp đồng cho khách.", "commitment", "sẽ"),
        ("Em cam kết giao đủ hàng.", "commitment", "cam kết"),
        ("Anh Nam nhận việc kiểm kho.", "commitment", "nhận việc"),
        ("I will call the supplier.", "commitment", "i will"),
        ("We promise a refund.", "commitment", "promise"),
        ("Đại lý hủy đơn lớn.", "risk", "hủy đơn"),
        ("Đang chờ vật tư về kho.", "risk", "chờ vật tư"),
        ("Dự án bị chậm.", "risk", "chậm"),
        ("The order was cancelled.", "risk", "cancelled"),
        ("We are out of cash.", "risk", "out of cash"),
        ("Cần anh/chị quyết định về giá.", "decision", "cần anh/chị quyết định"),
        ("Việc này vượt thẩm quyền của em.", "decision", "vượt thẩm quyền"),
        ("We need your approval for the discount.", "decision", "need your approval"),
        ("Please decide on the vendor.", "decision", "please decide"),
    ],
)
def test_keyword_groups_in_both_languages(text: str, item_type: str, keyword: str) -> None:
    items = extract_pulse(_doc(text))
    matching = _by_type(items, item_type)
    assert len(matching) == 1
    assert keyword in matching[0].value["matched_keywords"]
    assert matching[0].evidence_span == text


def _sweep_cases() -> list[tuple[str, str, str]]:
    cases = []
    for item_type, table in KEYWORDS.items():
        for lang, phrases in table.items():
            for phrase in phrases:
                cases.append((item_type, lang, phrase))
    return cases


@pytest.mark.parametrize(("item_type", "lang", "phrase"), _sweep_cases())
def test_every_keyword_yields_its_type_within_the_band(item_type: str, lang: str, phrase: str) -> None:
    surface = "by Friday" if phrase == DEADLINE_KEYWORD else phrase.replace("...", "báo cáo")
    text = f"Ghi chú: {surface} ở đây."
    doc = _doc(text)
    items = extract_pulse(doc)
    _check_invariants(doc, items)
    matching = _by_type(items, item_type)
    assert len(matching) == 1, (lang, phrase)
    expected_label = "by friday" if phrase == DEADLINE_KEYWORD else phrase
    assert expected_label in matching[0].value["matched_keywords"]


@pytest.mark.parametrize(
    ("text", "risk_type", "severity"),
    [
        ("Công ty bị phạt tiền vì giao trễ.", "cash", "high"),
        ("Hết tiền nhập hàng tháng này.", "cash", "high"),
        ("We may pay a penalty on the contract.", "cash", "high"),
        ("Khách hủy đơn 200 cái.", "customer", "medium"),
        ("The customer complained about quality.", "customer", "medium"),
        ("Đang chờ linh kiện từ nhà cung cấp.", "delivery", "medium"),
        ("Giao hàng bị trễ hai ngày.", "delivery", "medium"),
        ("Waiting for parts from the supplier.", "delivery", "medium"),
        ("Thiếu người ca đêm.", "operations", "medium"),
        ("The team is overloaded.", "operations", "medium"),
        ("Sự cố nghiêm trọng ở kho.", "operations", "high"),
        ("Khẩn cấp: thiếu người ở xưởng.", "operations", "critical"),
        ("Critical delay on the production line.", "operations", "critical"),
        ("Urgent: the shipment is delayed.", "delivery", "high"),
        ("Dự án hơi chậm.", "operations", "low"),
        ("A minor delay in the report.", "operations", "low"),
    ],
)
def test_risk_type_and_severity(text: str, risk_type: str, severity: str) -> None:
    risks = _by_type(extract_pulse(_doc(text)), "risk")
    assert len(risks) == 1
    assert risks[0].value["risk_type"] == risk_type
    assert risks[0].value["severity"] == severity


def test_non_risk_items_carry_no_risk_fields() -> None:
    for item in extract_pulse(_doc("Em sẽ gửi. Cần anh duyệt.")):
        assert item.value["risk_type"] is None
        assert item.value["severity"] is None


def test_score_confidence_rule() -> None:
    assert score_confidence(strong=False, distinct_keywords=1, has_due_date=False, in_slot=False) == 0.60
    assert score_confidence(strong=True, distinct_keywords=1, has_due_date=False, in_slot=False) == 0.65
    assert score_confidence(strong=False, distinct_keywords=3, has_due_date=True, in_slot=False) == 0.70
    assert score_confidence(strong=False, distinct_keywords=1, has_due_date=False, in_slot=True) == 0.70
    assert score_confidence(strong=True, distinct_keywords=2, has_due_date=True, in_slot=True) == 0.80
    assert score_confidence(strong=True, distinct_keywords=9, has_due_date=True, in_slot=True) != 1.0


def test_weak_single_keyword_scores_the_floor() -> None:
    (item,) = extract_pulse(_doc("Tôi sẽ gọi lại."))
    assert item.confidence == 0.60


def test_will_by_date_is_strong() -> None:
    # "i will" + "by friday" (two keywords) + a parsed due date + future marker with that date (strong).
    (item,) = extract_pulse(_doc("I will send the report by Friday."))
    assert item.value["due_date"] == "2026-11-27"
    assert item.confidence == 0.75


def test_relative_due_date_needs_doc_date() -> None:
    (item,) = extract_pulse(_doc("I will send the report by Friday.", doc_date=None))
    assert item.value["due_date"] is None
    assert item.confidence == 0.65  # still two keywords, but no date and so no "will ... by <date>"


@pytest.mark.parametrize(
    ("answer", "item_type", "slot_question"),
    [
        ("Em sẽ gọi khách.", "commitment", "Kế hoạch tuần tới của bạn?"),
        ("I will call the client.", "commitment", "What are your plans for next week?"),
        ("Dự án bị chậm.", "risk", "Bạn đang gặp khó khăn hay vướng mắc gì?"),
        ("The build is late.", "risk", "Any blockers or problems?"),
        ("Anh duyệt giúp em báo giá.", "decision", "Bạn cần hỗ trợ gì?"),
        ("Should we hire a temp?", "decision", "What do you need from the CEO?"),
    ],
)
def test_slot_preference_raises_confidence(answer: str, item_type: str, slot_question: str) -> None:
    neutral = _by_type(extract_pulse(_pulse([("Điều gì khác? / Anything else?", answer)])), item_type)
    slotted = _by_type(extract_pulse(_pulse([(slot_question, answer)])), item_type)
    assert len(neutral) == len(slotted) == 1
    assert slotted[0].confidence == pytest.approx(neutral[0].confidence + 0.10)
    assert slotted[0].confidence <= CONFIDENCE_MAX


def test_pulse_items_come_from_answers_only() -> None:
    doc = _pulse(
        [
            ("Rủi ro lớn nhất tuần này là gì? Bạn cần anh quyết định gì?", "Khách hủy đơn."),
            ("Kế hoạch: bạn sẽ làm gì?", "Ổn cả."),
        ]
    )
    items = extract_pulse(doc)
    assert [(i.item_type, i.evidence_span) for i in items] == [("risk", "Khách hủy đơn.")]
    assert items[0].value["turn_id"] == "q0"
    assert items[0].value["owner_name"] == "Lan"
    assert all("?" not in item.title for item in items)


def test_pulse_without_turns_skips_question_and_header_lines() -> None:
    doc = _doc("Có rủi ro gì không?\nVấn đề:\nKhách hủy đơn.", kind="pulse")
    items = extract_pulse(doc)
    assert [(i.item_type, i.evidence_span) for i in items] == [("risk", "Khách hủy đơn.")]
    assert items[0].value["turn_id"] is None
    assert items[0].value["owner_name"] is None


def test_chat_turns_limit_the_text_and_set_owner() -> None:
    text = "Subject: risk of delay\n[09:00] An: Tôi sẽ gửi báo giá ngày mai.\n[09:01] Binh: Khách hủy đơn rồi"
    a_start = text.index("Tôi")
    b_start = text.index("Khách")
    turns = [
        Turn(turn_id="m1", start=a_start, end=text.index("\n[09:01]"), speaker="An"),
        Turn(turn_id="m2", start=b_start, end=len(text), speaker="Binh"),
    ]
    doc = _doc(text, kind="chat", turns=turns)
    items = extract_pulse(doc)
    _check_invariants(doc, items)
    assert [(i.item_type, i.value["owner_name"], i.value["turn_id"]) for i in items] == [
        ("commitment", "An", "m1"),
        ("risk", "Binh", "m2"),
    ]
    assert items[0].value["due_date"] == "2026-11-26"
    assert all("Subject" not in i.evidence_span for i in items)


def test_cap_keeps_the_strongest_ten_in_text_order() -> None:
    sentences = []
    strong_numbers = {3, 9, 15, 21, 27}
    for i in range(30):
        sentences.append(f"Khách hủy đơn số {i}." if i in strong_numbers else f"Lô số {i} bị trễ.")
    doc = _doc(" ".join(sentences))
    items = extract_pulse(doc)
    _check_invariants(doc, items)
    assert len(items) == MAX_ITEMS
    spans = [i.evidence_span for i in items]
    for n in strong_numbers:
        assert f"Khách hủy đơn số {n}." in spans
    weak_kept = [s for s in spans if s.startswith("Lô")]
    assert weak_kept == [f"Lô số {i} bị trễ." for i in (0, 1, 2, 4, 5)]  # ties broken by position


def test_title_is_bounded_and_never_the_whole_text() -> None:
    long_clause = "Khách hủy đơn " + " ".join(f"mã{i}" for i in range(80))
    doc = _doc(long_clause + ". Em sẽ gửi lại.")
    items = extract_pulse(doc)
    assert items
    for item in items:
        assert len(item.title) <= 120
        assert item.title != doc.text
    assert items[0].title.startswith("Khách hủy đơn")


def test_negated_signals_are_ignored() -> None:
    for text in ["Không có rủi ro gì.", "Không bị trễ.", "No delay expected.", "The project is not at risk."]:
        assert extract_pulse(_doc(text)) == [], text


def test_word_boundaries_and_case() -> None:
    assert extract_pulse(_doc("Please translate the latest approved memo.")) == []
    (item,) = extract_pulse(_doc("KHÁCH HỦY ĐƠN GẤP"))
    assert item.item_type == "risk"
    assert item.value["severity"] == "high"


def test_unicode_forms_match_and_spans_stay_exact() -> None:
    nfd_text = unicodedata.normalize("NFD", "Khách hủy đơn hôm qua.")
    doc = _doc(nfd_text)
    (item,) = extract_pulse(doc)
    assert item.evidence_span == nfd_text
    _check_invariants(doc, [item])
    (old_style,) = extract_pulse(_doc("Khách huỷ đơn."))
    assert old_style.item_type == "risk"


def test_placeholders_survive_in_evidence() -> None:
    doc = _doc("Em sẽ gửi hợp đồng qua [EMAIL_1]. Gọi [PHONE_2] nếu khách hủy.")
    items = extract_pulse(doc)
    _check_invariants(doc, items)
    assert [i.evidence_span for i in items] == ["Em sẽ gửi hợp đồng qua [EMAIL_1].", "Gọi [PHONE_2] nếu khách hủy."]


def test_identical_clauses_are_deduplicated() -> None:
    items = extract_pulse(_doc("Khách hủy đơn.\nKhách hủy đơn."))
    assert len(items) == 1
    assert items[0].span_hint == 0


def test_one_clause_can_carry_several_types() -> None:
    items = extract_pulse(_doc("Khách hủy đơn, cần anh quyết định có bồi thường không."))
    assert sorted(i.item_type for i in items) == ["decision", "risk"]
    assert len({i.evidence_span for i in items}) == 1


@pytest.mark.parametrize("text", ["", "   \n ", "Mọi việc bình thường.", "All good here."])
def test_nothing_to_extract(text: str) -> None:
    assert extract_pulse(_doc(text)) == []


def test_deterministic() -> None:
    doc = _doc(" ".join(CORPUS))
    first = [i.model_dump() for i in extract_pulse(doc)]
    second = [i.model_dump() for i in extract_pulse(doc)]
    assert first == second
    assert first


def test_registry() -> None:
    doc = ExtractionInput(doc_id="d", tenant_id="t", kind="text", text="We will ship the order by Friday.")
    assert get_pack("pulse") is HEURISTIC_PACKS["pulse"]
    assert get_pack("pulse").extract(doc, load_schema(DEFAULT_PROMPTS, "pulse@v1")) == extract_pulse(doc)
    assert get_pack("pulse").version.startswith("heuristic-pulse-")
    with pytest.raises(KeyError, match="pulse"):
        get_pack("no-such-pack")


def test_one_item_per_type_per_answer_slot() -> None:
    """One item per type per answer: within one answer only the strongest clause of each type becomes an item."""
    doc = _pulse(
        [
            ("Any risks?", "The build is late. Khách hủy đơn. The team is overloaded."),
            ("What will you do?", "I will call the client. I promise to send the quote by Friday."),
            ("Anything else?", "The van is late."),
        ]
    )
    items = extract_pulse(doc)
    _check_invariants(doc, items)
    per_slot = [(i.item_type, i.value["turn_id"]) for i in items]
    assert len(per_slot) == len(set(per_slot))
    assert [(i.item_type, i.evidence_span) for i in items] == [
        ("risk", "Khách hủy đơn."),  # a strong keyword beats the earlier weak one in the same answer
        ("commitment", "I promise to send the quote by Friday."),
        ("risk", "The van is late."),  # another answer slot keeps its own item
    ]


def test_chat_messages_are_not_answer_slots() -> None:
    text = "Khách hủy đơn. Lô hàng bị trễ."
    doc = _doc(text, kind="chat", turns=[Turn(turn_id="m1", start=0, end=len(text), speaker="An")])
    assert [i.evidence_span for i in extract_pulse(doc)] == ["Khách hủy đơn.", "Lô hàng bị trễ."]


@pytest.mark.parametrize(
    ("text", "item_type", "risk_type"),
    [
        ("Я подготовлю счёт до пятницы.", "commitment", None),
        ("Задержка поставки от поставщика.", "risk", "delivery"),
        ("Клиент грозит штрафом по договору.", "risk", "cash"),
        ("Прошу согласовать скидку 5%.", "decision", None),
    ],
)
def test_russian_signals(text: str, item_type: str, risk_type: str | None) -> None:
    (item,) = extract_pulse(_doc(text))
    assert (item.item_type, item.value["risk_type"]) == (item_type, risk_type)


@pytest.mark.parametrize("text", ["Không cần quyết định gì.", "Рисков нет.", "Задержки не ожидается, не штраф."])
def test_negated_or_absent_asks_are_not_items(text: str) -> None:
    assert extract_pulse(_doc(text)) == []


def test_markdown_headings_are_never_items() -> None:
    items = extract_pulse(_doc("## Rủi ro\n- Khách hủy đơn.\n# Risks\n"))
    assert [i.evidence_span for i in items] == ["Khách hủy đơn."]


def test_a_hard_wrapped_sentence_reads_as_the_same_sentence_on_one_line() -> None:
    wrapped = (
        "Cash update for the board: the new stores opened and the numbers look fine. Payment is due by\n"
        "2026-12-11 and we will run out of the cash buffer unless the bank extends the credit line.\n"
    )
    items = extract_pulse(_doc(wrapped))
    _check_invariants(_doc(wrapped), items)
    one_line = extract_pulse(_doc(wrapped.replace("by\n", "by ")))
    assert [(i.item_type, i.value["due_date"], i.value["matched_keywords"]) for i in items] == [
        (i.item_type, i.value["due_date"], i.value["matched_keywords"]) for i in one_line
    ]
    assert {i.value["due_date"] for i in items} == {"2026-12-11"}
    assert all("due by\n2026-12-11" in i.evidence_span for i in items)


@pytest.mark.parametrize(
    "text",
    [
        "We will run out of cash buffer by 2026-12-20 if the invoice slips.",
        "We will run out of cash buffer by\n2026-12-20 if the invoice slips, which nobody on the team wants to see.",
        "I'm afraid we'll miss the deadline for the Hanoi shipment.",
    ],
)
def test_a_future_tense_that_foretells_a_problem_is_a_risk_not_a_commitment(text: str) -> None:
    types = [item.item_type for item in extract_pulse(_doc(text))]
    assert "risk" in types and "commitment" not in types


def test_a_promise_beside_a_problem_stays_a_commitment() -> None:
    items = extract_pulse(_doc("We will send the revised quote by Friday despite the delay."))
    assert {item.item_type for item in items} == {"commitment", "risk"}


def _meeting(lines: list[tuple[str, str]]) -> ExtractionInput:
    text, turns, pos = "", [], 0
    for number, (speaker, said) in enumerate(lines):
        line = f"{speaker}: {said}\n"
        turns.append(Turn(turn_id=f"t{number}", start=pos + len(speaker) + 2, end=pos + len(line) - 1, speaker=speaker))
        text += line
        pos += len(line)
    return ExtractionInput(doc_id="m", tenant_id="t", kind="transcript", text=text, turns=turns)


def test_a_meeting_keeps_only_explicit_signals_and_at_most_four_items() -> None:
    """In a meeting one weak keyword ("I'll start", "should we") says nothing: the pack abstains instead of guessing.

    By default a meeting gets no item at all; a version that opts in (`meeting_max_items`) gets explicit signals only.
    """
    chatter = [
        ("Sam", "I'll start, if that's okay."),
        ("Dana", "Should we look at the slides?"),
        ("Sam", "It might be a bit late for that."),
    ]
    assert extract_pulse(_meeting(chatter), meeting_max_items=4) == []
    explicit = [
        ("Sam", "Dana, I need your decision today on the expedite fee."),
        ("Dana", "I will confirm with Rita and send the revised schedule by Friday."),
        ("Priya", "The supplier shortage puts the launch at risk and we face the SLA penalty."),
        ("Sam", "I'll start, if that's okay."),
        ("Jo", "We promised the client a refund and will send it by Monday."),
        ("Priya", "The cancellation of the second order is a risk for December."),
    ]
    assert extract_pulse(_meeting(explicit)) == []  # the default: a meeting's signals do not beat chance clearly
    items = extract_pulse(_meeting(explicit), meeting_max_items=4)
    assert 0 < len(items) <= 4
    assert all(item.features["explicit"] == 1.0 for item in items)
    assert "I'll start" not in " ".join(item.evidence_span for item in items)
    assert len(extract_pulse(_meeting(explicit), meeting_max_items=2)) == 2
    as_notes = _meeting(explicit).model_copy(update={"kind": "text"})  # the same words as a note: not a meeting
    assert len(extract_pulse(as_notes)) > len(items)
