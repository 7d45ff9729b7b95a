"""Grounding must return offsets that slice the source text to the quoted evidence, or nothing."""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from extraction_assets.lib.extraction import ground, normalize_with_map, turn_for_span
from extraction_assets.lib.models import Turn

SENTENCE = "The quarterly budget was approved on Monday."  # 44 characters
TEXT = f"Meeting notes. {SENTENCE} Next steps: hire two engineers and ship the beta."


# --- exact -----------------------------------------------------------------------------------


def test_exact_hit_offsets_come_from_the_text() -> None:
    g = ground("hire two engineers", TEXT)
    assert g is not None
    assert (g.match_kind, g.strength, g.score) == ("exact", "strong", 100.0)
    assert g.start == TEXT.index("hire two engineers")
    assert TEXT[g.start : g.end] == "hire two engineers"


def test_exact_strips_the_quote() -> None:
    g = ground("  \n hire two engineers \t", TEXT)
    assert g is not None and g.match_kind == "exact"
    assert TEXT[g.start : g.end] == "hire two engineers"


@pytest.mark.parametrize("quote", ["", "   ", "\n\t", "\u200b"])
def test_empty_or_blank_quote_is_not_grounded(quote: str) -> None:
    assert ground(quote, TEXT) is None


def test_empty_text_is_not_grounded() -> None:
    assert ground("anything", "") is None


def test_multiple_occurrences_choose_nearest_hint() -> None:
    text = "ship it. later we said ship it. and at the end: ship it."
    occurrences = [i for i in range(len(text)) if text.startswith("ship it", i)]
    assert len(occurrences) == 3
    g_first = ground("ship it", text)
    assert g_first is not None and g_first.start == occurrences[0]
    g_mid = ground("ship it", text, hint=occurrences[1] + 3)
    assert g_mid is not None and g_mid.start == occurrences[1]
    g_last = ground("ship it", text, hint=len(text))
    assert g_last is not None and g_last.start == occurrences[2]


def test_normalized_occurrences_choose_nearest_hint() -> None:
    text = "Ship It now. Then: SHIP  IT again."
    g = ground("ship it", text, hint=len(text) - 1)
    assert g is not None and g.match_kind == "normalized"
    assert text[g.start : g.end] == "SHIP  IT"


# --- token boundaries --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "text"),
    [
        ("Napro", "Patient is prescribed Naprosyn for pain."),
        ("headache", "She reports recurring headaches since May."),
        ("$100", "Total: $1000 due on receipt."),
        ("NAPRO", "Patient is prescribed Naprosyn for pain."),  # the normalized step respects them too
        ("три", "Выступил на трибуне в среду."),
        ("giao hàng", "Đội giao hàngxa làm việc muộn."),
    ],
)
def test_a_quote_inside_a_longer_word_is_not_grounded(quote: str, text: str) -> None:
    assert ground(quote, text) is None


def test_exact_skips_an_occurrence_inside_a_word_for_a_whole_one() -> None:
    text = "Total: $1000 due; deposit $100 paid."
    g = ground("$100", text)
    assert g is not None and g.match_kind == "exact"
    assert g.start == text.index("$100 ")


@pytest.mark.parametrize(
    ("quote", "text"),
    [("4.00", "SUB TOTAL\nRM4.00\nCASH"), ("03-04-06", "*S\nHD03-04-06 - 5/40/160"), ("600", "Ibuprofen 600mg daily")],
)
def test_letters_and_digits_are_tokens_of_their_own(quote: str, text: str) -> None:
    g = ground(quote, text)
    assert g is not None and g.match_kind == "exact"
    assert text[g.start : g.end] == quote


def test_a_chinese_quote_grounds_inside_a_sentence_without_spaces() -> None:
    text = "会议记录我们决定下周一发布新版本并且增加测试预算"
    g = ground("下周一发布新版本", text)
    assert g is not None and g.match_kind == "exact"
    assert text[g.start : g.end] == "下周一发布新版本"


def test_a_long_quote_inside_a_longer_word_is_only_weak() -> None:
    text = "Patient has severe heart problems today."
    g = ground("heart problem", text)
    assert g is not None and (g.match_kind, g.strength) == ("fuzzy", "weak")
    assert text[g.start : g.end] == "heart problems"


# --- normalized ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("quote", "text", "expected"),
    [
        # case
        ("the quarterly budget", "Notes: THE Quarterly Budget was fine.", "THE Quarterly Budget"),
        # whitespace runs and newlines
        (
            "budget was approved on monday",
            "Our budget   was\n  approved on\r\nMonday.",
            "budget   was\n  approved on\r\nMonday",
        ),
        # curly quotes and apostrophes in the text, straight in the quote
        (
            'we\'ll ship "beta" soon',
            "Dan: We\u2019ll ship \u201cbeta\u201d soon!",
            "We\u2019ll ship \u201cbeta\u201d soon",
        ),
        # curly in the quote, straight in the text
        ("it\u2019s done", "Status: it's done.", "it's done"),
        # NBSP and narrow NBSP inside the text
        ("costs 300 euros per month", "It costs\u00a0300\u202feuros per month.", "costs\u00a0300\u202feuros per month"),
        # NFKC full-width characters
        (
            "order abc 123",
            "Ref: \uff2f\uff32\uff24\uff25\uff32 \uff21\uff22\uff23 \uff11\uff12\uff13.",
            "\uff2f\uff32\uff24\uff25\uff32 \uff21\uff22\uff23 \uff11\uff12\uff13",
        ),
        # dashes and ellipsis
        (
            "from 2023-2024 ... maybe",
            "Budget from 2023\u20132024 \u2026 maybe later.",
            "from 2023\u20132024 \u2026 maybe",
        ),
        # zero-width characters in the text
        ("invoice overdue", "The in\u200bvoice\u200d overdue notice.", "in\u200bvoice\u200d overdue"),
    ],
)
def test_normalized_hit_maps_to_the_original_slice(quote: str, text: str, expected: str) -> None:
    assert text.find(quote) == -1  # otherwise this would not exercise the normalized path
    g = ground(quote, text)
    assert g is not None
    assert (g.match_kind, g.strength, g.score) == ("normalized", "medium", 100.0)
    assert text[g.start : g.end] == expected


def test_normalized_slice_starts_and_ends_on_non_whitespace() -> None:
    text = "a\n\n  Budget   Approved  \n b"
    g = ground("budget approved", text)
    assert g is not None
    sliced = text[g.start : g.end]
    assert sliced == "Budget   Approved"
    assert not sliced[0].isspace() and not sliced[-1].isspace()


# --- fuzzy -----------------------------------------------------------------------------------


def test_fuzzy_hit_with_one_wrong_character_is_weak() -> None:
    quote = SENTENCE.replace("budget", "budgat")
    assert len(quote) >= 40
    g = ground(quote, TEXT)
    assert g is not None
    assert (g.match_kind, g.strength) == ("fuzzy", "weak")
    assert 90.0 <= g.score < 100.0
    assert TEXT[g.start : g.end] == SENTENCE


def test_fuzzy_span_never_splits_a_word() -> None:
    quote = "quarterly budget was aproved on Monday"  # one letter missing
    g = ground(quote, TEXT)
    assert g is not None and g.match_kind == "fuzzy"
    sliced = TEXT[g.start : g.end]
    assert sliced == "quarterly budget was approved on Monday"
    assert not TEXT[g.start - 1].isalnum() and not TEXT[g.end].isalnum()


def test_fuzzy_span_does_not_take_in_a_neighbouring_word() -> None:
    text = "Findings consistent with degenerative disc disease at L5-S1."
    g = ground("mild degenerative disc disease", text)
    assert g is not None and g.match_kind == "fuzzy"
    assert text[g.start : g.end] == "degenerative disc disease"


def test_fuzzy_respects_min_score() -> None:
    quote = SENTENCE.replace("budget", "budgat")
    assert ground(quote, TEXT, min_fuzzy_score=99.5) is None


def test_invented_quote_is_rejected() -> None:
    assert ground("The board decided to relocate the office to Berlin next spring.", TEXT) is None


def test_short_quote_not_present_is_rejected() -> None:
    assert ground("the betas", TEXT) is None
    assert ground("hire 3 engineers", TEXT) is None
    # one edit away from "hire two", but too short for a fuzzy match to mean anything, whatever the threshold
    assert ground("hire twp", TEXT, min_fuzzy_score=0.0) is None


def test_long_claim_does_not_ground_on_its_first_ten_characters() -> None:
    """LangExtract #289: a long claim must not 'match' a short fragment that shares its prefix."""
    claim = "The budget for the new warehouse was cut by forty percent in Q3"
    assert len(claim) >= 60
    fragment = claim[:10]
    text = f"Agenda. {fragment} meeting is on Tuesday; bring the slides and coffee."
    assert fragment in text
    assert ground(claim, text) is None
    # When the source around the fragment is short, the length gate rejects it whatever the score threshold.
    assert ground(claim, f"{fragment} meeting.", min_fuzzy_score=0.0) is None
    assert ground(claim, fragment, min_fuzzy_score=0.0) is None


def test_long_claim_does_not_ground_on_a_short_text_it_contains() -> None:
    text = "The meeting is on Monday."
    claim = "The meeting is on Monday and the budget was approved by the whole board."
    assert ground(claim, text) is None


# --- non-ASCII ---------------------------------------------------------------------------------


def test_vietnamese_exact_offsets_are_str_indices() -> None:
    text = "Ghi chú: Chúng tôi sẽ giao hàng vào thứ Hai tuần sau."
    quote = "giao hàng vào thứ Hai"
    g = ground(quote, text)
    assert g is not None and g.match_kind == "exact"
    assert g.start == text.index(quote)
    assert text[g.start : g.end] == quote


def test_vietnamese_decomposed_text_maps_back_over_combining_marks() -> None:
    text = unicodedata.normalize("NFD", "Ghi chú: Chúng tôi sẽ giao hàng vào thứ Hai.")
    quote = "sẽ giao hàng vào thứ"  # composed, as an LLM would emit it
    expected = unicodedata.normalize("NFD", quote)
    assert text.find(quote) == -1 and expected in text
    g = ground(quote, text)
    assert g is not None and g.match_kind == "normalized"
    assert text[g.start : g.end] == expected


def test_vietnamese_fuzzy() -> None:
    text = "Biên bản: Khách hàng phàn nàn về thời gian giao hàng quá chậm. Hết."
    expected = "Khách hàng phàn nàn về thời gian giao hàng quá chậm"
    quote = expected.replace("chậm", "châm")
    g = ground(quote, text)
    assert g is not None and g.match_kind == "fuzzy"
    assert text[g.start : g.end] == expected


def test_russian_case_and_guillemets() -> None:
    text = "Итоги: Совещание по проекту «Альфа» перенесли на пятницу, 14 марта."
    g = ground('совещание по проекту "альфа" перенесли на пятницу', text)
    assert g is not None and g.match_kind == "normalized"
    assert text[g.start : g.end] == "Совещание по проекту «Альфа» перенесли на пятницу"


def test_russian_exact_offsets() -> None:
    text = "Клиент: Доставка опять задержалась на три дня."
    g = ground("задержалась на три дня", text)
    assert g is not None and g.match_kind == "exact"
    assert (g.start, g.end) == (23, 45)
    assert text[g.start : g.end] == "задержалась на три дня"


def test_chinese_exact_and_normalized_punctuation() -> None:
    text = "会议记录：我们决定下周一发布新版本，预算增加百分之十。"
    g = ground("预算增加百分之十", text)
    assert g is not None and g.match_kind == "exact"
    assert (g.start, g.end) == (18, 26)
    # ASCII comma in the quote, full-width comma in the text (NFKC)
    g2 = ground("发布新版本,预算增加", text)
    assert g2 is not None and g2.match_kind == "normalized"
    assert text[g2.start : g2.end] == "发布新版本，预算增加"


def test_chinese_fuzzy_does_not_snap_across_characters() -> None:
    text = "会议记录我们决定下周一发布新版本并且增加测试预算其他事项另行通知"  # no spaces, no punctuation
    expected = "我们决定下周一发布新版本并且增加测试预算"
    quote = expected.replace("测试", "测式")
    g = ground(quote, text)
    assert g is not None and g.match_kind == "fuzzy"
    assert text[g.start : g.end] == expected


# --- long texts --------------------------------------------------------------------------------


def test_long_text_fuzzy_search_is_windowed_around_hint() -> None:
    filler = "lorem ipsum dolor sit amet. " * 1000
    text = filler + SENTENCE + " " + filler
    assert len(text) > 20_000
    quote = SENTENCE.replace("budget", "budgat")
    pos = text.index(SENTENCE)
    near = ground(quote, text, hint=pos + 5)
    assert near is not None and near.match_kind == "fuzzy"
    assert text[near.start : near.end] == SENTENCE
    assert ground(quote, text, hint=0) is None  # the sentence is outside the window
    anywhere = ground(quote, text)  # no hint: whole text
    assert anywhere is not None and anywhere.start == pos
    exact = ground(SENTENCE, text, hint=0)  # exact search is never windowed
    assert exact is not None and exact.start == pos


# --- properties --------------------------------------------------------------------------------


def _is_letter_or_digit(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or unicodedata.combining(ch) != 0


def _cuts_a_word(text: str, pos: int) -> bool:
    """A stricter rule than grounding's (CJK counts as letters here), so every edge it allows is a token edge.

    Tokens are runs of letters or runs of digits: the edge between "RM" and "4.00" cuts nothing.
    """
    if not 0 < pos < len(text) or not _is_letter_or_digit(text[pos - 1]) or not _is_letter_or_digit(text[pos]):
        return False
    return text[pos - 1].isdigit() == text[pos].isdigit()


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(min_size=1, max_size=200), data=st.data())
def test_property_substring_grounds_exactly(text: str, data: st.DataObject) -> None:
    # the substring's edges drawn among the edges that cut no word (filtering random edges discarded most draws,
    # and hypothesis' health check failed the test on some seeds)
    i = data.draw(st.sampled_from([p for p in range(len(text)) if not _cuts_a_word(text, p)]))
    j = data.draw(st.sampled_from([p for p in range(i + 1, len(text) + 1) if not _cuts_a_word(text, p)]))
    sub = text[i:j]
    assume(sub.strip())
    g = ground(sub, text, hint=data.draw(st.none() | st.integers(0, len(text))))
    assert g is not None
    assert (g.match_kind, g.strength) == ("exact", "strong")
    assert text[g.start : g.end] == sub.strip()


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(min_size=1, max_size=200), data=st.data())
def test_property_an_exact_match_never_cuts_a_word(text: str, data: st.DataObject) -> None:
    i = data.draw(st.integers(0, len(text) - 1))
    j = data.draw(st.integers(i + 1, len(text)))
    g = ground(text[i:j], text)
    assume(g is not None and g.match_kind == "exact")
    assert g is not None
    assert not _cuts_a_word(text, g.start) or _cjk_edge(text, g.start)
    assert not _cuts_a_word(text, g.end) or _cjk_edge(text, g.end)


def _cjk_edge(text: str, pos: int) -> bool:
    """An edge beside an ideograph or kana (halfwidth katakana too): those scripts have no spaces between words."""
    kana = ("CJK ", "HIRAGANA", "KATAKANA", "HALFWIDTH KATAKANA")
    return any(unicodedata.name(c, "").startswith(kana) for c in text[pos - 1 : pos + 1])


@settings(max_examples=300, deadline=None, database=None)
@given(text=st.text(max_size=200))
def test_property_normalize_map_is_monotonic_and_in_range(text: str) -> None:
    normalized, index_map = normalize_with_map(text)
    assert len(index_map) == len(normalized)
    assert all(0 <= k < len(text) for k in index_map)
    assert all(a <= b for a, b in itertools.pairwise(index_map))
    assert normalized == normalized.strip(" ")
    assert "  " not in normalized


@settings(max_examples=200, deadline=None, database=None)
@given(
    text=st.text(alphabet="abcdefgh \n", min_size=1, max_size=120),
    data=st.data(),
)
def test_property_reformatted_substring_grounds_to_the_same_words(text: str, data: st.DataObject) -> None:
    # the substring's edges drawn among the edges that cut no word (filtering random edges discarded most draws,
    # and hypothesis' health check failed the test on some seeds)
    i = data.draw(st.sampled_from([p for p in range(len(text)) if not _cuts_a_word(text, p)]))
    j = data.draw(st.sampled_from([p for p in range(i + 1, len(text) + 1) if not _cuts_a_word(text, p)]))
    sub = text[i:j]
    assume(sub.strip())
    quote = " \t ".join(sub.upper().split())
    g = ground(quote, text)
    assert g is not None
    assert g.match_kind in ("exact", "normalized")
    assert normalize_with_map(text[g.start : g.end])[0] == normalize_with_map(sub)[0]


def test_normalize_with_map_points_at_source_characters() -> None:
    text = "  A\u00a0\u00a0B\u2014\u201cc\u201d\u2026 ﬁ "
    normalized, index_map = normalize_with_map(text)
    assert normalized == 'a b-"c"... fi'
    assert [text[k] for k in index_map] == ["A", "\u00a0", "B", "\u2014", "\u201c", "c", "\u201d"] + ["\u2026"] * 3 + [
        " ",
        "ﬁ",
        "ﬁ",
    ]


# --- turns -------------------------------------------------------------------------------------

TURNS = [
    Turn(turn_id="t1", start=10, end=50, speaker="Ana"),
    Turn(turn_id="t2", start=50, end=90, speaker="Bo"),
    Turn(turn_id="t3", start=100, end=200, speaker="Ana"),
]


def test_turn_for_span_without_turns() -> None:
    assert turn_for_span([], 0, 10) is None


@pytest.mark.parametrize(
    ("start", "end", "expected"),
    [
        (12, 20, "t1"),  # inside one turn
        (10, 10, "t1"),  # empty span at a turn start
        (45, 85, "t1"),  # starts in t1, overlaps t2 more: the start wins
        (50, 60, "t2"),  # turn boundaries are half-open
        (0, 15, "t1"),  # starts in a header, overlaps t1
        (92, 150, "t3"),  # starts in a gap, overlaps t3
        (85, 105, "t2"),  # starts in t2 even though it reaches t3
        (88, 120, "t2"),
        (0, 5, None),  # header before all turns
        (90, 100, None),  # entirely in a gap
        (250, 260, None),  # after all turns
    ],
)
def test_turn_for_span(start: int, end: int, expected: str | None) -> None:
    assert turn_for_span(TURNS, start, end) == expected


def test_turn_for_span_prefers_the_largest_overlap_when_start_is_outside() -> None:
    turns = [Turn(turn_id="a", start=10, end=20), Turn(turn_id="b", start=25, end=60)]
    assert turn_for_span(turns, 5, 40) == "b"
    assert turn_for_span(turns, 5, 26) == "a"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_ascii_text_normalizes_run_by_run_as_it_does_cluster_by_cluster(text: str) -> None:
    from extraction_assets.lib.extraction.grounding import _normalize_ascii_spans, _normalize_clusters

    assert _normalize_ascii_spans(text) == _normalize_clusters(text)


def _cluster_by_cluster(text: str) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """The normalization's definition, one cluster (a character and its combining marks) at a time."""
    from extraction_assets.lib.extraction.grounding import _CHAR_MAP, _ZERO_WIDTH

    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i = 0
    while i < len(text):
        if text[i] in _ZERO_WIDTH:
            i += 1
            continue
        j = i + 1
        while j < len(text) and (unicodedata.combining(text[j]) or text[j] in _ZERO_WIDTH):
            j += 1
        cluster = "".join(c for c in text[i:j] if c not in _ZERO_WIDTH)
        for folded in unicodedata.normalize("NFKC", cluster).casefold():
            piece = _CHAR_MAP.get(folded, folded)
            if piece.isspace():
                if not out or out[-1] == " ":
                    continue
                piece = " "
            for c in piece:
                out.append(c)
                starts.append(i)
                ends.append(j)
        i = j
    if out and out[-1] == " ":
        del out[-1], starts[-1], ends[-1]
    return "".join(out), tuple(starts), tuple(ends)


_MIXED = st.text(
    alphabet=st.one_of(
        st.characters(max_codepoint=127),
        st.sampled_from("\u0301\u0323\u0300\u200b\u00ad\ufeff\u00a0\u2009\u2019\u201c\u2014\u2026ếđßİſ½ﬁ中。"),
        st.characters(),
    ),
    max_size=80,
)


@settings(max_examples=500, deadline=None)
@given(_MIXED)
def test_mixed_text_normalizes_ascii_runs_as_it_does_cluster_by_cluster(text: str) -> None:
    from extraction_assets.lib.extraction.grounding import _normalize_clusters

    assert _normalize_clusters(text) == _cluster_by_cluster(text)


@st.composite
def _turns_and_span(draw: st.DrawFn) -> tuple[list[Turn], int, int]:
    """Turns as readers make them (in order, no overlap, some empty) or in any order and overlapping."""
    bounds = sorted(draw(st.lists(st.integers(0, 120), min_size=0, max_size=24)))
    if draw(st.booleans()):
        pairs = list(zip(bounds[::2], bounds[1::2], strict=False))
    else:
        drawn = [draw(st.tuples(st.integers(0, 120), st.integers(0, 120))) for _ in bounds[:12]]
        pairs = [(min(pair), max(pair)) for pair in drawn]
    turns = [Turn(turn_id=f"t{i}", start=a, end=b) for i, (a, b) in enumerate(pairs)]
    return turns, draw(st.integers(-5, 125)), draw(st.integers(-5, 125))


@settings(max_examples=500, deadline=None)
@given(_turns_and_span())
def test_the_turn_index_finds_the_turn_the_linear_search_finds(case: tuple[list[Turn], int, int]) -> None:
    from extraction_assets.lib.extraction.grounding import TurnIndex

    turns, start, end = case
    assert TurnIndex(turns).turn_for_span(start, end) == turn_for_span(turns, start, end)
