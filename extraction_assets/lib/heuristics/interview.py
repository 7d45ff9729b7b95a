"""Deterministic extractor for research-interview schemas: one value per output field.

The schema's fields are user-defined (name, type, enum options, extraction hint). Values come only
from what the respondent (or a tool selection, an upload, a system note) said, never from the
interviewer's words, and each value quotes the respondent's own clause. The interviewer's question
gives context: "一周花多少钱？" -> "三百左右" is a weekly spend even though the answer never says so.

`extraction_hint` doubles as the heuristic's keyword list (a model reads it as guidance):

    吃饭, 晚饭, usually; delivery_app = 外卖, 美团, order in; home_cooking = 自己做, cook

Groups are separated by ";", keywords by ","; a group "label = ..." lists the words of one enum
option (or `yes` / `no` for booleans, `unit` for numbers), the others are the field's topic words.

Contradictions (different values in different turns) and a respondent denying the interviewer's
summary ("不对", "that's not right") are reported on the item, naming the turns, so the pipeline
sends it to review with the reason in its reasoning summary.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from itertools import pairwise
from typing import Any, Literal

from extraction_assets.lib.heuristics.due_dates import parse_due_date
from extraction_assets.lib.heuristics.interview_lexicon import (
    CJK_NEGATORS,
    COUNTING_WORDS,
    DEFAULT_ROLE_LABELS,
    DENIALS,
    NOT_NUMBERS,
    SUMMARY_MARKERS,
    WORD_NEGATORS,
    Role,
)
from extraction_assets.lib.heuristics.negation import Negation
from extraction_assets.lib.heuristics.phrases import any_phrase
from extraction_assets.lib.heuristics.segments import (
    Segment,
    make_title,
    normalize_for_match,
    segment_text,
    segment_turns,
)
from extraction_assets.lib.models import CandidateItem, ExtractionInput, Turn
from extraction_assets.lib.schemas import FieldSpec, SchemaVersion

__all__ = [
    "EVIDENCE_TYPE_BY_ROLE",
    "FieldCues",
    "extract_interview",
    "field_cues",
    "parse_number",
    "respondent_turn_ids",
]

EVIDENCE_TYPE_BY_ROLE: dict[Role, str] = {
    "respondent": "user_quote",
    "tool": "tool_selection",
    "artifact": "uploaded_artifact",
    "system": "system_observation",
}
_SUMMARY_MARKERS = any_phrase(SUMMARY_MARKERS)
_DENIALS = any_phrase(DENIALS)
# within three characters before a CJK keyword, one of the two words before another
_NEGATION = Negation(WORD_NEGATORS, CJK_NEGATORS, reach=2, passed_over=None, cjk_window=3, chars_back=30)
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[\w']+")
# Numbers: Arabic (with thousands separators and k / 千 / 万 style multipliers) or a run of Chinese numerals.
_ARABIC = re.compile(
    r"(?<![0-9A-Za-z.,])(\d{1,3}(?:[,.]\d{3})+|\d+(?:[.,]\d+)?)\s*(k|千|万|nghìn|ngàn|triệu|тыс)?", re.I
)
_CHINESE = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+(?:点[零〇一二三四五六七八九]+)?")
_MULTIPLIERS = {"k": 1000, "千": 1000, "万": 10000, "nghìn": 1000, "ngàn": 1000, "triệu": 1_000_000, "тыс": 1000}
_COUNTING_WORDS = any_phrase(COUNTING_WORDS)
_NOT_NUMBERS = any_phrase(NOT_NUMBERS)
_CURRENCY_SIGNS = ("¥", "$", "€", "£", "₫", "₽", "￥")
_NUMBER_CONTRADICTION = 0.25  # two amounts more than 25 % apart disagree
# Heuristic confidence: the floor of the band, one step per signal, never above the band
# (a heuristic's confidence stays below any model's).
_CONFIDENCE_FLOOR = 0.60
# Points per signal, in hundredths: answering the interviewer's question on the topic weighs double.
_POINTS_TOPIC = 5
_POINTS_ASKED = 10
_POINTS_EXPLICIT = 5
_POINTS_REPEATED = 5
_CONFIDENCE_CAP = 0.80
_MAX_EXTRA_EVIDENCE = 5
_GROUP_SPLIT = re.compile(r"[;；\n]")
_WORD_SPLIT = re.compile(r"[,，、]")
_FREE_TEXT = ("string", "list")
_YES = ("yes", "true")
_NO = ("no", "false")


@dataclass(frozen=True)
class FieldCues:
    """What the heuristic looks for: topic words, and words per enum option / boolean side / unit."""

    topic: re.Pattern[str]
    options: dict[str, re.Pattern[str]]  # value label -> its words
    unit: re.Pattern[str] | None = None


@dataclass
class _Statement:
    """One value the respondent stated, where, and how clearly."""

    value: Any
    segment: Segment
    turn_id: str | None
    evidence_type: str
    signals: list[tuple[str, int]] = field(default_factory=list)  # (why, confidence points)
    names_topic: bool = False  # the clause itself names the field's topic (not only the question)


@dataclass(frozen=True)
class _Clause:
    segment: Segment
    norm: str
    turn: Turn | None
    role: Role
    question: str  # the interviewer's last question before this turn, normalised ("" when none)
    question_turn: str | None


@dataclass(frozen=True)
class _Denial:
    turn_id: str
    segment: Segment  # the respondent's denying clause
    said: str  # the whole denying turn, normalised
    summary_turn: str
    summary: str  # the interviewer's summary, normalised


def field_cues(spec: FieldSpec) -> FieldCues:
    """Parse a field's `extraction_hint` into topic words and option / unit words (see the module doc)."""
    topic: list[str] = []
    groups: dict[str, list[str]] = {}
    for group in _GROUP_SPLIT.split(spec.extraction_hint):
        label, sep, words = group.partition("=")
        target = groups.setdefault(label.strip(), []) if sep else topic
        target.extend(w.strip() for w in _WORD_SPLIT.split(words if sep else group) if w.strip())
    unit = groups.pop("unit", None)
    options: dict[str, list[str]] = {}
    if spec.type == "boolean":
        for value, labels in (("yes", _YES), ("no", _NO)):
            options[value] = [w for label in labels for w in groups.get(label, [])]
    else:
        for option in spec.enum_options or []:
            options[option] = [option.replace("_", " "), *groups.get(option, [])]
    return FieldCues(
        topic=any_phrase(topic),
        options={label: any_phrase(words) for label, words in options.items() if words},
        unit=any_phrase(unit) if unit else None,
    )


def parse_number(text: str, unit: re.Pattern[str] | None = None) -> float | None:
    """The amount a clause states, or None.

    With unit words, the first number next to one (or after a currency sign) wins; otherwise the first
    number that is not a count or a period ("一周", "3 times"). Chinese numerals are read with cn2an;
    words that merely contain a numeral ("一般", "十分") are not numbers.
    """
    idioms = [m.span() for m in _NOT_NUMBERS.finditer(text)]
    found: list[tuple[int, int, float]] = []
    for m in _ARABIC.finditer(text):
        raw = m.group(1)
        thousands = re.fullmatch(r"\d{1,3}(?:[,.]\d{3})+", raw)
        number = float(raw.replace(",", "").replace(".", "") if thousands else raw.replace(",", "."))
        found.append((m.start(), m.end(), number * _MULTIPLIERS.get((m.group(2) or "").lower(), 1)))
    for m in _CHINESE.finditer(text):
        if any(a < m.end() and m.start() < b for a, b in idioms):
            continue
        import cn2an  # ~0.15 s to import: only a clause with a Chinese numeral pays for it

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                found.append((m.start(), m.end(), float(cn2an.cn2an(m.group(0), "smart"))))
            except ValueError:
                continue  # a run cn2an cannot read as one number ("三四百" is a range)
    found.sort()
    if unit is not None:
        with_unit = [n for start, end, n in found if _has_unit(text, start, end, unit)]
        if with_unit:
            return with_unit[0]
    return next((n for _start, end, n in found if not _COUNTING_WORDS.match(text, _skip_space(text, end))), None)


def extract_interview(doc: ExtractionInput, schema: SchemaVersion) -> list[CandidateItem]:
    """One candidate per field that the respondent gave a value for; required fields without one are
    left to the pipeline, which stores a null placeholder for review."""
    roles = _speaker_roles(doc.text, doc.turns, schema.options.get("speaker_roles") or {})
    clauses = _clauses(doc, roles)
    denials = _denials(doc, roles)
    cues = {spec.name: field_cues(spec) for spec in schema.fields}
    denied: dict[str, list[_Denial]] = {}
    for denial in denials:
        # the fields the respondent's words name; when they name none, the fields of the summary
        named = [n for n, c in cues.items() if _mentions(c, denial.said)] or [
            n for n, c in cues.items() if _mentions(c, denial.summary)
        ]
        for name in named:
            denied.setdefault(name, []).append(denial)
    stated = {
        spec.name: [s for clause in clauses if (s := _statement(spec, cues[spec.name], clause, doc.doc_date))]
        for spec in schema.fields
    }
    # a clause that gave another field its value is free text for this one only if it names this topic
    claimed = {s.segment.start for spec in schema.fields if spec.type not in _FREE_TEXT for s in stated[spec.name]}
    candidates = []
    for spec in schema.fields:
        statements = [
            s
            for s in stated[spec.name]
            if spec.type not in _FREE_TEXT or s.names_topic or s.segment.start not in claimed
        ]
        if not statements:
            continue
        candidate = _candidate(spec, statements)
        if spec.name in denied:
            candidate = _with_denial(candidate, denied[spec.name])
        candidates.append(candidate)
    return candidates


# ---------------------------------------------------------------------------------------------------------
# who speaks
# ---------------------------------------------------------------------------------------------------------


def respondent_turn_ids(doc: ExtractionInput, schema: SchemaVersion) -> list[str]:
    """The turns that are not the interviewer's: a live session extracts again after each new one."""
    roles = _speaker_roles(doc.text, doc.turns, schema.options.get("speaker_roles") or {})
    return [t.turn_id for t in doc.turns if roles.get(t.speaker) != "interviewer"]


def _speaker_roles(text: str, turns: Sequence[Turn], extra_labels: dict[str, Iterable[str]]) -> dict[str | None, Role]:
    """Each speaker's role: by label first; else the speaker asking the most questions is the interviewer."""
    patterns = {
        role: any_phrase([*labels, *extra_labels.get(role, [])]) for role, labels in DEFAULT_ROLE_LABELS.items()
    }
    roles: dict[str | None, Role] = {}
    for turn in turns:
        if turn.speaker in roles:
            continue
        name = normalize_for_match(turn.speaker or "")
        roles[turn.speaker] = next((r for r, p in patterns.items() if name and p.search(name)), "respondent")
    people = [s for s, r in roles.items() if r == "respondent" and s is not None]
    if "interviewer" not in roles.values() and len(people) > 1:
        asked: dict[str | None, int] = dict.fromkeys(people, 0)
        for turn in turns:
            if turn.speaker in asked and any(mark in text[turn.start : turn.end] for mark in ("?", "？")):
                asked[turn.speaker] += 1
        roles[max(people, key=lambda s: asked[s])] = "interviewer"  # ties: the first speaker
    return roles


def _clauses(doc: ExtractionInput, roles: dict[str | None, Role]) -> list[_Clause]:
    """Clauses of value-bearing turns (never the interviewer's), each with the question it answers."""
    if not doc.turns:
        return [_Clause(s, normalize_for_match(s.text), None, "respondent", "", None) for s in segment_text(doc.text)]
    by_id = {t.turn_id: t for t in doc.turns}
    question, question_turn = "", None
    context: dict[str, tuple[str, str | None]] = {}
    for turn in sorted(doc.turns, key=lambda t: t.start):
        if roles.get(turn.speaker) == "interviewer":
            said = normalize_for_match(doc.text[turn.start : turn.end])
            if not _SUMMARY_MARKERS.search(said):
                question, question_turn = said, turn.turn_id
        else:
            context[turn.turn_id] = (question, question_turn)
    clauses = []
    for seg in segment_turns(doc.text, [t for t in doc.turns if roles.get(t.speaker) != "interviewer"]):
        turn = by_id[seg.turn_id or ""]
        asked, asked_in = context[turn.turn_id]
        clauses.append(_Clause(seg, normalize_for_match(seg.text), turn, roles[turn.speaker], asked, asked_in))
    return clauses


def _denials(doc: ExtractionInput, roles: dict[str | None, Role]) -> list[_Denial]:
    """Respondent turns that answer the interviewer's summary with a denial ("不对", "that's not right")."""
    found = []
    ordered = sorted(doc.turns, key=lambda t: t.start)
    for before, turn in pairwise(ordered):
        summary = normalize_for_match(doc.text[before.start : before.end])
        if roles.get(before.speaker) != "interviewer" or not _SUMMARY_MARKERS.search(summary):
            continue
        if roles.get(turn.speaker) == "interviewer":
            continue
        said = normalize_for_match(doc.text[turn.start : turn.end])
        denying = next(
            (seg for seg in segment_turns(doc.text, [turn]) if _DENIALS.search(normalize_for_match(seg.text))), None
        )
        if denying is not None:
            found.append(_Denial(turn.turn_id, denying, said, before.turn_id, summary))
    return found


# ---------------------------------------------------------------------------------------------------------
# values
# ---------------------------------------------------------------------------------------------------------


def _statement(spec: FieldSpec, cues: FieldCues, clause: _Clause, today: date | None) -> _Statement | None:
    """The value this clause states for the field, with the signals that make it believable, or None.

    Every value needs the field's topic in the clause or in the question the clause answers. Choices
    (enum, boolean) then need an option's words; amounts a number that is not a count; free text
    (string, list) is the clause itself, unless it negates the topic ("没什么麻烦") or is a bare "嗯".
    """
    topic = _topic_state(cues.topic, clause.norm)
    asked = bool(clause.question) and _names(cues.topic, clause.question)
    if not (topic == "named" or asked):
        return None
    signals = [("the respondent's words name the topic", _POINTS_TOPIC)] if topic == "named" else []
    if asked:
        signals.append((f"it answers the question in turn {clause.question_turn}", _POINTS_ASKED))
    value: Any = None
    if cues.options:
        choice = _option(cues, clause.norm, boolean=spec.type == "boolean")
        if choice is not None:
            value = choice == "yes" if spec.type == "boolean" else choice
            signals.append(("an explicit choice", _POINTS_EXPLICIT))
    elif spec.type in ("number", "integer"):
        amount = parse_number(clause.norm, cues.unit)
        if amount is not None and (spec.type == "number" or amount.is_integer()):
            value = int(amount) if amount.is_integer() else amount
            if cues.unit is not None and _has_any_unit(clause.norm, cues.unit):
                signals.append(("an amount with its unit", _POINTS_EXPLICIT))
    elif spec.type == "date":
        due = parse_due_date(clause.segment.text, today)
        value = due.isoformat() if due else None
    elif spec.type in _FREE_TEXT and topic != "negated":
        substantial = len(_WORD.findall(clause.norm)) >= 2 or len(_CJK_CHAR.findall(clause.norm)) >= 4
        value = clause.segment.text if topic == "named" or substantial else None
    if value is None:
        return None
    return _Statement(
        value=value,
        segment=clause.segment,
        turn_id=clause.turn.turn_id if clause.turn else None,
        evidence_type=EVIDENCE_TYPE_BY_ROLE.get(clause.role, "user_quote"),
        signals=signals,
        names_topic=topic == "named",
    )


def _candidate(spec: FieldSpec, statements: list[_Statement]) -> CandidateItem:
    """One item per field: a list gathers every statement; any other type takes the latest statement
    (a respondent who corrects themselves means the later words), and earlier disagreeing ones make a
    contradiction."""
    if spec.type == "list":
        chosen, value = statements[0], list(dict.fromkeys(s.value for s in statements))
        others = statements[1:]
        contradiction = None
    else:
        last_turn = statements[-1].turn_id  # the latest turn wins; within it, what was said first
        chosen = next(s for s in statements if s.turn_id == last_turn)
        value = chosen.value
        disagree = [s for s in statements if not _same(s.value, value) and s.turn_id != chosen.turn_id]
        others = [s for s in statements if s is not chosen and (_same(s.value, value) or s in disagree)]
        contradiction = (
            "; ".join(f"turn {s.turn_id} says {s.value!r} ('{s.segment.text}')" for s in disagree)
            + f", but turn {chosen.turn_id} says {value!r} ('{chosen.segment.text}')"
            if disagree
            else None
        )
    agreeing = {s.turn_id for s in statements if _same(s.value, chosen.value)} - {None}
    # a list is as believable as its best-supported point; any other value as its chosen statement
    scored = max(statements, key=lambda s: sum(p for _, p in s.signals)) if spec.type == "list" else chosen
    signals = list(scored.signals)
    if spec.type != "list" and len(agreeing) > 1:
        signals.append((f"stated in {len(agreeing)} turns", _POINTS_REPEATED))
    confidence = round(min(_CONFIDENCE_FLOOR + sum(points for _, points in signals) / 100, _CONFIDENCE_CAP), 2)
    why = ", ".join(reason for reason, _ in signals) or "a keyword match"
    reasoning = f"{spec.name} = {value!r} from turn {chosen.turn_id}: {why}"
    if contradiction:
        reasoning += f". Contradiction: {contradiction}"
    return CandidateItem(
        item_type=spec.name,
        title=make_title(f"{spec.name}: {_display(value)}"),
        evidence_span=chosen.segment.text,
        span_hint=chosen.segment.start,
        confidence=confidence,
        value={"value": value},
        more_evidence=[s.segment.text for s in others if s.evidence_type == chosen.evidence_type][:_MAX_EXTRA_EVIDENCE],
        evidence_type=chosen.evidence_type,
        key=spec.name,
        reasoning_summary=reasoning + ".",
        contradiction=contradiction,
    )


def _with_denial(candidate: CandidateItem, denials: list[_Denial]) -> CandidateItem:
    """Mark the item as denied by the respondent, quoting the denial as further evidence."""
    denial = "; ".join(
        f"the respondent rejected the summary of turn {d.summary_turn} in turn {d.turn_id}: '{d.segment.text}'"
        for d in denials
    )
    extra = [d.segment.text for d in denials if candidate.evidence_type == "user_quote"]
    return candidate.model_copy(
        update={
            "denial": denial,
            "more_evidence": [*candidate.more_evidence, *extra],
            "reasoning_summary": f"{candidate.reasoning_summary} Denied: {denial}.",
        }
    )


# ---------------------------------------------------------------------------------------------------------
# matching helpers
# ---------------------------------------------------------------------------------------------------------


@lru_cache(maxsize=4096)
def _names(pattern: re.Pattern[str], question: str) -> bool:
    """Whether a question names a topic; each clause of an answer asks again about the same question."""
    return pattern.search(question) is not None


def _topic_state(pattern: re.Pattern[str], norm: str) -> Literal["named", "negated", "absent"]:
    hits = list(pattern.finditer(norm))
    if not hits:
        return "absent"
    return "named" if any(not _NEGATION.negates(norm, m.start()) for m in hits) else "negated"


def _option(cues: FieldCues, norm: str, *, boolean: bool) -> str | None:
    """The option a clause chooses: leftmost-longest hits, negated ones dropped (for a boolean a negated
    "yes" word means no); of several options in one clause the last named wins ("以前...现在...")."""
    hits = sorted(
        (
            (m.start(), -(m.end() - m.start()), m.end(), label)
            for label, p in cues.options.items()
            for m in p.finditer(norm)
        ),
    )
    chosen, last_end = None, -1
    for start, _length, end, label in hits:
        if start < last_end:
            continue
        last_end = end
        if not _NEGATION.negates(norm, start):
            chosen = label
        elif boolean and label == "yes":
            chosen = "no"
    return chosen


def _mentions(cues: FieldCues, norm: str) -> bool:
    return cues.topic.search(norm) is not None or any(p.search(norm) for p in cues.options.values())


def _skip_space(text: str, index: int) -> int:
    return index + 1 if text[index : index + 1] == " " else index


def _has_unit(text: str, start: int, end: int, unit: re.Pattern[str]) -> bool:
    return bool(unit.match(text, _skip_space(text, end))) or text[max(0, start - 1) : start] in _CURRENCY_SIGNS


def _has_any_unit(text: str, unit: re.Pattern[str]) -> bool:
    return unit.search(text) is not None or any(sign in text for sign in _CURRENCY_SIGNS)


def _same(a: Any, b: Any) -> bool:
    """Equal values; amounts within 25 % of each other count as the same ("三百左右" and "320")."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        larger = max(abs(a), abs(b))
        return larger == 0 or abs(a - b) / larger <= _NUMBER_CONTRADICTION
    return a == b


def _display(value: Any) -> str:
    if isinstance(value, list):
        return "; ".join(str(v) for v in value)
    return str(value)
