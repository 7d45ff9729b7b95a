"""The one phrase-to-pattern builder of the heuristic packs: whole words except in CJK, bounded only at a word
character, stems, gaps, and a word list that matches where its phrases would one by one, longest first."""

from __future__ import annotations

import re

import pytest

from extraction_assets.lib.heuristics.phrases import (
    LONG_WORD,
    PhraseScan,
    _opening_starts,
    _word_pattern,
    any_phrase,
    any_phrase_source,
    phrase_needle,
    phrase_opening,
    phrase_pattern,
)
from extraction_assets.lib.heuristics.segments import normalize_for_match
from extraction_assets.lib.literals import LiteralScan


def _plain(phrase: str) -> str:
    """What a phrase means, written the obvious way: its words across any whitespace, `(?<!\\w)` and `(?!\\w)` where
    its edge is a word character, none in CJK; a word ending in `*` a stem."""
    norm = normalize_for_match(phrase)
    words = [re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w) for w in norm.split()]
    core = norm.replace("*", "")
    if re.search(r"[\u3400-\u9fff]", norm):
        return r"\s+".join(words)
    left = r"(?<!\w)" if core[0].isalnum() else ""
    return left + r"\s+".join(words) + (r"(?!\w)" if core[-1].isalnum() else "")


@pytest.mark.parametrize(
    ("phrase", "text"),
    [
        ("i will", "ok so i  will send it"),
        ("gửi ... trước", "em gửi báo cáo trước thứ sáu"),
        ("short-staffed", "we are short-staffed today"),
        ("我们会", "明天我们会发货"),
        ("I'll", "i'll call"),
        ("terminat*", "the parties may terminate it"),
    ],
)
def test_every_match_of_a_phrase_holds_its_needle(phrase: str, text: str) -> None:
    norm = normalize_for_match(text)
    match = phrase_pattern(phrase).search(norm)
    assert match is not None
    assert phrase_needle(phrase) in match.group(0)
    assert phrase_needle(phrase) in LiteralScan([phrase_needle(phrase), "absent"]).present(norm)


def test_a_phrase_matches_whole_words_except_in_cjk() -> None:
    pattern = any_phrase(["bill", "giao trễ", "发票"])
    assert pattern.search(normalize_for_match("Your Bill is ready"))
    assert not pattern.search(normalize_for_match("billing run"))
    assert pattern.search(normalize_for_match("hàng  giao   trễ"))
    assert pattern.search("请开发票")
    assert not any_phrase([]).search("anything")
    assert not any_phrase(["  "]).search("  ")


def test_an_edge_that_is_not_a_word_character_is_not_bounded_and_a_stem_takes_its_endings() -> None:
    assert phrase_pattern("$").search("us$5") and phrase_pattern("inc.").search("acme inc.,ltd")
    assert phrase_pattern("by:").search("signed by:jane")
    assert not phrase_pattern("by:").search("nearby: x"), "a word-character edge is still bounded"
    assert [m.group() for m in phrase_pattern("terminat*").finditer("terminate, termination; exterminate")] == [
        "terminate",
        "termination",
    ]
    assert phrase_pattern("gửi ... trước").search("gửi báo cáo trước") and not phrase_pattern("a ... b").search("ab")


@pytest.mark.parametrize(
    "text",
    ["plan: risk", "xrisk plans", "kế hoạch và rủi ro", "风险很大", "at risk, 2risk", "an invoice", "x-fee", ""],
)
def test_a_word_list_matches_where_its_phrases_would_one_by_one_longest_first(text: str) -> None:
    phrases = ("risk", "risks", "plan", "Kế hoạch", "kế hoạch", "rủi ro", "风险", "2risk", "invoice", "-fee", "pay*")
    ordered = sorted(dict.fromkeys(normalize_for_match(p) for p in phrases), key=len, reverse=True)
    plain = re.compile("|".join(f"(?:{_plain(p)})" for p in ordered))
    norm = normalize_for_match(text)
    assert [m.span() for m in any_phrase(phrases).finditer(norm)] == [m.span() for m in plain.finditer(norm)]
    assert any_phrase_source(phrases).count("(?:") == len(ordered), "a phrase written twice is one alternative"


@pytest.mark.parametrize(
    ("phrase", "opening"),
    [
        ("total amount", ("total", False, "amount")),
        ("in accordance with the law*", ("in", False, "accordance")),
        ("govern*", ("govern", True, "")),
        ("governing law*", ("governing", False, "law")),
        ("until", ("until", False, "")),
        ("by:", ("by", False, "")),
        ("1. definitions", ("1", False, "")),
        ("(the date", None),
        ("/s/", None),  # opens with a sign: anywhere
        ("合同", None),  # CJK: no word boundary
    ],
)
def test_phrase_opening(phrase: str, opening: tuple[str, bool, str] | None) -> None:
    assert phrase_opening(phrase) == opening


_LIST = ("total amount", "a sum of", "govern*", "by:", "until", "in the amount of")


@pytest.mark.parametrize(
    ("text", "lo", "hi"),
    [
        ("the total  amount is a sum of $5, governed by: law until 2027", 0, None),
        ("subtotal amount, a sum ofx, governance until", 0, None),  # words that only begin like a phrase
        ("the total amount until", 5, None),  # from inside a word
        ("the total amount untilnow", 0, 21),  # a window that ends inside a word: "until" matches there
        ("until until total amount", 3, None),
        ("in the\n amount of, a  sum of, in them amount of", 0, None),  # a second word across a line break
    ],
)
def test_phrase_scan_finds_what_the_pattern_finds(text: str, lo: int, hi: int | None) -> None:
    want = [m.span() for m in any_phrase(_LIST).finditer(text, lo, len(text) if hi is None else hi)]
    assert [m.span() for m in PhraseScan(text).finditer(_LIST, lo, hi)] == want
    assert want  # each case holds a match


def test_phrase_scan_reads_a_list_that_opens_with_a_sign_with_its_pattern() -> None:
    text = "signed /s/ jane doe, by: john"
    assert [m.group() for m in PhraseScan(text).finditer(("/s/", "by:"))] == ["/s/", "by:"]


_LONG_LIST = ("terminat*", "effective date", "governing law", "signature", "payment")


@pytest.mark.parametrize(
    "text",
    [
        "termination for cause; the effective date; governing law: ny; signature; payment due",
        "predetermination, ineffective dates, misgoverning laws, signatures, prepayments",  # the words inside others
        "payment",  # the whole text
        "effective\n date, effective  dated, effective data, terminate terminated terminates",  # stems and a 2nd word
        "signaturesignature payment-payment effective_date",  # a word glued to itself, to a sign, to "_"
    ],
)
def test_phrase_scan_finds_long_opening_words_where_the_pattern_does(text: str) -> None:
    # openings of LONG_WORD characters or more are found with str.find: the places must be the pattern's
    assert all(len(w.split()[0].rstrip("*")) >= LONG_WORD for w in _LONG_LIST)
    want = [m.span() for m in any_phrase(_LONG_LIST).finditer(text)]
    assert [m.span() for m in PhraseScan(text).finditer(_LONG_LIST)] == want
    for phrase in (*_LONG_LIST, "a sum of", "in the amount of"):  # and a short opening word, searched as before
        opening = phrase_opening(phrase)
        assert opening is not None
        assert _opening_starts(text, opening) == [m.start() for m in _word_pattern(*opening).finditer(text)]
