"""Each pack's cheap test of "is this my kind of document?": a score in [0, 1], before any pack work.

A gate reads only what is cheap to read (the kind, the turns, the first few thousand characters, a handful
of compiled patterns), so routing a document costs a small fraction of extracting it. Scores add up
signals; a schema takes a document whose score reaches its `applies_to.min_score` (0.5 by default).
A change here bumps `GATE_VERSION` in the pack registry (`__init__.py`): it re-routes, it does not re-extract.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from extraction_assets.lib.heuristics.generic import generic_options
from extraction_assets.lib.heuristics.phrases import any_phrase
from extraction_assets.lib.heuristics.segments import normalize_for_match
from extraction_assets.lib.models import ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

Gate = Callable[[ExtractionInput, SchemaVersion], float]

_HEAD = 4000  # characters a gate reads from the top of a document
_QUESTION_END = re.compile(r"[?？]\s*$")
_INTERVIEWER = re.compile(
    r"(?i)\b(interviewer|moderator|researcher|phỏng vấn viên|người phỏng vấn|интервьюер)\b|采访者|访谈员|主持人"
)

# Receipts: a total line, several printed amounts, a receipt or invoice word, and a short text.
_TOTAL = re.compile(
    r"(?i)\b(total|grand total|sub ?total|amount due|balance due|cash|change|tổng( cộng| tiền)?|thành tiền|"
    r"итого|всего|к оплате|сумма)\b|合计|总计|金额"
)
_AMOUNT = re.compile(r"(?<![\d.,])\d{1,3}(?:[ ,.]\d{3})*[.,]\d{2}(?![\d])")
_RECEIPT_WORD = re.compile(
    r"(?i)\b(receipt|invoice|tax invoice|bill|cashier|hóa đơn|biên lai|чек|квитанция)\b|收据|发票"
)

# Contracts: a contract title near the top, the clause that names the parties, numbered clauses, length.
_CONTRACT_TITLE = re.compile(
    r"(?i)\b(agreement|contract|addendum|amendment|memorandum of understanding|договор|контракт|соглашение|"
    r"hợp đồng)\b|合同|协议"
)
_PARTIES = re.compile(
    r"(?i)\b(by and between|between\b.{0,200}\band\b|hereinafter|именуем\w*|в лице|стороны|bên a|bên b)\b|甲方|乙方"
)
_CLAUSE_LINE = re.compile(
    r"(?im)^\s*(?:\d{1,2}(?:\.\d{1,2})*\.?|article\s+\w+|section\s+\d+|статья\s+\d+|điều\s+\d+)\s"
)

# Team notes (check-ins, stand-ups, meeting notes): people speaking for themselves about work to do.
_FIRST_PERSON = re.compile(
    r"(?i)\b(i|we|our|us|i'll|we'll|team|chúng tôi|chúng ta|mình|em|anh|chị|мы|я|наш|нам|команда)\b|我们|我"
)
_WORK_CUES = re.compile(
    r"(?i)\b(action items?|next steps?|deadline|blocker|blocked|risk|decide|decision|stand-?up|meeting|follow up|"
    r"todo|to do|will send|by (monday|tuesday|wednesday|thursday|friday)|họp|quyết định|rủi ro|cần|hạn|trễ|"
    r"совещание|планерка|решение|риск|срок|задача)\b|会议|决定|风险|截止"
)
_LIST_LINE = re.compile(r"(?m)^\s*(?:[-*•]|\d{1,2}[.)])\s+\S")


def _turn_texts(doc: ExtractionInput) -> list[tuple[str | None, str]]:
    return [(t.speaker, doc.text[t.start : t.end]) for t in doc.turns]


def _looks_like_interview(doc: ExtractionInput) -> bool:
    """One speaker asks most of the questions, or a speaker is named as the interviewer."""
    turns = _turn_texts(doc)
    if any(speaker and _INTERVIEWER.search(speaker) for speaker, _ in turns):
        return True
    questions: dict[str | None, int] = {}
    for speaker, text in turns:
        if _QUESTION_END.search(text):
            questions[speaker] = questions.get(speaker, 0) + 1
    asked = sum(questions.values())
    return asked >= 3 and max(questions.values()) / asked >= 0.8 and asked >= len(turns) * 0.3


def team_note_score(doc: ExtractionInput) -> float:
    """A check-in, a team chat, meeting notes: short, people speaking for themselves about work, often in lists."""
    if doc.kind in ("pulse", "chat"):
        return 1.0
    if doc.kind == "transcript":
        speakers = {t.speaker for t in doc.turns if t.speaker}
        return 0.3 if _looks_like_interview(doc) else (0.9 if len(speakers) >= 2 else 0.6)
    head = doc.text[:_HEAD]
    first_person, cues = len(_FIRST_PERSON.findall(head)), len(_WORK_CUES.findall(head))
    score = 0.3 if len(doc.text) <= 8000 else (0.1 if len(doc.text) <= 20000 else 0.0)
    score += 0.3 if first_person >= 3 else (0.2 if first_person else 0.0)
    score += 0.3 if cues >= 2 else (0.2 if cues else 0.0)
    score += 0.2 if len(_LIST_LINE.findall(head)) >= 2 else 0.0
    return round(min(score, 1.0), 2)


def pulse_gate(doc: ExtractionInput, schema: SchemaVersion) -> float:
    """A team note, and not a formal document: a contract or a receipt is no check-in, however short."""
    score = team_note_score(doc)
    if doc.kind in ("text", "email") and max(contract_gate(doc, schema), receipt_gate(doc, schema)) >= 0.6:
        return min(score, 0.3)
    return score


def interview_gate(doc: ExtractionInput, schema: SchemaVersion) -> float:
    """An interview above all; any conversation between two or more people may be one."""
    if doc.kind != "transcript":
        return 0.0
    if _looks_like_interview(doc):
        return 0.9
    return 0.5 if len({t.speaker for t in doc.turns if t.speaker}) >= 2 else 0.2


def receipt_gate(doc: ExtractionInput, schema: SchemaVersion) -> float:
    """A receipt or invoice word, a total, several printed amounts, short lines (a till's layout), a short text."""
    head = doc.text[:_HEAD]
    lines = [line for line in head.splitlines() if line.strip()]
    short_lines = sum(1 for line in lines if len(line.strip()) <= 32)
    score = 0.3 if _RECEIPT_WORD.search(head) else 0.0
    score += 0.2 if _TOTAL.search(head) else 0.0
    score += 0.2 if len(_AMOUNT.findall(head)) >= 3 else 0.0
    score += 0.2 if lines and short_lines >= 0.5 * len(lines) else 0.0
    score += 0.1 if len(doc.text) <= 6000 else 0.0
    return round(score, 2)


def contract_gate(doc: ExtractionInput, schema: SchemaVersion) -> float:
    head = doc.text[:_HEAD]
    score = 0.35 if _CONTRACT_TITLE.search(doc.text[:1500]) else 0.0
    score += 0.25 if _PARTIES.search(head) else 0.0
    score += 0.25 if len(_CLAUSE_LINE.findall(doc.text[:20000])) >= 3 else 0.0
    score += 0.15 if len(doc.text) >= 1500 else 0.0
    return round(score, 2)


def email_gate(doc: ExtractionInput, schema: SchemaVersion) -> float:
    return 1.0 if doc.kind == "email" else 0.0


def generic_gate(doc: ExtractionInput, schema: SchemaVersion) -> float:
    """A user schema's own `when` phrases (options.generic.when) decide; without them, no opinion (0.5)."""
    when = generic_options(schema).when
    if not when:
        return 0.5
    return 1.0 if any_phrase(when).search(normalize_for_match(doc.text)) else 0.0
