"""Deterministic keyword extractor for the ``pulse`` schema (commitments, risks, decision requests).

This is the fallback floor used when no model is available: it only proposes an item when a clause
contains an explicit keyword, quotes that clause verbatim, and keeps confidence inside the keyword
band [0.60, 0.80] so reviewers can tell it apart from model output. Same input, same output.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from functools import cached_property

from extraction_assets.lib.heuristics.due_dates import parse_due_date
from extraction_assets.lib.heuristics.negation import Negation
from extraction_assets.lib.heuristics.phrases import any_phrase, phrase_needle, phrase_source
from extraction_assets.lib.heuristics.pulse_lexicon import (
    DEADLINE_KEYWORD,
    DEADLINE_RE,
    FORETELLING,
    FUTURE_MARKERS,
    KEYWORDS,
    NEGATION_FILLERS,
    NEGATORS,
    RISK_TYPE_BY_KEYWORD,
    RISK_TYPE_HINTS,
    RISK_TYPE_PRIORITY,
    SEVERITY_WORDS,
    SLOT_WORDS,
    STRONG_KEYWORDS,
)
from extraction_assets.lib.heuristics.segments import (
    Segment,
    make_title,
    normalize_for_match,
    segment_text,
    segment_turns,
)
from extraction_assets.lib.literals import LiteralScan
from extraction_assets.lib.models import CandidateItem, ExtractionInput, Turn
from extraction_assets.lib.schemas import SchemaVersion

__all__ = [
    "CONFIDENCE_MAX",
    "CONFIDENCE_MIN",
    "MAX_ITEMS",
    "extract_pulse",
    "extract_pulse_pack",
    "score_confidence",
]

ITEM_TYPES: tuple[str, ...] = ("commitment", "risk", "decision")
MAX_ITEMS = 10
# A meeting transcript's items, unless its schema's `options.meeting_max_items` says otherwise: none. Measured on
# QMSum (dev + dev_extra, 152 meetings), even the explicit signals land inside a discussed decision or problem at
# 1.53x chance over 52 items, a 95% interval over meetings of 0.00 to 2.91: chance is inside, so the pack says nothing
# rather than guess. A version may opt in to explicit signals (at most N items a meeting); a model reads meetings.
MEETING_MAX_ITEMS = 0
CONFIDENCE_MIN = 0.60
CONFIDENCE_MAX = 0.80
TITLE_LIMIT = 120

_NEGATABLE_TYPES = frozenset({"commitment", "risk", "decision"})  # "Không cần quyết định gì" asks for nothing
_DATED_TYPES = ("commitment", "decision")  # the item types that carry a due date
# the nearest word before a keyword (fillers like "có", "bị", "any" passed over) negates it: "không trễ", "no delay"
_NEGATION = Negation(NEGATORS, ("没有", "不"), reach=4, passed_over=NEGATION_FILLERS)
_MD_HEADING = re.compile(r"#{1,6}\s")


@dataclass(frozen=True)
class _Keyword:
    label: str
    source: str  # the pattern's source, compiled when a clause first holds the needle (most never do)
    needle: str  # a word every match contains: a clause without it is not searched
    report_match: bool = False

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.source)


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    label: str


def _build(table: dict[str, tuple[str, ...]]) -> tuple[_Keyword, ...]:
    keywords: list[_Keyword] = []
    seen: set[str] = set()
    for phrases in table.values():
        for phrase in phrases:
            if phrase in seen:
                continue
            seen.add(phrase)
            if phrase == DEADLINE_KEYWORD:
                keywords.append(_Keyword(phrase, r"(?<!\w)" + DEADLINE_RE + r"(?!\w)", "by", True))
            else:
                keywords.append(_Keyword(phrase, phrase_source(phrase), phrase_needle(phrase)))
    return tuple(keywords)


_MATCHERS: dict[str, tuple[_Keyword, ...]] = {item_type: _build(table) for item_type, table in KEYWORDS.items()}
_NEEDLES = LiteralScan(kw.needle for keywords in _MATCHERS.values() for kw in keywords)
_SLOT_RES = {item_type: any_phrase(words) for item_type, words in SLOT_WORDS.items()}
_SEVERITY_RES = {level: any_phrase(words) for level, words in SEVERITY_WORDS.items()}
_RISK_HINT_RES = {risk_type: any_phrase(words) for risk_type, words in RISK_TYPE_HINTS.items()}
_RISK_TYPE_OF = {kw: risk_type for risk_type, kws in RISK_TYPE_BY_KEYWORD.items() for kw in kws}


def score_confidence(*, strong: bool, distinct_keywords: int, has_due_date: bool, in_slot: bool) -> float:
    """Keyword-path confidence, always in [0.60, 0.80] and never 1.0.

    Start at 0.60 (one weak keyword) and add:
      +0.05 if a strong keyword matched (an explicit promise, lost order, penalty or decision ask;
            for commitments also a future marker such as "sẽ"/"will" together with a due date),
      +0.05 if two or more distinct keywords matched,
      +0.05 if a due date was parsed,
      +0.10 if the clause answers a pulse question whose slot suits the item type
            (plans -> commitment, problems/blockers -> risk, needs/asks -> decision).
    The sum is clamped to the band and rounded to two decimals.
    """
    points = 60 + 5 * strong + 5 * (distinct_keywords >= 2) + 5 * has_due_date + 10 * in_slot
    return round(min(max(points, 60), 80) / 100, 2)


def extract_pulse(doc: ExtractionInput, meeting_max_items: int = MEETING_MAX_ITEMS) -> list[CandidateItem]:
    """Propose commitments, risks and decision requests, one per (clause, type) with a keyword.

    In a pulse answer slot (a turn answering a question) only the strongest clause per type is kept
    (one item per type per answer: the strongest clause wins, so an answer yields at most three items).
    In a meeting transcript the pack abstains instead of guessing (`_is_meeting`): a clause carried by one weak
    keyword ("I'll start", "should we ...?") lands where a meeting discusses a decision or a problem no more often
    than a random turn does, and explicit signals not clearly more often; so a meeting gets no item unless
    ``meeting_max_items`` opts in, and then only clauses with an explicit signal, at most that many.
    Returns at most ``MAX_ITEMS`` items in text order; each ``evidence_span`` is the exact slice
    ``doc.text[span_hint:span_hint + len(evidence_span)]``.
    """
    if not doc.text.strip():
        return []
    meeting = _is_meeting(doc)
    if meeting and meeting_max_items <= 0:
        return []  # a meeting the version does not opt in to: nothing to read
    turns = {turn.turn_id: turn for turn in doc.turns}
    best: dict[tuple[str, str | None, str], tuple[float, int, int, CandidateItem]] = {}
    for seg in _answer_segments(doc):
        norm = normalize_for_match(seg.text)
        needles = _NEEDLES.present(norm)
        if not needles:
            continue
        hits_by_type = {item_type: _find_keywords(norm, item_type, needles) for item_type in ITEM_TYPES}
        # a due date only counts for commitments and decisions: parsed only when the clause has one
        due = parse_due_date(seg.text, doc.doc_date) if any(hits_by_type[t] for t in _DATED_TYPES) else None
        turn = turns.get(seg.turn_id) if seg.turn_id is not None else None
        question = normalize_for_match(turn.question) if turn is not None and turn.question else ""
        for type_rank, item_type in enumerate(ITEM_TYPES):
            hits = hits_by_type[item_type]
            if not hits or (item_type == "commitment" and _foretells_a_risk(norm, needles, hits_by_type["risk"])):
                continue
            item = _candidate(item_type, seg, hits, norm, question, due, turn)
            if meeting and not item.features["explicit"]:
                continue  # a meeting's chatter: one weak keyword says nothing
            slot = turn.turn_id if turn is not None and turn.question else None
            key = (item_type, slot, "" if slot else seg.text)
            ranked = (item.confidence, -seg.start, -type_rank, item)
            if key not in best or ranked[:3] > best[key][:3]:
                best[key] = ranked
    cap = min(MAX_ITEMS, meeting_max_items) if meeting else MAX_ITEMS
    ranked_items = sorted(best.values(), key=lambda r: (-r[0], -r[1], -r[2]))[:cap]
    ranked_items.sort(key=lambda r: (-r[1], -r[2]))
    return [r[3] for r in ranked_items]


def extract_pulse_pack(doc: ExtractionInput, schema: SchemaVersion) -> list[CandidateItem]:
    """The pack's entry point (every pack's is `extract(doc, schema)`); `options.meeting_max_items` caps a meeting."""
    return extract_pulse(doc, int(schema.options.get("meeting_max_items", MEETING_MAX_ITEMS)))


def _is_meeting(doc: ExtractionInput) -> bool:
    """A transcript of people speaking in turn: two speakers or more. (A check-in, a chat export or a note is not.)"""
    return doc.kind == "transcript" and len({t.speaker for t in doc.turns if t.speaker}) >= 2


def _foretells_a_risk(norm: str, needles: set[str], risk_hits: list[_Hit]) -> bool:
    """A clause that names a problem and whose commitment words, outside the problem's own words ("deadline" in
    "miss the deadline"), are only future tense and dates: a forecast of the problem, not a promise."""
    if not risk_hits:
        return False
    promises = (
        m
        for kw in _MATCHERS["commitment"]
        if kw.label not in FORETELLING and kw.needle in needles
        for m in kw.pattern.finditer(norm)
    )
    return not any(all(m.end() <= r.start or r.end <= m.start() for r in risk_hits) for m in promises)


def _answer_segments(doc: ExtractionInput) -> list[Segment]:
    """Clauses that can hold answers.

    With turns, only text inside turns counts (a clause never crosses a turn; pulse question lines
    between answers are ignored). A pulse without turns falls back to the whole text minus question
    and header lines (ending in "?" or ":"), since those are the form, not the answer. Markdown
    headings ("## Risks") name a section; they are never an item's clause.
    """
    if doc.turns:
        segments = segment_turns(doc.text, doc.turns)
        questions = {t.turn_id: normalize_for_match(t.question).strip() for t in doc.turns if t.question}
        return [
            s
            for s in segments
            if (question := questions.get(s.turn_id or "")) is None or normalize_for_match(s.text) != question
        ]
    segments = [s for s in segment_text(doc.text) if not _MD_HEADING.match(s.text)]
    if doc.kind == "pulse":
        segments = [s for s in segments if not s.text.rstrip().endswith(("?", "？", ":", "："))]
    return segments


def _find_keywords(norm: str, item_type: str, needles: set[str]) -> list[_Hit]:
    """Leftmost-longest, non-overlapping keyword hits in a normalised clause, negated hits removed.

    Only keywords whose needle occurs in the clause (``needles``) are searched.
    """
    raw: list[_Hit] = []
    for kw in _MATCHERS[item_type]:
        if kw.needle not in needles:
            continue
        for m in kw.pattern.finditer(norm):
            label = " ".join(m.group(0).split()) if kw.report_match else kw.label
            raw.append(_Hit(m.start(), m.end(), label))
    raw.sort(key=lambda h: (h.start, -(h.end - h.start), h.label))
    hits: list[_Hit] = []
    last_end = -1
    for hit in raw:
        if hit.start >= last_end:
            hits.append(hit)
            last_end = hit.end
    if item_type in _NEGATABLE_TYPES:
        hits = [h for h in hits if not _NEGATION.negates(norm, h.start)]
    return hits


def _candidate(
    item_type: str,
    seg: Segment,
    hits: list[_Hit],
    norm: str,
    question: str,
    due: date | None,
    turn: Turn | None,
) -> CandidateItem:
    """Build one item: score, classify and attach provenance."""
    labels = list(dict.fromkeys(h.label for h in hits))
    due_date = due if item_type in _DATED_TYPES else None
    strong = any(label in STRONG_KEYWORDS[item_type] for label in labels) or (
        item_type == "commitment" and due_date is not None and any(label in FUTURE_MARKERS for label in labels)
    )
    in_slot = bool(question) and _SLOT_RES[item_type].search(question) is not None
    confidence = score_confidence(
        strong=strong, distinct_keywords=len(labels), has_due_date=due_date is not None, in_slot=in_slot
    )
    features = {  # the evidence the score was made of (what a calibration would weigh, stored with the item)
        "strong": float(strong),
        "keywords": float(min(len(labels), 3)),
        "due_date": float(due_date is not None),
        "in_slot": float(in_slot),
        "explicit": float(strong or len(labels) >= 2 or due_date is not None),
    }
    risk_type = _infer_risk_type(labels, norm) if item_type == "risk" else None
    severity = _infer_severity(norm, risk_type) if item_type == "risk" else None
    return CandidateItem(
        item_type=item_type,
        title=make_title(seg.text, TITLE_LIMIT),
        evidence_span=seg.text,
        confidence=confidence,
        span_hint=seg.start,
        value={
            "due_date": due_date.isoformat() if due_date is not None else None,
            "owner_name": turn.speaker if turn is not None else None,
            "risk_type": risk_type,
            "severity": severity,
            "matched_keywords": labels,
            "turn_id": turn.turn_id if turn is not None else None,
        },
        features=features,
    )


def _infer_risk_type(labels: list[str], norm: str) -> str:
    """Cash (penalties, money) > customer (cancellations, complaints) > delivery (waiting for goods) > operations."""
    from_keywords = {_RISK_TYPE_OF[label] for label in labels if label in _RISK_TYPE_OF}
    for risk_type in RISK_TYPE_PRIORITY:
        if risk_type in from_keywords:
            return risk_type
    for risk_type, pattern in _RISK_HINT_RES.items():
        if pattern.search(norm):
            return risk_type
    return "operations"


def _infer_severity(norm: str, risk_type: str | None) -> str:
    """Critical words > high words or a cash/penalty risk > softening words (low) > medium."""
    if _SEVERITY_RES["critical"].search(norm):
        return "critical"
    if _SEVERITY_RES["high"].search(norm) or risk_type == "cash":
        return "high"
    if _SEVERITY_RES["low"].search(norm):
        return "low"
    return "medium"
