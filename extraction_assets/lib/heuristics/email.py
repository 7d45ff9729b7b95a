"""Deterministic pack for `email@v1`: route an e-mail to finance / crm / intel / promotions, then
build one flat record per module from what the text states.

Only the subject and the extractable body are read (the document's turns: quoted replies and signatures
are left out by the reader). A module applies when its keywords say so; each record's values come from
exact spans (amounts, names, placeholders, clauses), which travel as its evidence. A message matching
no module yields no record. Confidence stays in the heuristic band [0.60, 0.80]. Same input, same output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, TypeVar

import regex

from extraction_assets.lib.heuristics.due_dates import parse_due_date
from extraction_assets.lib.heuristics.email_lexicon import (
    CRM_INTERACTION,
    CRM_PARTY,
    CRM_STRONG,
    DIRECTION,
    DOCUMENT_TYPE,
    DUE_WORDS,
    EXPIRY_WORDS,
    FINANCE_STRONG,
    FINANCE_WEAK,
    INTEL_STRONG,
    INTEL_WEAK,
    INTERACTION,
    NEXT_STEP_WORDS,
    OFFER_TYPE,
    PROMOTIONS_STRONG,
    PROMOTIONS_WEAK,
    ROLE_WORDS,
    TOTAL_WORDS,
)
from extraction_assets.lib.heuristics.entities import (
    Found,
    find_amounts,
    find_organisations,
    find_placeholders,
)
from extraction_assets.lib.heuristics.phrases import any_phrase, any_phrase_source, phrase_needle
from extraction_assets.lib.heuristics.segments import (
    Segment,
    make_title,
    normalize_for_match,
    runs_on,
    segment_text,
)
from extraction_assets.lib.literals import LiteralScan
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.readers.email_body import body_parts, body_start, body_turns, is_forward, iter_line_spans
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["extract_email", "parse_header_block", "score_confidence", "sentences"]

MAX_INTEL_ITEMS = 5
# What an e-mail is for is said at its start: a long forwarded digest must not route on a word far below.
READ_CHARS = 6000

_PERCENT_OFF = regex.compile(
    r"(?P<pct>\d{1,2})\s?%\s*off\b|(?:giảm(?:\s+giá)?|скидка)\s*(?P<pct2>\d{1,2})\s?%", regex.IGNORECASE
)

_TOTAL_WORDS = any_phrase(TOTAL_WORDS)
_DUE_WORDS = any_phrase(DUE_WORDS)
_EXPIRY_WORDS = any_phrase(EXPIRY_WORDS)
_NEXT_STEP_WORDS = any_phrase(NEXT_STEP_WORDS)
# "INV-2026-0042", "PO NW-55120", "HD-0001234", or a labelled number ("Invoice no: 88412").
_REFERENCE = re.compile(
    r"(?<![\w-])(?P<ref>(?:INV|PO|SO|HD|DH|ORD|QT|BG)[-#\s]?(?:[A-Z]{1,4}-)?[A-Z0-9]*\d[A-Z0-9-]*)(?![\w-])"
    r"|(?i:invoice|order|hóa đơn|đơn hàng)\s*(?i:no|number|số)?\.?\s*[:#]\s*(?P<num>[A-Z0-9][A-Z0-9-]{3,})(?![\w-])"
)
_PROMO_CODE = regex.compile(
    r"(?i:promo\s+code|discount\s+code|coupon(?:\s+code)?|code|mã(?:\s+giảm\s+giá|\s+khuyến\s+mãi)?|промокод)"
    r"\s*[:：]?\s*[\"“']?(?P<code>[A-Z0-9]{4,20})(?!\w)"
)
_BULLET_PREFIX = re.compile(r"[ \t]*(?:[-*•·◦▪►]|\d{1,2}[.)])[ \t]+")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|(?<=[。！？])")
# Header lines of a forwarded message ("To: ...", "Subject: ..."): routing facts, not news items.
_PASTED_HEADER = re.compile(r"(?i)(?:from|to|cc|bcc|subject|date|sent)\s*:")
_HEADER_LINE = re.compile(r"(?P<name>[A-Za-z][A-Za-z0-9-]*)[ \t]*:[ \t]*")
_DISPLAY_NAME = re.compile(r"\s*\"?(?P<name>[^\"<\[\n]*?)\"?\s*(?=<|\[|$)")


@dataclass(frozen=True)
class _Keywords:
    """A keyword pattern and the needles its matches contain (each phrase's longest word, `phrase_needle`).

    A clause holding none of the needles cannot match, so the pattern is not run on it; one Aho-Corasick pass
    per clause (`_NEEDLES`) says which needles it holds. A case-insensitive pattern relies on them on ASCII
    text only: elsewhere a letter such as "ſ" matches "s" without holding it.
    """

    pattern: regex.Pattern[str]
    needles: frozenset[str]

    def hits(self, norm: str, present: set[str]) -> list[str]:
        if self.needles.isdisjoint(present) and (norm.isascii() or not self.pattern.flags & regex.IGNORECASE):
            return []
        return [m.group(0) for m in self.pattern.finditer(norm)]


def _keywords(phrases: tuple[str, ...]) -> _Keywords:
    return _Keywords(any_phrase(phrases), _needles(phrases))


def _needles(phrases: tuple[str, ...]) -> frozenset[str]:
    return frozenset(phrase_needle(p) for p in phrases if p.strip())


@dataclass(frozen=True)
class _Rules:
    """How one module is recognised."""

    strong: _Keywords
    weak: _Keywords
    applies: Callable[[_Signals], bool]


@dataclass
class _Signals:
    """Keyword hits of one module, clause by clause (the subject is a clause too)."""

    clauses: dict[Segment, tuple[set[str], set[str]]] = field(default_factory=dict)  # clause -> (strong, weak)
    in_subject: bool = False

    @property
    def strong(self) -> set[str]:
        return {hit for strong, _ in self.clauses.values() for hit in strong}

    @property
    def weak(self) -> set[str]:
        return {hit for _, weak in self.clauses.values() for hit in weak}

    @property
    def best_clause(self) -> Segment | None:
        """The clause with the most (strong counting thrice) hits; the earliest on a tie."""
        if not self.clauses:
            return None
        return max(self.clauses, key=lambda c: (3 * len(self.clauses[c][0]) + len(self.clauses[c][1]), -c.start))


@dataclass(frozen=True)
class _Email:
    """What the pack reads: header values with their spans, the subject clause, and the body clauses."""

    headers: dict[str, Found]
    subject: Segment | None
    clauses: list[Segment]
    text: str
    doc_date: date | None
    norms: dict[Segment, str] = field(default_factory=dict)  # each clause (and the subject) normalised once
    needles: dict[Segment, set[str]] = field(default_factory=dict)  # the keyword needles each clause holds


def parse_header_block(text: str) -> dict[str, Found]:
    """`name (lower case) -> value span` for each header line above the first blank line (folded lines join)."""
    stop = body_start(text) or len(text)
    found: dict[str, Found] = {}
    pos = 0
    last: str | None = None
    while pos < stop:
        line_end = text.find("\n", pos, stop)
        line_end = stop if line_end < 0 else line_end
        value_end = line_end - 1 if line_end > pos and text[line_end - 1] == "\r" else line_end
        if text[pos : pos + 1] in (" ", "\t") and last is not None:
            prev = found[last]
            found[last] = Found(prev.start, value_end, text[prev.start : value_end])
        else:
            m = _HEADER_LINE.match(text, pos, value_end)
            last = None
            if m and m.group("name").lower() not in found:
                last = m.group("name").lower()
                found[last] = Found(m.end(), value_end, text[m.end() : value_end])
        pos = line_end + 1
    return found


def _read(doc: ExtractionInput) -> _Email:
    headers = parse_header_block(doc.text)
    subject_header = headers.get("subject")
    subject = Segment(subject_header.start, subject_header.end, subject_header.text) if subject_header else None
    turns = doc.turns
    if not turns:  # a document not built by the e-mail reader: find the body structure here
        start = body_start(doc.text)
        turns = body_turns(body_parts(doc.text, start, forwarded=is_forward(subject.text if subject else None)))
    clauses: list[Segment] = []
    read = 0
    for turn in sorted(turns, key=lambda t: t.start):
        if read >= READ_CHARS:
            break
        for clause in sentences(doc.text, turn.start, turn.end):
            if read >= READ_CHARS:
                break
            clauses.append(clause)
            read += len(clause.text)
    norms = {clause: normalize_for_match(clause.text) for clause in ([subject] if subject else []) + clauses}
    needles = {clause: _NEEDLES.present(norm) for clause, norm in norms.items()}
    return _Email(headers, subject, clauses, doc.text, doc.doc_date, norms, needles)


def _signals(email: _Email, rules: _Rules) -> _Signals:
    signals = _Signals()
    for clause in ([email.subject] if email.subject else []) + email.clauses:
        norm, present = email.norms[clause], email.needles[clause]
        strong, weak = set(rules.strong.hits(norm, present)), set(rules.weak.hits(norm, present))
        if not strong and not weak:
            continue
        signals.clauses[clause] = (strong, weak)
        signals.in_subject = signals.in_subject or clause is email.subject
    return signals


def _finance_applies(s: _Signals) -> bool:
    """A finance keyword such as "invoice", or a money word next to an amount ("the $1,850.00 expedite charge")."""
    return bool(s.strong) or any(find_amounts(c.text) for c in s.clauses)


def _crm_applies(s: _Signals) -> bool:
    """A relationship phrase, or a party and an interaction in one clause ("call the client")."""
    return bool(s.strong) or any(
        weak & _CRM_PARTY_SET and weak & _CRM_INTERACTION_SET for _, weak in s.clauses.values()
    )


def _intel_applies(s: _Signals) -> bool:
    """A newsletter or news phrase, or three distinct reporting words."""
    return bool(s.strong) or len(s.weak) >= 3


def _promotions_applies(s: _Signals) -> bool:
    """Only marketing phrases ("promo code", "30% off", "shop now"): deal, offer and sale are business words too."""
    return bool(s.strong)


_CRM_PARTY_SET = frozenset(normalize_for_match(p) for p in CRM_PARTY)
_CRM_INTERACTION_SET = frozenset(normalize_for_match(p) for p in CRM_INTERACTION)
_RULES: dict[str, _Rules] = {
    "finance": _Rules(_keywords(FINANCE_STRONG), _keywords(FINANCE_WEAK), _finance_applies),
    "crm": _Rules(_keywords(CRM_STRONG), _keywords(CRM_PARTY + CRM_INTERACTION), _crm_applies),
    "intel": _Rules(_keywords(INTEL_STRONG), _keywords(INTEL_WEAK), _intel_applies),
    "promotions": _Rules(
        _Keywords(
            regex.compile(f"{any_phrase_source(PROMOTIONS_STRONG)}|{_PERCENT_OFF.pattern}", regex.IGNORECASE),
            _needles(PROMOTIONS_STRONG) | {"%"},  # both "30% off" forms hold a "%"
        ),
        _keywords(PROMOTIONS_WEAK),
        _promotions_applies,
    ),
}
_NEEDLES = LiteralScan(n for rule in _RULES.values() for k in (rule.strong, rule.weak) for n in k.needles)
_KEYWORD_TABLES = {
    name: {value: any_phrase(phrases) for value, phrases in table.items()}
    for name, table in (
        ("direction", DIRECTION),
        ("document_type", DOCUMENT_TYPE),
        ("interaction", INTERACTION),
        ("offer_type", OFFER_TYPE),
    )
}


def sentences(text: str, start: int, end: int, max_chars: int = 400) -> Iterator[Segment]:
    """Sentences of hard-wrapped mail text in `text[start:end]`, with exact offsets, in text order.

    Mail is wrapped at about 72 characters, so a line break alone does not end a sentence: a long line
    without closing punctuation runs on into the next. A blank line, a list item, a short line (a
    greeting, a name) or closing punctuation ends one. Longer runs are cut into clauses, one block of lines at
    a time, each as soon as the line after it shows where it ends: a reader that has read enough stops reading the
    rest of the lines (the e-mail pack reads 6,000 characters of a thread about three times as long).
    """
    block: tuple[int, int] | None = None  # the block of lines being read, not yet ended
    previous = ""  # the line before, "" after a blank line
    for line_start, line_end in iter_line_spans(text, start):
        if line_start >= end:
            break
        line_end = min(line_end, end)
        line = text[line_start:line_end]
        if block is not None and previous and runs_on(previous, line):
            block = (block[0], line_end)
        elif line.strip():
            if block is not None:
                yield from _block_clauses(text, *block, max_chars)
            block = (line_start, line_end)
        previous = line if line.strip() else ""
    if block is not None:
        yield from _block_clauses(text, *block, max_chars)


def _block_clauses(text: str, block_start: int, block_end: int, max_chars: int) -> Iterator[Segment]:
    """A block of lines cut at its sentence ends, each sentence into clauses (`_clauses`)."""
    piece_start = block_start
    for m in _SENTENCE_END.finditer(text, block_start, block_end):
        yield from _clauses(text, piece_start, m.start(), max_chars)
        piece_start = m.end()
    yield from _clauses(text, piece_start, block_end, max_chars)


def _clauses(text: str, start: int, end: int, max_chars: int) -> list[Segment]:
    """One sentence, trimmed (list marker too); cut at line breaks and commas when it is too long."""
    pieces = segment_text(text, start, end, max_chars=max_chars)
    if not pieces:
        return []
    if pieces[-1].end - pieces[0].start > max_chars:
        return pieces
    lo, hi = pieces[0].start, pieces[-1].end
    return [Segment(lo, hi, text[lo:hi])]


class _Record:
    """A module's flat record under construction: each value remembers the span it came from."""

    def __init__(self, attributes: tuple[str, ...]) -> None:
        self.values: dict[str, Any] = dict.fromkeys(attributes)
        self.spans: list[Found | Segment] = []

    def set(self, name: str, value: Any, *spans: Found | Segment | None) -> None:
        """Set a value read from `spans`; a value without a span is never set (evidence or nothing)."""
        cited = [s for s in spans if s is not None]
        if value is None or not cited:
            return
        self.values[name] = value
        for span in cited:
            if all((s.start, s.end) != (span.start, span.end) for s in self.spans):
                self.spans.append(span)


def _first_keyword(table: str, clauses: list[Segment]) -> tuple[str, Segment] | None:
    """The first value of a keyword table whose phrases occur, in clause order."""
    for clause in clauses:
        norm = normalize_for_match(clause.text)
        hits = [(m.start(), value) for value, pattern in _KEYWORD_TABLES[table].items() if (m := pattern.search(norm))]
        if hits:
            return min(hits)[1], clause
    return None


def _majority_keyword(table: str, clauses: list[Segment]) -> tuple[str, Segment] | None:
    """The value whose phrases occur in most clauses; a tie means the text does not say."""
    counts: dict[str, list[Segment]] = {}
    for clause in clauses:
        norm = normalize_for_match(clause.text)
        for value, pattern in _KEYWORD_TABLES[table].items():
            if pattern.search(norm):
                counts.setdefault(value, []).append(clause)
    ranked = sorted(counts.items(), key=lambda kv: -len(kv[1]))
    if not ranked or (len(ranked) > 1 and len(ranked[0][1]) == len(ranked[1][1])):
        return None
    return ranked[0][0], ranked[0][1][0]


def _sender(email: _Email) -> tuple[Found | None, Found | None]:
    """The From header's display name and address (a placeholder once scrubbed), each with its span."""
    header = email.headers.get("from")
    if header is None:
        return None, None
    address = next(iter(find_placeholders(email.text, "EMAIL", header.start, header.end)), None)
    m = _DISPLAY_NAME.match(email.text, header.start, header.end)
    name = None
    if m and m.group("name").strip():
        lo = m.start("name")
        raw = m.group("name")
        lo += len(raw) - len(raw.lstrip())
        hi = lo + len(raw.strip())
        name = Found(lo, hi, email.text[lo:hi])
    return name, address


def _is_person(name: Found) -> bool:
    """A display name that reads as a person's name (two to four capitalised words, no role or company)."""
    words = name.text.replace(",", " ").split()
    return (
        1 < len(words) <= 4
        and all(w[:1].isupper() for w in words)
        and not any(c.isdigit() for c in name.text)
        and not {w.lower() for w in words} & ROLE_WORDS
        and not find_organisations(name.text)
    )


F = TypeVar("F", bound=Found)


def _first(found: list[tuple[F, Segment]]) -> tuple[F, Segment] | None:
    return found[0] if found else None


def _in_clauses(
    finder: Callable[[str, int, int], Sequence[F]], email: _Email, clauses: list[Segment]
) -> list[tuple[F, Segment]]:
    """Every value the finder reads inside the clauses, with the clause holding it."""
    return [(value, clause) for clause in clauses for value in finder(email.text, clause.start, clause.end)]


def _phones(text: str, start: int, end: int) -> list[Found]:
    return find_placeholders(text, "PHONE", start, end)


def _finance(email: _Email, signals: _Signals, record: _Record) -> None:
    clauses = email.clauses
    amounts = _in_clauses(find_amounts, email, clauses)
    money = (
        next((a for a in amounts if _TOTAL_WORDS.search(normalize_for_match(a[1].text))), None)
        or next((a for a in amounts if a[1] in signals.clauses), None)
        or _first(amounts)
    )
    if money is not None:
        record.set("Amount", money[0].amount, money[1])
        record.set("Currency", money[0].currency, money[1])
    finance_clauses = [c for c in ([email.subject] if email.subject else []) + clauses if c in signals.clauses]
    if direction := _majority_keyword("direction", finance_clauses):
        record.set("Direction", *direction)
    kind = _first_keyword("document_type", finance_clauses)
    record.set("Document_Type", kind[0] if kind else "other", kind[1] if kind else signals.best_clause)
    organisation = _first(_in_clauses(find_organisations, email, clauses))
    name, _ = _sender(email)
    if organisation is not None:
        record.set("Counterparty", organisation[0].text, organisation[1])
    elif name is not None:
        record.set("Counterparty", name.text, name)
    for clause in finance_clauses:
        if m := _REFERENCE.search(clause.text):
            record.set("Reference", m.group("ref") or m.group("num"), clause)
            break
    for clause in finance_clauses:
        if _DUE_WORDS.search(normalize_for_match(clause.text)) and (due := parse_due_date(clause.text, email.doc_date)):
            record.set("Due_Date", due.isoformat(), clause)
            break


def _crm(email: _Email, signals: _Signals, record: _Record) -> None:
    name, address = _sender(email)
    if name is not None and _is_person(name):
        record.set("Contact_Name", name.text, name)
    record.set("Contact_Email", address.text if address else None, address)
    if organisation := _first(_in_clauses(find_organisations, email, email.clauses)):
        record.set("Company", organisation[0].text, organisation[1])
    if phone := _first(_in_clauses(_phones, email, email.clauses)):
        record.set("Phone", phone[0].text, phone[1])
    crm_clauses = [c for c in ([email.subject] if email.subject else []) + email.clauses if c in signals.clauses]
    interaction = _first_keyword("interaction", crm_clauses)
    record.set(
        "Interaction",
        interaction[0] if interaction else "other",
        interaction[1] if interaction else signals.best_clause,
    )
    for clause in email.clauses:
        if _NEXT_STEP_WORDS.search(normalize_for_match(clause.text)):
            record.set("Next_Step", make_title(clause.text, 160), clause)
            break


def _intel(email: _Email, signals: _Signals, record: _Record) -> None:
    name, _ = _sender(email)
    record.set("Source", name.text if name else None, name)
    topic = email.subject or (email.clauses[0] if email.clauses else None)
    record.set("Topic", make_title(topic.text, 160) if topic else None, topic)
    content = [c for c in email.clauses if not _PASTED_HEADER.match(c.text)]
    bullets = [c for c in content if _starts_bullet(email.text, c)]
    lines = bullets or [c for c in content if len(c.text.split()) >= 6]
    items = lines[:MAX_INTEL_ITEMS]
    record.set("Items", [make_title(c.text, 160) for c in items] or None, *items)


def _starts_bullet(text: str, clause: Segment) -> bool:
    """The clause opens a list line ("- ...", "* ...", "1. ..."); the segmenter has trimmed the marker off."""
    line_start = text.rfind("\n", 0, clause.start) + 1
    return _BULLET_PREFIX.fullmatch(text, line_start, clause.start) is not None


def _promotions(email: _Email, signals: _Signals, record: _Record) -> None:
    name, _ = _sender(email)
    organisation = _first(_in_clauses(find_organisations, email, email.clauses))
    if name is not None:
        record.set("Brand", name.text, name)
    elif organisation is not None:
        record.set("Brand", organisation[0].text, organisation[1])
    promo_clauses = [c for c in ([email.subject] if email.subject else []) + email.clauses if c in signals.clauses]
    offer = _first_keyword("offer_type", promo_clauses)
    percent = None
    for clause in promo_clauses:
        if m := _PERCENT_OFF.search(clause.text):
            percent = int(m.group("pct") or m.group("pct2"))
            record.set("Discount", f"{percent}%", clause)
            break
    for clause in promo_clauses:
        if m := _PROMO_CODE.search(clause.text):
            record.set("Promo_Code", m.group("code"), clause)
            break
    offer_type = offer[0] if offer else ("discount" if percent else "other")
    record.set("Offer_Type", offer_type, offer[1] if offer else signals.best_clause)
    for clause in promo_clauses:
        if _EXPIRY_WORDS.search(normalize_for_match(clause.text)) and (
            expiry := parse_due_date(clause.text, email.doc_date)
        ):
            record.set("Expires", expiry.isoformat(), clause)
            break
    worth = bool(record.values["Promo_Code"]) or (percent or 0) >= 20 or offer_type in ("free_shipping", "bundle")
    record.values["Worth_Saving"] = worth


_BUILDERS: dict[str, Callable[[_Email, _Signals, _Record], None]] = {
    "finance": _finance,
    "crm": _crm,
    "intel": _intel,
    "promotions": _promotions,
}
_KEY_VALUES = {"finance": "Amount", "crm": "Contact_Email", "intel": "Items", "promotions": "Discount"}


def score_confidence(*, strong: bool, distinct_keywords: int, in_subject: bool, key_value: bool) -> float:
    """Heuristic-band confidence of a record, in [0.60, 0.80]: 0.60 plus 0.05 for each of a strong keyword,
    two or more distinct keywords, a keyword in the subject, and the module's key value found."""
    points = 60 + 5 * strong + 5 * (distinct_keywords >= 2) + 5 * in_subject + 5 * key_value
    return round(min(max(points, 60), 80) / 100, 2)


def extract_email(doc: ExtractionInput, schema: SchemaVersion) -> list[CandidateItem]:
    """One record per module that applies, keyed `<Message-ID>:<module>` so a re-delivered message upserts.

    The schema's fields are the modules this pack knows (others are ignored); each record carries all
    of its module's attributes, null where the text does not say.
    """
    if not doc.text.strip():
        return []
    email = _read(doc)
    candidates = []
    for spec in schema.fields:
        module = spec.name
        if module not in _RULES:
            continue
        rules = _RULES[module]
        signals = _signals(email, rules)
        primary = signals.best_clause
        if primary is None or not rules.applies(signals):
            continue
        record = _Record(tuple(spec.attributes))
        _BUILDERS[module](email, signals, record)
        shown = [f"{k}={v}" for k, v in record.values.items() if v not in (None, [], "", False, "other")]
        candidates.append(
            CandidateItem(
                item_type=module,
                title=make_title(f"{module}: " + ", ".join(shown) if shown else f"{module}: {primary.text}", 160),
                evidence_span=primary.text,
                span_hint=primary.start,
                more_evidence=[s.text for s in record.spans if s.text != primary.text],
                confidence=score_confidence(
                    strong=bool(signals.strong),
                    distinct_keywords=len(signals.strong | signals.weak),
                    in_subject=signals.in_subject,
                    key_value=record.values.get(_KEY_VALUES[module]) not in (None, []),
                ),
                value=record.values,
                key=doc.record_key(module),
                reasoning_summary="keywords: " + ", ".join(sorted(signals.strong | signals.weak)[:8]),
            )
        )
    return candidates
