"""Deterministic contract pre-screening (schema ``contract``) for English and Russian contracts.

The document's script picks the language's word lists (``contract_lexicon``); one reader then finds:
the title and the contract type it names; the parties in the header window (the preamble before the
terms begin) by their legal forms; dates after trigger phrases; the total amount after a trigger,
with its currency close by; the governing law; and penalty, termination and arbitration clauses by
keywords, sentence by sentence. Matching runs on the scan view, so non-breaking spaces, typographic
quotes and OCR look-alikes do not hide a word, while every evidence span stays a verbatim slice.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import date
from functools import cached_property, lru_cache
from itertools import pairwise
from typing import Any

from extraction_assets.lib.heuristics.contract_lexicon import (
    COUNTRY_OF_PROVINCE,
    CURRENCIES,
    FEDERAL_LAWS,
    JURISDICTION_ALIASES,
    LEXICONS,
    Lexicon,
)
from extraction_assets.lib.heuristics.fields import FULL, GUESS, PARTIAL, field_candidate
from extraction_assets.lib.heuristics.phrases import PhraseScan, phrase_pattern, prepare
from extraction_assets.lib.heuristics.printed_values import DateMention, find_dates, parse_amount, scan_view
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.schemas import SchemaVersion

__all__ = ["detect_language", "extract_contract"]

TITLE_CHARS = 3000  # the title is printed near the top
HEADER_MIN_CHARS = 300
HEADER_MAX_CHARS = {"en": 4000, "ru": 2500}
DATE_AFTER_TRIGGER = 30  # a trigger's date follows within this many characters
LABEL_PADDING_CHARS = 200  # ... counting a whitespace run as one, in a gap of at most this many
PERIOD_START_CHARS = 60  # "from May 1, 2026 to ...": the period's start is this close before "to"
DEFINED_TERM_GAP = 30  # '..., 2026 (the "Effective Date")': the term follows its date this closely
AMOUNT_AFTER_TRIGGER = 150
CURRENCY_AFTER_AMOUNT = 50
SENTENCE_RADIUS = 400  # a sentence is cut to this many characters on each side of its keyword
MAX_TITLE_CHARS = 140
TITLE_OPENING_CHARS = 60  # ... and a line too long to be one is a title going on with names if one opens it
SIGNATURE_CHARS = 3000
ALIAS_CHARS = 160  # a party's alias ('("Buyer")') follows its name within this many characters
DEFINITION_CHARS = 120  # ... and without one, its definition ("a Delaware corporation ...") runs about this far
ABBREVIATION_CHARS = 4  # "руб.", "бел.": a dot after a word this short belongs to it
RUNNING_DATE_REPEATS = 3
JURISDICTION_WORDS = 6

_PIECES = re.compile(r"\S(?:[^\n]*?\S)??(?=\s{2,}|\n|$)")
_EXHIBIT = re.compile(r"exhibit\s+[\w.()-]+\s*")
_SECTION_NUMBER = re.compile(r"\d+\.(?:\d+\.?)*\s")
_SECTION_BEFORE = re.compile(r"(?:(?<!\w)(?:section|sections|sec\.)|§)[ \t]*$")
_CLAUSE_NUMBER = re.compile(r"(\d{1,2}\.\d{1,2}\.)(\d{1,2})")  # "3.2.17": a clause's number read as a date
_REDACTION = re.compile(r"\s*[\[{(]\s*\*+\s*[\]})]\s*$")  # "[***]": a filing's confidential-treatment mark
_NUMBER = re.compile(
    r"(?<![\w.,])\d{1,3}(?:[ ,.]\d{3})+(?:[.,]\d{1,2})?(?![\w])|(?<![\w.,])\d+(?:[.,]\d{1,2})?(?![\w])"
)
_MULTIPLIERS = {"million": 10**6, "billion": 10**9, "млн": 10**6, "миллион": 10**6, "тыс": 10**3, "млрд": 10**9}
_MULTIPLIER = re.compile(r"\s*(million|billion|млн|миллион\w*|тыс|млрд)\.?")
_DEFINED_TERM_GAP = re.compile(r'[\s,]*\(?\s*(?:the\s+)?"?')
_GAP_BREAK = re.compile(r"(?<!\w)(?:and|или|и|or)(?!\w)")  # "commence on X and expire on <date>"
_BESIDE = re.compile(r"[ \t]*(?:(?i:date)[ \t]*:?[ \t]*)?")  # two dates on one line, the second maybe labelled
_RESTATED_BEFORE = re.compile(r"(?<![\w-])(?:AMENDED\s+AND\s+RESTATED|RESTATED|AMENDED)[ \t]{2,}$")
_NEGATED = re.compile(r"(?<!\w)no\s+$")  # a cause said not to exist: "so long as no default"
_SENTENCE_END = re.compile(r"\.\s|\.$|\n\s*\n|;\s*\n")
_EN_FORM = (
    r"(?:Inc|INC|Incorporated|LLC|L\.L\.C|Ltd|LTD|Limited|LIMITED|Corporation|CORPORATION|Corp|CORP|Company|COMPANY"
    r"|Co|CO|L\.P|LP|LLP|N\.\s?A|GmbH|A/S|S\.A|PLC|plc|AG|KG|B\.V|N\.V|Pty|S\.p\.A)"
)
# "Acme", "3M", "eBay", "(Asia)"; a brand printed in lower case with dots or a digit: "e.l.f.", "bw-3"
_EN_WORD = (
    r"(?:[A-Z0-9][\w&.'’/-]*|[a-z]+[A-Z0-9][\w&.'’-]*|\([A-Z][\w ]{0,20}\)"
    r"|[a-z](?:\.[a-z])+\.?(?=\s)|[a-z]+-?\d[\w-]*)"
)
# capitalized words, "of"/"for" between them: "The University of Iowa"
_EN_CAPITALS = r"(?:[A-Z0-9][\w&.'’-]*,?\s*(?:(?:of|for|de)\s+(?=[A-Z]))?){1,6}"
_EN_LEAD_FORM = r"(?:JSC|OJSC|CJSC|PJSC)"  # a joint-stock company's form comes first: "JSC Acme"
_EN_PARTY = re.compile(
    rf"(?<![\w&.'’-])(?:(?:(?:{_EN_WORD}|&),?\s+(?:(?:of|for|the|de)\s+)?){{1,8}}?"
    # "Co., Ltd.", "GmbH & Co. KG"; a hyphenated word is no form ("THIS CO-BRANDING AGREEMENT")
    rf"{_EN_FORM}(?:\.|\b(?!-))(?:,?\s+(?:&\s+)?{_EN_FORM}(?:\.|\b(?!-)))*"
    rf"|{_EN_LEAD_FORM}(?:\s+[A-Z][\w&'’-]*){{1,3}})"
)
_EN_BETWEEN = re.compile(rf"(?i:between):?\s+(?:the\s+)?({_EN_CAPITALS})")
# words a name match can drag in from a title block or a recital: "BY AND BETWEEN", "EXHIBIT 10.1", a year
_NAME_NOISE = re.compile(
    r"(?:(?:by|and|between|among|exhibit|whereas|execution\s+(?:version|copy))(?!\w)|[(\d][\d.()-]*(?!\w)|[:,.;])\s*",
    re.IGNORECASE,
)
_TRADE_NAME = re.compile(
    r",?\s+(?:d/b/a/?|doing\s+business\s+as)\s+[A-Z0-9][\w&'’-]*(?:\s+(?:(?:of|the|and|for|&)\s+)?[A-Z0-9][\w&'’-]*){0,6}"
)
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")
_WIDE_GAP = re.compile(r"\s{2,}")
_ARTICLE_BEFORE = re.compile(r"(?<!\w)an?\s+$", re.IGNORECASE)
# a filing's page stamp names who filed it, not who signed: "Source: SOUPMAN, INC., 8-K, 8/14/2015"
_FILING_STAMP = re.compile(r"(?<!\w)source:[ \t]*\Z")
_ALIAS_OPENED = re.compile(r'\(\s*(?:the\s+)?"\s*$')  # '("KI Inc.")': a name quoted as an alias is no party
# a description goes on after a legal form ("a Delaware Limited Liability Company"): what follows the form is no name
_FORM_BEFORE = re.compile(rf"(?<![\w&.'’-]){_EN_FORM}\.?[ \t]+$")
# an address read as a name: a street word, then a comma before the place ("Walnut Street, Boulder, CO")
_STREET_THEN_PLACE = re.compile(r"(?<!\w)(?i:street|avenue|ave|road|suite|ste|boulevard|blvd|drive)\.?(?!\w)[^,\n]*,")
_NAME_WORD = re.compile(r"[^\W_][\w&'’-]*")
_ALIAS = re.compile(
    r"(?:\(\s*(?:the\s+|hereinafter\s+(?:referred\s+to\s+as\s+)?|hereafter\s+|each\s+)?"
    r'|hereinafter\s+(?:referred\s+to\s+as|called)\s+(?:the\s+)?)"([^"]{1,40})"'
)
_RU_ALIAS = re.compile(r'(?:именуем\w*|в дальнейшем)[^"]{0,40}"([^"]{1,40})"')
_CAPITALIZED = re.compile(r"[^\W\d_][\w'’.-]*")
# fmt: off
_LAW_STOPWORDS = frozenset({
    "without", "and", "excluding", "applicable", "as", "in", "including", "that", "which", "except", "regardless",
    "notwithstanding", "irrespective", "to", "shall", "with", "for", "by", "or", "other", "than", "governing",
    "apply", "applies", "principles", "conflict", "conflicts", "provisions", "rules", "the", "law", "laws", "any",
    "its", "their", "this",
})
# fmt: on
_NAMED_LAW = re.compile(r"(?:governed\s+by|accordance\s+with|subject\s+to)\s+(?:the\s+)?([A-Z][\w.'’]*)\s+(?i:laws?)\b")
# a jurisdiction's phrase going on to another place: ", Canada", "and the federal laws of Canada", "and of the State of"
_PLACE_GOES_ON = re.compile(
    r"[^\S\n]*,[^\S\n]*(?=[A-Z])|\s*,?\s*and\s+(?:the\s+)?(?:(?i:federal)\s+)?(?:laws?\s+)?of\s+"
)
_LAW_PREFIXES = ("the ", "state of ", "commonwealth of ", "province of ")
_PLACE_KINDS = frozenset({"state", "province", "commonwealth", "country", "jurisdiction", "territory"})


@dataclass(frozen=True)
class _Found:
    field: str
    value: dict[str, Any]
    start: int
    end: int
    factor: float
    shown: str
    rule: str = ""  # which cue found it (the evidence features name it)
    features: dict[str, float] = dataclasses.field(default_factory=dict)  # evidence only its finder knows


# the lexicon's phrases (`phrases.py`: a word ending in `*` a stem), compiled once: a currency token is looked up per
# amount; a word list is searched where its phrases can open (`PhraseScan`)
_phrase = lru_cache(maxsize=1024)(phrase_pattern)


_CYRILLIC = "".join(map(chr, range(ord("а"), ord("я") + 1))) + "ё"
_LATIN = "abcdefghijklmnopqrstuvwxyz"


def detect_language(view: str) -> str:
    """Russian when Cyrillic letters outnumber Latin ones, English otherwise."""
    sample = view[:20_000]
    return "ru" if sum(map(sample.count, _CYRILLIC)) > sum(map(sample.count, _LATIN)) else "en"


class _Contract:
    """One contract's text, its scan view, its language's words and the windows the fields are read from."""

    def __init__(self, text: str, view: str, lexicon: Lexicon) -> None:
        self.text = text
        self.view = view
        self.lex = lexicon
        self.phrases = PhraseScan(view)
        ends = self.hits(lexicon.header_end, HEADER_MIN_CHARS, HEADER_MAX_CHARS[lexicon.language])
        self.header = ends[0].start() if ends else min(len(text), HEADER_MAX_CHARS[lexicon.language])
        self.dates = [d for d in find_dates(self.view, day_first=lexicon.day_first) if not self._numbers_clause(d)]
        self.date_starts = [d.start for d in self.dates]  # text order: a trigger's date is found by bisection
        printed = Counter(self.view[d.start : d.end] for d in self.dates)
        # a date on every page is a running header or footer (a filing date), not the contract's own
        self.own_dates = [d for d in self.dates if printed[self.view[d.start : d.end]] < RUNNING_DATE_REPEATS]

    def _numbers_clause(self, mention: DateMention) -> bool:
        """A dotted number printed beside its neighbours in a sequence ("3.2.16 ...", "3.2.17 Party B guarantees")
        numbers a clause, and a number after "Section" or "§" cites one ("Section 9-08-06, N.D.C.C."): no date."""
        if _SECTION_BEFORE.search(self.view, max(0, mention.start - 12), mention.start):
            return True
        printed = _CLAUSE_NUMBER.fullmatch(self.text, mention.start, mention.end)
        if printed is None:
            return False
        head, last = printed.group(1), int(printed.group(2))
        siblings = "|".join(str(n) for n in (last - 1, last + 1) if n > 0)
        return re.search(rf"(?<![\d.]){re.escape(head)}(?:{siblings})(?![\d]|\.\d)", self.text) is not None

    def hits(self, phrases: tuple[str, ...], lo: int = 0, hi: int | None = None) -> list[re.Match[str]]:
        """Every (non-overlapping, leftmost-longest) match of any phrase in ``view[lo:hi]``, in text order."""
        return list(self.phrases.finditer(phrases, lo, hi))

    # --- spans -------------------------------------------------------------------------------------

    def sentence(self, start: int, end: int) -> tuple[int, int]:
        """The sentence holding ``[start, end)``, cut at SENTENCE_RADIUS characters on each side."""
        lo = max(0, start - SENTENCE_RADIUS)
        before = list(_SENTENCE_END.finditer(self.view, lo, start))
        left = before[-1].end() if before else lo
        after = _SENTENCE_END.search(self.view, end, min(len(self.view), end + SENTENCE_RADIUS))
        right = after.start() + 1 if after else min(len(self.view), end + SENTENCE_RADIUS)
        while left < right and self.text[left].isspace():
            left += 1
        while right > left and self.text[right - 1].isspace():
            right -= 1
        return left, right

    def found(self, field: str, value: dict[str, Any], start: int, end: int, factor: float, rule: str) -> _Found:
        shown = str(value.get("value"))
        return _Found(field, value, start, end, factor, shown, rule)

    # --- title and type ----------------------------------------------------------------------------

    def title(self) -> tuple[int, int, float, str] | None:
        """The document's title near the top: an upper-case piece that starts or ends with a contract word
        ("SUPPLY AGREEMENT", "ДОГОВОР ПОСТАВКИ № 7"), else any upper-case piece naming one, else a short
        Title Case piece ending with one ("e-business Hosting Agreement"). A contract word alone ("AGREEMENT") is a
        heading over the text, taken only when nothing names the kind of contract."""
        tiers: dict[tuple[bool, int], tuple[int, int]] = {}
        for piece in _PIECES.finditer(self.text, 0, min(len(self.text), TITLE_CHARS)):
            start, end = self._title_span(piece.start(), piece.end())
            words = self.text[start:end]
            if end - start > MAX_TITLE_CHARS and _upper(words):
                # too long for a title, unless one opens it and names follow ("SERVICES AGREEMENT CONQUER RISK
                # MANAGED VOLATILITY FUND ..."): taken after every piece that is a title whole
                opening = self.hits(self.lex.title_words, start, start + TITLE_OPENING_CHARS)
                if opening and ":" not in self.text[start : opening[0].end()]:
                    tiers.setdefault((False, 4), (start, opening[0].end()))
                continue
            if not words or end - start > MAX_TITLE_CHARS or ":" in words or self._opens_with_date(start):
                continue
            if _SECTION_NUMBER.match(words):  # "38.0 NON-EXCLUSIVE NATURE OF AGREEMENT": a section's heading
                continue
            named = self.hits(self.lex.title_words, start, end)
            if not named:
                continue
            upper = _upper(words)
            at_edge = named[0].start() == start or named[-1].end() == end
            title_case = 2 <= len(words.split()) <= 8 and '"' not in words
            tier = 0 if upper and at_edge else 1 if upper else 2 if at_edge and title_case else 3
            tiers.setdefault((len(words.split()) == 1, tier), (start, end))
        for alone in (False, True):
            for tier, factor, rule in (
                (0, FULL, "upper_edge"),
                (1, PARTIAL, "upper"),
                (2, PARTIAL, "title_case"),
                (4, PARTIAL, "upper"),
            ):
                if (alone, tier) in tiers:
                    start, end = tiers[(alone, tier)]
                    # a layout gap may part "AMENDED AND RESTATED" from the title it opens
                    restated = _RESTATED_BEFORE.search(self.text, max(0, start - 40), start)
                    return (restated.start() if restated else start, end, factor, rule)
        return None

    def _opens_with_date(self, start: int) -> bool:
        """A line that opens with a date ("NOVEMBER 1, 2002, RATE AGREEMENT") is a dated heading, not the title."""
        return any(d.start == start for d in self.dates)

    def _title_span(self, start: int, end: int) -> tuple[int, int]:
        """A piece of text without a leading exhibit number, without the preamble that follows the title on its line
        ("... by and between", "... This Agreement is") and without a trailing redaction mark ("[***]")."""
        start, end = _strip(self.text, start, end)
        exhibit = _EXHIBIT.match(self.view, start, end)
        if exhibit:
            start = exhibit.end()
        cut = self.hits(self.lex.title_cut, start, end)
        if cut and cut[0].start() > start:
            end = cut[0].start()
        redacted = _REDACTION.search(self.view, start, end)
        return _strip(self.text, start, redacted.start() if redacted else end)

    def document_name(self, title: tuple[int, int, float, str] | None) -> _Found | None:
        """The title; the preamble's name for the contract where it holds the title and says more ("SERVICE
        AGREEMENT" / "FOR" / "TRANSFER AGENT SERVICES" ... "THIS SERVICE AGREEMENT FOR TRANSFER AGENT SERVICES"): a
        title printed over several lines, which the top of the page shows cut."""
        if title is None:
            return None
        start, end, factor, rule = title
        name = " ".join(self.text[start:end].split())
        said = self.preamble_title(end)
        whole = " ".join(self.text[said[0] : said[1]].split()) if said else None
        # evidence: the preamble calls the contract by the title at the top, or otherwise ("This Marine Transportation
        # Agreement"; a longer name it is then read from still disagrees with the top of the page)
        names_it = whole is not None and whole.casefold() == name.casefold()
        features = {"preamble_names_it": float(names_it), "preamble_names_other": float(bool(whole) and not names_it)}
        if said is not None and whole is not None and not names_it and name.casefold() in whole.casefold():
            start, end, name = *said, whole
        return replace(self.found("document_name", {"value": name}, start, end, factor, rule), features=features)

    def preamble_title(self, end: int) -> tuple[int, int] | None:
        """Where the preamble after ``end`` calls the contract "this <title>" (English)."""
        if self.lex.language != "en":
            return None
        found = _self_title(self.lex.title_words).search(self.text, end, end + PREAMBLE_CHARS)
        return found.span(1) if found else None

    def contract_type(self, title: tuple[int, int, float, str] | None) -> _Found | None:
        """The kind the title names (its earliest dictionary phrase), else one named in the header, else other."""
        windows = [(title[0], title[1], FULL)] if title else []
        windows.append((0, self.header, PARTIAL))
        for lo, hi, factor in windows:
            named = [
                (m.start(), kind, m)
                for kind, phrases in self.lex.contract_types.items()
                for m in self.hits(phrases, lo, hi)
            ]
            if named:
                _, kind, m = min(named, key=lambda n: n[0])
                start, end = (lo, hi) if title and lo == title[0] else self.sentence(m.start(), m.end())
                rule = "title" if factor == FULL else "header"
                return self.found("contract_type", {"value": kind, "matched": m.group(0)}, start, end, factor, rule)
        if title is None:
            return None
        return self.found("contract_type", {"value": "other"}, title[0], title[1], GUESS, "other")

    # --- parties -----------------------------------------------------------------------------------

    def parties(self) -> list[_Found]:
        names = list(self._ru_parties() if self.lex.language == "ru" else self._en_parties())
        found: list[_Found] = []
        seen: set[str] = set()
        for start, end, factor in names:
            name = " ".join(self.text[start:end].split()).rstrip(",")
            key = name.casefold()
            if key in seen or len(found) == 2:
                continue
            seen.add(key)
            value: dict[str, Any] = {"value": name}
            alias = (_RU_ALIAS if self.lex.language == "ru" else _ALIAS).search(self.view, end, end + ALIAS_CHARS)
            if alias:
                value["alias"] = self.text[alias.start(1) : alias.end(1)]
            field = "party_a" if not found else "party_b"
            if self.lex.language == "ru":
                rule = "quoted" if factor == FULL else "capitalized"
            else:
                rule = "legal_form" if factor == FULL else "between"
            found.append(self.found(field, value, start, end, factor, rule))
        return found

    def _en_parties(self) -> Iterator[tuple[int, int, float]]:
        lo = self.parties_clause
        for m in _EN_PARTY.finditer(self.text, lo, self.header):
            name = self._name_span(m.start(), m.end())
            if name is not None:
                trade = _TRADE_NAME.match(self.text, name[1])  # the name a party does business as is part of it
                yield name[0], trade.end() if trade else name[1], FULL
        for m in _EN_BETWEEN.finditer(self.text, 0, self.header):
            first = self._name_span(m.start(1), m.start(1) + len(_WIDE_GAP.split(m.group(1))[0].rstrip(", ")))
            if first is not None:
                yield *first, PARTIAL
            rest = re.match(rf"[^\n]{{0,300}}?\band\s+(?:the\s+)?({_EN_CAPITALS})", self.text[m.end() :])
            if rest:
                second = _WIDE_GAP.split(rest.group(1))[0].rstrip(", ")
                yield m.end() + rest.start(1), m.end() + rest.start(1) + len(second), PARTIAL

    @cached_property
    def parties_clause(self) -> int:
        """Where the parties are named: the first "between" that a party definition ("Seller") follows before
        another "between" (a title block's "BY AND BETWEEN X AND Y" only repeats them); else the first one."""
        betweens = [m.start() for m in self.hits(("between",), 0, self.header)]
        for here, after in pairwise([*betweens, self.header]):
            if _ALIAS.search(self.view, here, after):
                return here
        return betweens[0] if betweens else 0

    def _name_span(self, start: int, end: int) -> tuple[int, int] | None:
        """A matched name without what a title block puts before it (a blank line, "BETWEEN", an exhibit number);
        None for a description ("a Delaware Corporation", what follows a legal form), an address ("Walnut Street,
        Boulder, CO"), a bare legal form ("The Company") or another party's alias ('Kathy Ireland, Inc. ("KI Inc.")').
        """
        for blank in _BLANK_LINE.finditer(self.text, start, end):
            start = blank.end()
        for title in self.hits(self.lex.title_words, start, end):  # "SUPPLY AGREEMENT ACME INC."
            start = title.end()
        while (noise := _NAME_NOISE.match(self.view, start, end)) and noise.end() > start:
            start = noise.end()
        words = [w.group(0) for w in _NAME_WORD.finditer(self.text, start, end)]
        own = [w for w in words if w.casefold() != "the" and not re.fullmatch(_EN_FORM, w)]
        if not own or _ARTICLE_BEFORE.search(self.view, max(0, start - 4), start):
            return None
        if _ALIAS_OPENED.search(self.view, max(0, start - 12), start) or _FILING_STAMP.search(self.view, 0, start):
            return None
        described = _FORM_BEFORE.search(self.text, max(0, start - 16), start)  # "a Nevada Limited Liability Company"
        if described or _STREET_THEN_PLACE.search(self.text, start, end):
            return None
        return start, end

    def _ru_parties(self) -> Iterator[tuple[int, int, float]]:
        for m in self.hits(self.lex.entity_forms, 0, self.header):
            after = m.end()
            gap = self.view[after : after + 3]
            quote = after + len(gap) - len(gap.lstrip()) if gap.strip().startswith('"') else -1
            if quote >= 0:
                close = self.view.find('"', quote + 1, quote + 120)
                if close > 0:
                    yield m.start(), close + 1, FULL
                continue
            words = list(_CAPITALIZED.finditer(self.text, after, min(len(self.text), after + 80)))
            taken = [w for w in words[:3] if w.group(0)[0].isupper()]
            if taken and taken[0].start() - after <= 2:
                yield m.start(), taken[-1].end(), PARTIAL

    # --- dates -------------------------------------------------------------------------------------

    def date_after(
        self,
        triggers: tuple[str, ...],
        lo: int,
        hi: int,
        near: tuple[str, ...] = (),
        after: tuple[str, ...] = (),
        own: bool = False,
    ) -> _Found | None:
        """The first date printed right after a trigger in ``[lo, hi)``, in a sentence with a ``near`` word if given
        (and about no recurring period: "the first Contract Year ... ending on September 30, 2020" ends a year, not the
        term),
        and with an ``after`` word shortly before the trigger if given ("from ... to <date>"); with ``own``, not a
        date that another contract's title is given ("to the Supply Agreement dated <date>")."""
        for trigger in self.hits(triggers, lo, hi):
            mention = self._date_at(trigger.end())
            if mention is None or (own and self.dates_another(mention.start)):
                continue
            if after and not self.hits(after, max(lo, trigger.start() - PERIOD_START_CHARS), trigger.start()):
                continue
            if near:
                s, e = self.sentence(trigger.start(), mention.end)
                if not self.hits(near, s, e) or self.hits(self.lex.recurring_periods, s, e):
                    continue
            return self._date_found(mention, FULL, rule="trigger")
        return None

    def dates_another(self, start: int) -> bool:
        """Whether the date at ``start`` follows the title of a contract the text refers to ("This Amendment to the
        Supply and Manufacturing Agreement dated <date>", "pursuant to a Subscription Agreement dated as of <date>"):
        it is that contract's date, not this one's."""
        kinds = self.lex.title_words
        if not self.lex.other_contract:
            return False
        return _referenced_title(kinds).search(self.text, max(0, start - SENTENCE_CHARS), start) is not None

    def _date_at(self, position: int) -> DateMention | None:
        """The date right after ``position``: within DATE_AFTER_TRIGGER characters once whitespace runs (a label's
        padding: "EXPIRATION DATE:      May 1, 2027") count as one, with no sentence end or "and" between."""
        index = bisect.bisect_left(self.date_starts, position)
        if index == len(self.dates) or self.dates[index].start - position > LABEL_PADDING_CHARS:
            return None
        mention = self.dates[index]
        gap = self.view[position : mention.start]
        if len(" ".join(gap.split())) > DATE_AFTER_TRIGGER:
            return None
        return None if _SENTENCE_END.search(gap) or _GAP_BREAK.search(gap) else mention

    def _date_found(self, mention: DateMention, factor: float, field: str = "", rule: str = "") -> _Found:
        printed = self.text[mention.start : mention.end]
        value = {"value": mention.value.isoformat(), "as_printed": printed}
        return self.found(field, value, mention.start, mention.end, factor, rule)

    def agreement_date(self) -> _Found | None:
        """After a trigger in the header; else the header's first date; else a date said to be the signing's
        ("Signed and effective this <date>"); else the last date of the signature block. Every rule is asked, so
        the value's features say whether the others confirm it or name another date."""
        trigger = self.date_after(self.lex.agreement_date, 0, self.header, own=True)
        first = next((d for d in self.own_dates if d.start < self.header and not self.dates_another(d.start)), None)
        header_first = self._date_found(first, PARTIAL, rule="header_first") if first else None
        signed_on = self.date_after(self.lex.signed_on, self.header, len(self.view), own=True)
        signed_on = replace(signed_on, factor=PARTIAL, rule="signed_on") if signed_on else None  # a body date
        signed = self._signed_dates()
        latest = max(signed, key=lambda d: d.value) if signed else None
        signature = self._date_found(latest, GUESS, rule="signature") if latest else None
        found = trigger or header_first or signed_on or signature
        if found is None:
            return None
        found = self._last_signed_beside(found)
        answers = [f.value["value"] for f in (trigger, header_first, signed_on) if f is not None and f is not found]
        answers += [d.value.isoformat() for d in signed if signature is not found]
        chosen = found.value["value"]
        seconds = {"confirmed": float(chosen in answers), "contradicted": float(any(a != chosen for a in answers))}
        return replace(found, field="agreement_date", features=seconds)

    def _last_signed_beside(self, found: _Found) -> _Found:
        """Dates printed side by side ("Date: 1/19/07 Date: January 22, 2007", "4/24/2018 04/25/2018 Date Date") are
        the parties' signatures, one each: the contract is made when the last one signs."""
        index = bisect.bisect_left(self.date_starts, found.start)
        run = [self.dates[index]] if index < len(self.dates) and self.dates[index].start == found.start else []
        while (
            run
            and index + 1 < len(self.dates)
            and _BESIDE.fullmatch(self.view, run[-1].end, self.dates[index + 1].start)
        ):
            index += 1
            run.append(self.dates[index])
        latest = max(run, key=lambda d: d.value) if len(run) > 1 else None
        if latest is None or latest.value.isoformat() == found.value["value"]:
            return found
        return replace(self._date_found(latest, found.factor, rule=found.rule), field=found.field)

    def _signed_dates(self) -> list[DateMention]:
        """The dates of the first signature block that has any: a body's "date of last signature" names the block
        without holding its dates, which follow the signatures at the end."""
        for block in self.hits(self.lex.signatures, self.header):
            lo = block.start()
            signed = [d for d in self.own_dates if lo <= d.start < lo + SIGNATURE_CHARS]
            if signed:
                return signed
        return []

    def start_date(self) -> _Found | None:
        """After a start trigger; else a date the contract defines as its effective date ("..., 2026 (the
        "Effective Date")")."""
        found = self.date_after(self.lex.start_date, 0, len(self.view)) or self._defined_date(self.lex.start_defined)
        return _renamed(found, "start_date")

    def end_date(self) -> _Found | None:
        """After an end trigger in a sentence about the term; else the end of a period ("from <date> to <date>");
        else a date the contract defines as its expiration date."""
        near = self.lex.term_words
        found = (
            self.date_after(self.lex.end_date, 0, len(self.view), near)
            or _ruled(self.date_after(self.lex.period_end, 0, len(self.view), near, self.lex.period_start), "period")
            or self._defined_date(self.lex.end_defined)
        )
        return _renamed(found, "end_date")

    def _defined_date(self, terms: tuple[str, ...]) -> _Found | None:
        """The first date right before a defined term naming it ('..., 2026 (the "Expiration Date")')."""
        for mention in self.dates:
            defined = self.hits(terms, mention.end, mention.end + DEFINED_TERM_GAP)
            if defined and _DEFINED_TERM_GAP.fullmatch(self.view, mention.end, defined[0].start()):
                return self._date_found(mention, FULL, rule="defined")
        return None

    # --- money -------------------------------------------------------------------------------------

    def amount(self) -> list[_Found]:
        """Total amount and currency: the first number after an amount trigger that has a currency beside it."""
        for trigger in self.hits(self.lex.amount):
            for number in _NUMBER.finditer(self.view, trigger.end(), trigger.end() + AMOUNT_AFTER_TRIGGER):
                value = parse_amount(self.view[number.start() : number.end()])
                if value is None or value <= 0:
                    continue
                end = number.end()
                multiplier = _MULTIPLIER.match(self.view, end)
                if multiplier:
                    value *= _MULTIPLIERS[multiplier.group(1)[:7]]
                    end = multiplier.end()
                currency = self._currency(number.start(), end)
                if currency is None:
                    continue
                code, c_start, c_end = currency
                span = (min(number.start(), c_start), max(end, c_end))
                total = {"value": float(value), "as_printed": self.text[span[0] : span[1]], "currency": code}
                printed = {"value": code, "as_printed": self.text[c_start:c_end]}
                return [  # the currency's evidence is the whole amount: a lone "$" shows a reviewer nothing
                    self.found("total_amount", total, *span, FULL, "trigger"),
                    self.found("currency", printed, *span, FULL, "trigger"),
                ]
        return []

    def _currency(self, start: int, end: int) -> tuple[str, int, int] | None:
        """A currency token just before the number ("$", "USD") or shortly after it ("руб.", a bracketed sum in words
        may sit between)."""
        before = self.view[max(0, start - 6) : start]
        for token, code in CURRENCIES:
            found = _phrase(token).search(before)
            if found and not before[found.end() :].strip():
                return code, start - len(before) + found.start(), start - len(before) + found.end()
        after = end
        rest = self.view[after : after + 3].lstrip()
        if rest.startswith("("):
            close = self.view.find(")", after, after + 250)
            after = close + 1 if close > 0 else after
        window_end = after + CURRENCY_AFTER_AMOUNT
        best = None
        for token, code in CURRENCIES:
            found = _phrase(token).search(self.view, after, window_end)
            if found and (best is None or found.start() < best[1]):
                best = (code, found.start(), _word_end(self.view, found.end()))
        return best

    # --- law and clauses ---------------------------------------------------------------------------

    def governing_law(self) -> _Found | None:
        """The jurisdiction named in a governing-law sentence; one that speaks of this agreement wins, and among those
        one that says it governs ("will be governed by") over one that only says how a term is construed."""
        candidates: list[tuple[int, int, str, str]] = []
        for trigger in self.hits(self.lex.governing_law):
            s, e = self.sentence(trigger.start(), trigger.end())
            place = self._law_in(s, e)
            if place is not None:
                candidates.append((s, e, *place))
        own = [c for c in candidates if self.hits(self.lex.this_contract, c[0], c[1])]
        if not candidates:
            return None
        governs = [c for c in own if self.hits(self.lex.governing_law[:1], c[0], c[1])]
        s, e, name, printed = (governs or own or candidates)[0]
        country = COUNTRY_OF_PROVINCE.get(name.casefold())  # "Ontario" is "Ontario, Canada", as when both are printed
        value = {"value": f"{name}, {country}" if country else name, "as_printed": printed}
        found = self.found("governing_law", value, s, e, FULL if own else PARTIAL, "this_contract" if own else "other")
        return replace(found, features={"places_disagree": float(len({c[2].casefold() for c in candidates}) > 1)})

    def _law_in(self, s: int, e: int) -> tuple[str, str] | None:
        """(jurisdiction, as printed) of the first "laws of <place>" (or "<Place> law") in the sentence ``[s, e)``."""
        for law in self.hits(self.lex.law_of, s, e):
            if self.hits(self.lex.not_governing_law, max(s, law.start() - 60), law.start()):
                continue
            places = self._places(law.end(), e)
            if places:
                return _jurisdiction_of(places)
        named = _NAMED_LAW.search(self.text, s, e)
        if named and named.group(1).rstrip(".").casefold() not in _LAW_STOPWORDS:  # "Applicable Law" names no place
            printed = named.group(1).rstrip(".")
            return JURISDICTION_ALIASES.get(printed.casefold(), printed), printed
        return None

    def _places(self, start: int, limit: int) -> list[tuple[str, str]]:
        """(name, as printed) of the place a law is named by from ``start`` and of the places its phrase goes on to:
        "the Province of Ontario, Canada", "the State of Ontario and the federal laws of Canada", "the United States
        and of the State of Texas"."""
        places: list[tuple[str, str]] = []
        place = self._jurisdiction(start, limit)
        while place is not None:
            printed = " ".join(self.text[place[0] : place[1]].split()).rstrip(".,")
            places.append((JURISDICTION_ALIASES.get(printed.casefold().rstrip("."), printed), printed))
            more = _PLACE_GOES_ON.match(self.text, place[1], limit)
            place = self._jurisdiction(more.end(), limit) if more else None
        return places

    def _jurisdiction(self, start: int, limit: int) -> tuple[int, int] | None:
        """The capitalized words naming a place, from ``start``: "the State of New York, without ..." -> New York,
        "New York State" -> New York; None for a kind of place alone ("the State in which ...")."""
        pos = start
        while True:
            rest = self.view[pos:limit].lstrip()
            skipped = pos + (len(self.view[pos:limit]) - len(rest))
            prefix = next((p for p in _LAW_PREFIXES if rest.startswith(p)), None)
            if prefix is None:
                pos = skipped
                break
            pos = skipped + len(prefix)
        words: list[re.Match[str]] = []
        for word in _CAPITALIZED.finditer(self.text, pos, limit):
            gap = self.text[words[-1].end() if words else pos : word.start()]
            if gap.strip() or len(words) == JURISDICTION_WORDS:
                break
            token = word.group(0).rstrip(".").casefold()
            if token == "of" and words:
                words.append(word)
                continue
            if not word.group(0)[0].isupper() or token in _LAW_STOPWORDS:
                break
            words.append(word)
        while words and words[-1].group(0).casefold() == "of":
            words.pop()
        if len(words) > 1 and words[-1].group(0).casefold() == "state":  # "New York State" is New York
            words.pop()
        if len(words) == 1 and words[0].group(0).casefold() in _PLACE_KINDS:
            return None  # "the laws of the State in which the Restaurant is located" names no place
        return (words[0].start(), words[-1].end()) if words else None

    def _is_heading(self, start: int, end: int) -> bool:
        """A section heading ("5. TERMINATION", "РАСТОРЖЕНИЕ ДОГОВОРА") names a clause without stating it."""
        words = self.text[start:end]
        letters = [c for c in words if c.isalpha()]
        return len(words.split()) < 5 or sum(c.isupper() for c in letters) > 0.8 * len(letters)

    def _without_cause(self, start: int, end: int) -> bool:
        """A sentence with a convenience cue ("without cause") or a bare notice period ("upon 90 days' written
        notice"), unless it names a breach or default: "may terminate at any time if the other party is in breach"
        is a right to end the contract for cause."""
        cue = self.lex.convenience + self.lex.weak_convenience + self.lex.notice_only
        if any(
            not _NEGATED.search(self.view, max(start, hit.start() - 8), hit.start())
            for hit in self.hits(self.lex.for_cause, start, end)
        ):
            return False  # "so long as no default exists ... may terminate at any time" names no cause
        if self.hits(self.lex.aftermath, start, end) and not self.hits(self.lex.terminate_right, start, end):
            return False  # what follows a termination "for any reason" is no right to terminate
        return bool(self.hits(cue, start, end))

    def clauses(self) -> list[_Found]:
        found: list[_Found] = []
        for field, phrases in self.lex.clauses.items():
            hits = self.hits(phrases)
            if not hits:
                continue
            sentences = [(self.sentence(m.start(), m.end()), m) for m in hits]
            prose = [x for x in sentences if not self._is_heading(*x[0])]
            chosen = (prose or sentences)[0]
            value: dict[str, Any] = {"value": True}
            features: dict[str, float] = {"sentences": float(min(len({lo for (lo, _), _ in sentences}), 5))}
            if field == "termination_clause":
                convenient = [x for x in sentences if self._without_cause(*x[0])]
                chosen = convenient[0] if convenient else chosen
                value["for_convenience"] = bool(convenient)
                (lo, hi), _ = chosen
                features |= {
                    "convenient_sentences": float(min(len({lo for (lo, _), _ in convenient}), 3)),
                    "explicit_cue": float(bool(self.hits(self.lex.convenience, lo, hi))),
                    "about_this_contract": float(bool(self.hits(self.lex.this_contract, lo, hi))),
                    "names_a_breach": float(bool(self.hits(self.lex.for_cause, lo, hi))),
                    "aftermath": float(bool(self.hits(self.lex.aftermath, lo, hi))),  # "survives termination"
                    # a convenience read from a sentence that waits on an event ("may terminate ... if we conclude")
                    "conditional": float(bool(convenient) and bool(self.hits(self.lex.conditions, lo, hi))),
                    "notice_period": float(bool(convenient) and bool(self.hits(self.lex.notice_only, lo, hi))),
                }
            (start, end), _ = chosen
            same = [hit for (lo, _), hit in sentences if lo == start]
            value["keywords"] = sorted({" ".join(hit.group(0).split()) for hit in same})
            found.append(replace(self.found(field, value, start, end, FULL, "keyword"), features=features))
        return found


def _jurisdiction_of(places: list[tuple[str, str]]) -> tuple[str, str]:
    """One jurisdiction from the places a law's phrase names: a federal law named with a state's is the state's ("the
    United States and the State of Texas": Texas); a province or state named with its country is both ("Ontario,
    Canada"); otherwise the first place."""
    first = places[0]
    if len(places) == 1:
        return first
    if first[0].casefold() in FEDERAL_LAWS:
        return next((p for p in places[1:] if p[0].casefold() not in FEDERAL_LAWS), first)
    country = places[1]
    if country[0].casefold() in FEDERAL_LAWS:
        return first
    return f"{first[0]}, {country[0]}", f"{first[1]}, {country[1]}"


def _upper(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def _word_end(view: str, end: int) -> int:
    """A stem's match widened to its whole word ("рубл" -> "рублей"), with an abbreviation's dot ("руб.")."""
    while end < len(view) and view[end].isalpha():
        end += 1
    start = end
    while start > 0 and view[start - 1].isalpha():
        start -= 1
    return end + 1 if view.startswith(".", end) and 0 < end - start <= ABBREVIATION_CHARS else end


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _renamed(found: _Found | None, field: str) -> _Found | None:
    return None if found is None else replace(found, field=field)


def _ruled(found: _Found | None, rule: str) -> _Found | None:
    return None if found is None else replace(found, rule=rule)


def looks_like_contract(contract: _Contract) -> bool:
    """A contract names its kind near the top and speaks of parties; a note that mentions a contract does not."""
    top = min(len(contract.view), TITLE_CHARS)
    parties = ("between", "party", "parties", "сторон*", "именуем*", "заключили")
    return bool(contract.hits(contract.lex.title_words, 0, top)) and bool(
        contract.hits(parties, 0, max(top, contract.header))
    )


# The rules each field's finder may have used, the most trusted first (the baseline of its flags).
_RULES: dict[str, tuple[str, ...]] = {
    "document_name": ("upper_edge", "upper", "title_case"),
    "contract_type": ("title", "header", "other"),
    "party_a": ("legal_form", "between", "quoted", "capitalized"),
    "party_b": ("legal_form", "between", "quoted", "capitalized"),
    "agreement_date": ("trigger", "header_first", "signed_on", "signature"),
    "start_date": ("trigger", "defined"),
    "end_date": ("trigger", "period", "defined"),
    "governing_law": ("this_contract", "other"),
}
_DATE_FIELDS = ("agreement_date", "start_date", "end_date")
_YEAR = 365.25
NAME_REPEATS = 3


_NAME_GLUE = frozenset({"of", "the", "and", "de", "for", "du", "la", "von", "van", "&"})


_BLANK = re.compile(r"_{3,}|\[\s*_*\s*\](?!\s*\()|\[\s*[•●]\s*\]")  # a blank to fill in: "____", "[ ]"
CLAUSE_CHARS = 600  # a party's name is given within this many characters of the clause that introduces the parties
_ADDRESS_WORDS = re.compile(r"(?i:street|avenue|road|boulevard|blvd|suite|floor|drive|p\.?\s?o\.?\s+box)(?!\w)|\d{3,}")
_SIGNATORY_WORDS = re.compile(r"(?i:officer|president|director|signatory|secretary|witness|attest|name:|title:|by:)")
_MORE_PLACES = re.compile(r"\s*(?:,|and)\s+(?:the\s+)?[A-Z][a-z]")  # the place goes on: ", Canada", "and Wales"
_NEXT_WORD = re.compile(r"[ \t]*,?[ \t]*([^\W\d_][\w.'’&-]*)")
_PREVIOUS_WORD = re.compile(r"([^\W\d_][\w.'’&-]*)[ \t]*$")
_BOUNDARY_WORDS = frozenset({"and", "or", "the", "a", "an", "by", "between", "among", "of", "with", "to", "as"})


def _boundary_features(contract: _Contract, start: int, end: int) -> dict[str, float]:
    """Whether a name's span could as well be longer, as a reader might take it: the contract goes on with a
    qualifier of the name ("and its Affiliates", "d/b/a ...") or a capitalized word on the same line, or a
    capitalized word precedes it on its line."""
    following = _NEXT_WORD.match(contract.text, end, min(len(contract.text), end + 60))
    preceding = _PREVIOUS_WORD.search(contract.text, max(0, start - 60), start)
    return {
        "continues_qualified": float(bool(contract.hits(contract.lex.name_continuations, end, end + 25))),
        "continues_capitalized": float(
            following is not None
            and following.group(1)[0].isupper()
            and following.group(1).casefold() not in _BOUNDARY_WORDS
        ),
        "preceded_capitalized": float(
            preceding is not None
            and preceding.group(1)[0].isupper()
            and preceding.group(1).casefold() not in _BOUNDARY_WORDS
        ),
    }


def _qualified_definition(contract: _Contract, end: int) -> bool:
    """Whether a party's definition, from its name to its alias, gives it another name or its successors ("a Delaware
    corporation (together with its successors and assigns, "Lessor")", "d/b/a Time Life Music"): whether those words
    belong to the party's name is a reader's choice."""
    alias = _ALIAS.search(contract.view, end, end + ALIAS_CHARS)
    return bool(contract.hits(contract.lex.name_qualifiers, end, alias.end() if alias else end + DEFINITION_CHARS))


SENTENCE_CHARS = 160  # how far back in its sentence a date's reference to another contract is looked for


@lru_cache(maxsize=8)
def _other_title(words: tuple[str, ...], kinds: tuple[str, ...]) -> re.Pattern[str]:
    """A reference to a contract by its title: one of `words`, capitalized words, a kind ("the Supply Agreement")."""
    opening = "|".join(re.escape(w) for w in words)
    kind = "|".join(re.escape(k) for k in kinds)
    return re.compile(rf"(?i:\b(?:{opening}))\s+(?:[A-Z][\w&,'./-]*\s+){{1,8}}(?i:(?:{kind})s?)\b")


@lru_cache(maxsize=8)
def _referenced_title(kinds: tuple[str, ...]) -> re.Pattern[str]:
    """A contract's title right before a date, opened in running text by a word that refers to it ("to the Supply
    and Manufacturing Agreement dated", "under that certain Note Purchase Agreement, dated as of"), not by "this"."""
    kind = "|".join(re.escape(k) for k in kinds)
    return re.compile(
        r"(?<!\w)(?:the|a|an|that\s+certain|certain|such|said)\s+"
        r"(?:[A-Z][\w&'./-]*,?\s+(?:(?:and|of|for|&)\s+)?){1,8}"
        rf"(?i:(?:{kind})s?)\s*,?\s*(?:\([^()]{{0,60}}\)\s*,?\s*)?"
        r"(?:dated|effective|made|entered\s+into)?(?:\s+as\s+of)?\s*$"
    )


def _names_other_contract(contract: _Contract, start: int) -> bool:
    """Whether a date's sentence, before it, names another contract by its title and never this one ("pursuant to a
    Subscription Agreement dated as of ..."): the date is that contract's."""
    lo = max(0, start - SENTENCE_CHARS)
    lo = max(lo, contract.view.rfind(". ", lo, start) + 1, contract.view.rfind("\n\n", lo, start) + 1)
    lex = contract.lex
    if not lex.other_contract or contract.hits((*lex.this_contract, "this"), lo, start):
        return False
    return _other_title(lex.other_contract, lex.title_words).search(contract.text, lo, start) is not None


# a defined term right after a value: '(the "Effective Date")', ', ("Eligible Account Holders")'
_DEFINED_AFTER = re.compile(r"\s*,?\s*\(\s*(?:the\s+|this\s+)?[\"“”«]([^\"“”«»]{2,60})[\"“”»]")


def _defined_term(contract: _Contract, end: int) -> dict[str, float]:
    """Whether a date is given a defined name right after it, and whether that name is one of the contract's own
    dates or its term ("Effective Date", "Initial Term") or something else ("Eligible Account Holders"): a date
    defining something else is not the contract's."""
    found = _DEFINED_AFTER.match(contract.text, end)
    if found is None:
        return {"defines_own_term": 0.0, "defines_other_term": 0.0}
    own = bool(contract.hits(contract.lex.date_terms, found.start(1), found.end(1)))
    return {"defines_own_term": float(own), "defines_other_term": float(not own)}


PREAMBLE_CHARS = 3000  # how far after the title the preamble calls the contract "this <title>"


@lru_cache(maxsize=8)
def _self_title(kinds: tuple[str, ...]) -> re.Pattern[str]:
    """How a preamble names the contract it opens: "This Marine Transportation Agreement", "THIS SERVICE AGREEMENT
    FOR TRANSFER AGENT SERVICES"."""
    kind = "|".join(re.escape(k) for k in kinds)
    return re.compile(
        # the name may go on with what the contract is for: "... AGREEMENT FOR TRANSFER AGENT SERVICES"
        rf"(?i:\bthis)\s+((?:[A-Z][\w&,'/-]*\s+(?:(?:and|of|for|&)\s+)?){{1,8}}(?i:{kind})\b"
        r"(?:\s+(?i:for|of)\s+(?:[A-Z][\w&'/-]*\s+){0,5}[A-Z][\w&'/-]*)?)"
    )


def _title_context(contract: _Contract, start: int, end: int) -> dict[str, float]:
    """Whether the title's neighbouring lines could belong to it: an upper-case line right above or below (a title
    printed over two lines: "SECOND AMENDED AND RESTATED" / "MARKETING AGREEMENT")."""
    line_start = contract.text.rfind("\n", 0, start) + 1
    line_end = contract.text.find("\n", end)
    line_end = len(contract.text) if line_end < 0 else line_end

    def upper_line(text: str) -> bool:
        letters = [c for c in text if c.isalpha()]
        return 3 <= len(letters) <= MAX_TITLE_CHARS and all(c.isupper() for c in letters)

    above = contract.text[:line_start].rstrip().rpartition("\n")[2]
    below = contract.text[line_end:].lstrip().partition("\n")[0]
    gap_above = contract.text[:line_start].count("\n", len(contract.text[:line_start].rstrip()))
    gap_below = len(contract.text[line_end:]) - len(contract.text[line_end:].lstrip())
    return {
        "upper_line_above": float(upper_line(above) and gap_above <= 3),
        "upper_line_below": float(upper_line(below) and contract.text.count("\n", line_end, line_end + gap_below) <= 3),
        "cut_on_its_line": float(bool(contract.text[line_start:start].strip() or contract.text[end:line_end].strip())),
    }


_TRAILING_MARKS = re.compile(r"\W+$")


def _title_ending(lex: Lexicon, title: str) -> dict[str, float]:
    """How a title ends: one that goes on past the word naming its kind ("AMENDMENT NO. 2", "JOINT VENTURE AGREEMENT
    MINDA IMPCO TECHNOLOGIES LIMITED", "License. Subject to the terms and conditions of"), where a language names
    the kind last, or ends on a punctuation mark ("AGREEMENT ACCORDINGLY,", "... AGREEMENT (") was read past the
    title or cut inside it."""
    bare = _TRAILING_MARKS.sub("", title)
    return {
        "past_its_kind": float(lex.kind_ends_title and not bare.endswith(lex.title_words)),
        "ends_on_a_mark": float(bare != title),
    }


def _features(contract: _Contract, found: _Found, others: dict[str, _Found]) -> dict[str, float]:
    """The evidence a value rests on, for the schema version's calibration (`lib/calibration`): which rule found it,
    whether other rules or fields agree, whether the value looks sane (a party holding a date, a one-word title, a
    date years from the contract's other dates), and how long the contract is (a short amendment or exhibit names
    its title and dates otherwise than a full agreement; a long one offers more places a clause or date may come
    from)."""
    rules = _RULES.get(found.field, ())
    features = {f"rule_{r}": float(found.rule == r) for r in rules[1:]}
    features["in_header"] = float(found.start < contract.header)
    features["length_log10"] = round(math.log10(1 + len(contract.text)), 4)
    value = str(found.value.get("value", ""))
    words = value.split()
    if found.field == "document_name":
        said = " ".join(contract.view[found.start : found.end].split())
        features |= _title_context(contract, found.start, found.end)
        features |= {
            "single_word": float(len(words) == 1),
            "long": float(len(words) > 6),
            "has_digit": float(any(c.isdigit() for c in value)),
            "named_again": float(" ".join(contract.view[found.end :].split()).count(said) > 0),
            **_title_ending(contract.lex, said),
        }
    elif found.field in ("party_a", "party_b"):
        inside = [d for d in contract.dates if found.start <= d.start < found.end]
        repeats = contract.view.count(contract.view[found.start : found.end], found.end)
        before = contract.text[found.start - 1 : found.start]
        features |= {
            "no_alias": float("alias" not in found.value),
            "holds_date": float(bool(inside)),
            "has_digit": float(any(c.isdigit() for c in value)),
            "single_word": float(len(words) == 1),
            "long": float(len(words) > 6),
            "not_repeated": float(repeats == 0),
            "repeats": float(min(repeats, NAME_REPEATS)),
            "cut_from_word": float(bool(before) and (before.isalnum() or before in ".-'’")),
            "common_words": float(min(sum(w.islower() and w not in _NAME_GLUE for w in words), 3)),
            "two_names": float(" and " in f" {value.casefold()} " and found.rule != "quoted"),
            **_boundary_features(contract, found.start, found.end),
            "qualified_definition": float(_qualified_definition(contract, found.end)),
            "no_parties_clause": float(not contract.hits(("between", "among"), 0, contract.header)),
            "far_from_clause": float(found.start - contract.parties_clause > CLAUSE_CHARS),
            "address_like": float(bool(_ADDRESS_WORDS.search(value))),  # "Walnut Street, Boulder, CO"
            "signatory_words": float(bool(_SIGNATORY_WORDS.search(value))),  # "K. Chan Chief Executive Officer ..."
            # a name printed in capitals ("WREN MEDIA, INC.") is a preamble's formal naming of a party; a name in
            # mixed case is as often a reader's pick from running text
            "in_capitals": float(value.isupper()),
        }
    elif found.field in _DATE_FIELDS:
        when = date.fromisoformat(value)
        title, lex = others.get("document_name"), contract.lex
        others_dates = {d.value for d in contract.own_dates} - {when}
        nearest = min((abs((d - when).days) for d in others_dates), default=0) / _YEAR
        features |= {
            "blank_in_header": float(bool(_BLANK.search(contract.text, 0, contract.header))),  # "____, 20__"
            "amends": float(title is not None and bool(contract.hits(lex.amends, title.start, title.end))),
            "other_dates": float(min(len(others_dates), 5)),
            "far_from_other_dates": float(bool(others_dates) and nearest > 1),
            "late_in_text": float(found.start > len(contract.text) / 2),
            "names_other_contract": float(_names_other_contract(contract, found.start)),
            **_defined_term(contract, found.end),
        }
        agreed = others.get("agreement_date")
        if found.field != "agreement_date":
            features["same_as_agreement_date"] = float(agreed is not None and agreed.value["value"] == value)
        start = others.get("start_date")
        if found.field == "end_date" and start is not None:
            features["not_after_start"] = float(value <= start.value["value"])
    elif found.field == "governing_law":
        printed = str(found.value.get("as_printed", value))
        at = contract.text.find(printed, found.start, found.end)
        after = contract.text[at + len(printed) : found.end] if at >= 0 else ""
        features |= {
            "single_word": float(len(words) == 1),
            "upper_case": float(value.isupper()),
            "more_places": float(bool(_MORE_PLACES.match(after))),  # "Ontario, Canada", "England and Wales"
        }
    elif found.field == "penalty_clause":
        keywords = found.value.get("keywords", [])
        features["liquidated"] = float(any("liquidated" in k for k in keywords))
    return features | found.features


def prepare_word_lists() -> None:
    """Compile every word list of every lexicon (`phrases.prepare`): the first contract a process reads compiled about
    a hundred patterns on the way (tens of ms); a warm process (`extraction-assets watch`) pays them up front."""
    for lexicon in LEXICONS.values():
        for field in dataclasses.fields(lexicon):
            value = getattr(lexicon, field.name)
            for phrases in value.values() if isinstance(value, dict) else [value]:
                if isinstance(phrases, tuple) and phrases and all(isinstance(p, str) for p in phrases):
                    prepare(phrases)


def extract_contract(doc: ExtractionInput, schema: SchemaVersion) -> list[CandidateItem]:
    """Seed 003's prescreen fields plus title, agreement date and governing law; nothing for a non-contract."""
    view = scan_view(doc.text)
    contract = _Contract(doc.text, view, LEXICONS[detect_language(view)])
    if not looks_like_contract(contract):
        return []
    title = contract.title()
    found = [
        contract.document_name(title),
        contract.contract_type(title),
        *contract.parties(),
        contract.agreement_date(),
        contract.start_date(),
        contract.end_date(),
        *contract.amount(),
        contract.governing_law(),
        *contract.clauses(),
    ]
    language = contract.lex.language
    by_field = {f.field: f for f in found if f is not None}
    return [
        field_candidate(
            schema,
            f.field,
            {**f.value, "language": language},
            doc.text[f.start : f.end],
            f.start,
            f.factor,
            f.shown,
            _features(contract, f, by_field),
        )
        for f in found
        if f is not None and schema.field(f.field) is not None
    ]
