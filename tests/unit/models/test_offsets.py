"""The raw <-> scrubbed offset map: evidence found in scrubbed text must land on the same words in raw text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from extraction_assets.lib.offsets import OffsetMap, Replacement

RAW = "call 0901234567 or mail a@b.com today"
PHONE = (5, 15, "PHONE", "[PHONE_1]")
EMAIL = (24, 31, "EMAIL", "[EMAIL_1]")


@pytest.fixture
def mapped() -> tuple[str, OffsetMap]:
    return OffsetMap.apply(RAW, [EMAIL, PHONE])  # deliberately unsorted


def test_apply_builds_scrubbed_text_and_sorted_replacements(mapped: tuple[str, OffsetMap]) -> None:
    scrubbed, omap = mapped
    assert scrubbed == "call [PHONE_1] or mail [EMAIL_1] today"
    assert [r.kind for r in omap.replacements] == ["PHONE", "EMAIL"]
    for r in omap.replacements:
        assert scrubbed[r.scrub_start : r.scrub_end] == r.placeholder
    assert RAW[omap.replacements[0].raw_start : omap.replacements[0].raw_end] == "0901234567"
    assert RAW[omap.replacements[1].raw_start : omap.replacements[1].raw_end] == "a@b.com"


def test_no_replacements_is_the_identity() -> None:
    scrubbed, omap = OffsetMap.apply("nothing to hide", [])
    assert scrubbed == "nothing to hide"
    assert omap.to_raw(3, 9) == (3, 9)
    assert omap.to_scrubbed(3, 9) == (3, 9)


def test_linear_shift_outside_replacements(mapped: tuple[str, OffsetMap]) -> None:
    scrubbed, omap = mapped
    s = scrubbed.index("today")
    assert RAW[slice(*omap.to_raw(s, s + 5))] == "today"
    s = scrubbed.index("or mail")
    assert RAW[slice(*omap.to_raw(s, s + 7))] == "or mail"
    assert omap.to_raw(0, 4) == (0, 4)


def test_span_covering_a_placeholder_maps_to_the_raw_value(mapped: tuple[str, OffsetMap]) -> None:
    scrubbed, omap = mapped
    s = scrubbed.index("[PHONE_1]")
    assert RAW[slice(*omap.to_raw(s, s + len("[PHONE_1]")))] == "0901234567"
    assert RAW[slice(*omap.to_raw(0, len(scrubbed)))] == RAW


def test_boundaries_inside_a_placeholder_snap_outwards(mapped: tuple[str, OffsetMap]) -> None:
    _, omap = mapped
    phone, email = omap.replacements
    # start inside the placeholder snaps to the raw start, end inside snaps to the raw end
    assert omap.to_raw(phone.scrub_start + 3, email.scrub_start + 2) == (phone.raw_start, email.raw_end)
    # both boundaries inside the same placeholder: the whole raw value
    assert omap.to_raw(phone.scrub_start + 1, phone.scrub_start + 2) == (phone.raw_start, phone.raw_end)
    # an empty span inside a placeholder still covers the whole value
    assert omap.to_raw(phone.scrub_start + 4, phone.scrub_start + 4) == (phone.raw_start, phone.raw_end)


def test_to_scrubbed_snaps_cut_values_to_the_whole_placeholder(mapped: tuple[str, OffsetMap]) -> None:
    scrubbed, omap = mapped
    phone, _ = omap.replacements
    # a turn boundary that cuts the phone number in half must not cut the placeholder in half
    assert omap.to_scrubbed(0, phone.raw_start + 4) == (0, phone.scrub_end)
    assert omap.to_scrubbed(phone.raw_start + 4, len(RAW)) == (phone.scrub_start, len(scrubbed))
    s = RAW.index("today")
    assert scrubbed[slice(*omap.to_scrubbed(s, s + 5))] == "today"


def test_spans_touching_a_placeholder_edge_do_not_grow(mapped: tuple[str, OffsetMap]) -> None:
    _, omap = mapped
    phone, _ = omap.replacements
    assert omap.to_raw(0, phone.scrub_start) == (0, phone.raw_start)
    assert omap.to_raw(phone.scrub_end, phone.scrub_end + 3) == (phone.raw_end, phone.raw_end + 3)


def test_invalid_spans_are_rejected(mapped: tuple[str, OffsetMap]) -> None:
    _, omap = mapped
    with pytest.raises(ValueError):
        omap.to_raw(5, 4)
    with pytest.raises(ValueError):
        omap.to_scrubbed(-1, 3)


def test_apply_rejects_overlapping_or_out_of_range_spans() -> None:
    with pytest.raises(ValueError):
        OffsetMap.apply("abcdefgh", [(0, 4, "X", "[X_1]"), (3, 6, "X", "[X_2]")])
    with pytest.raises(ValueError):
        OffsetMap.apply("abc", [(1, 9, "X", "[X_1]")])


def test_inconsistent_maps_are_rejected() -> None:
    good = Replacement(kind="X", raw_start=2, raw_end=5, scrub_start=2, scrub_end=7, placeholder="[X_1]")
    OffsetMap(replacements=[good])
    with pytest.raises(ValidationError):  # placeholder length does not match its scrubbed span
        OffsetMap(replacements=[good.model_copy(update={"scrub_end": 9})])
    with pytest.raises(ValidationError):  # text before the replacement changed length
        OffsetMap(replacements=[good.model_copy(update={"scrub_start": 3, "scrub_end": 8})])
    with pytest.raises(ValidationError):  # unsorted
        second = Replacement(kind="X", raw_start=6, raw_end=8, scrub_start=8, scrub_end=13, placeholder="[X_2]")
        OffsetMap(replacements=[second, good])


def test_map_survives_serialisation(mapped: tuple[str, OffsetMap]) -> None:
    scrubbed, omap = mapped
    restored = OffsetMap.model_validate_json(omap.model_dump_json())
    for s, e in [(0, 4), (6, 8), (0, len(scrubbed)), (scrubbed.index("today"), len(scrubbed))]:
        assert restored.to_raw(s, e) == omap.to_raw(s, e)


# --- properties ------------------------------------------------------------------------------------------------

ALPHABET = st.characters(codec="utf-8", exclude_categories=["Cs"])


@st.composite
def scrubbed_documents(draw: st.DrawFn) -> tuple[str, str, OffsetMap]:
    """Random raw text (any Unicode) with random non-overlapping, non-empty replacements."""
    raw = draw(st.text(ALPHABET, max_size=80))
    cuts = sorted(draw(st.sets(st.integers(0, len(raw)), max_size=12)))
    spans = []
    for start, end in zip(cuts[0::2], cuts[1::2], strict=False):
        placeholder = draw(st.text(ALPHABET, min_size=1, max_size=10))
        spans.append((start, end, "K", placeholder))
    scrubbed, omap = OffsetMap.apply(raw, spans)
    return raw, scrubbed, omap


def _gaps(scrubbed: str, omap: OffsetMap) -> list[tuple[int, int]]:
    """The stretches of scrubbed text between placeholders (inclusive bounds)."""
    gaps, pos = [], 0
    for r in omap.replacements:
        gaps.append((pos, r.scrub_start))
        pos = r.scrub_end
    gaps.append((pos, len(scrubbed)))
    return gaps


@settings(max_examples=300, deadline=None)
@given(doc=scrubbed_documents(), data=st.data())
def test_placeholder_free_spans_map_to_identical_raw_text(doc: tuple[str, str, OffsetMap], data: st.DataObject) -> None:
    raw, scrubbed, omap = doc
    lo, hi = data.draw(st.sampled_from(_gaps(scrubbed, omap)))
    s = data.draw(st.integers(lo, hi))
    e = data.draw(st.integers(s, hi))
    rs, re_ = omap.to_raw(s, e)
    assert raw[rs:re_] == scrubbed[s:e]
    assert omap.to_scrubbed(rs, re_) == (s, e)


@settings(max_examples=300, deadline=None)
@given(doc=scrubbed_documents(), data=st.data())
def test_any_span_maps_to_whole_replacements(doc: tuple[str, str, OffsetMap], data: st.DataObject) -> None:
    raw, scrubbed, omap = doc
    s = data.draw(st.integers(0, len(scrubbed)))
    e = data.draw(st.integers(s, len(scrubbed)))
    rs, re_ = omap.to_raw(s, e)
    assert 0 <= rs <= re_ <= len(raw)
    for r in omap.replacements:
        if r.scrub_start < e and s < r.scrub_end:  # the span shows (part of) this placeholder
            assert rs <= r.raw_start and r.raw_end <= re_
        if r.scrub_start < s < r.scrub_end:
            assert rs == r.raw_start
        if r.scrub_start < e < r.scrub_end:
            assert re_ == r.raw_end
    # mapping back covers at least the original span
    ts, te = omap.to_scrubbed(rs, re_)
    assert ts <= s and e <= te


@settings(max_examples=300, deadline=None)
@given(doc=scrubbed_documents(), data=st.data())
def test_raw_spans_never_cut_a_placeholder(doc: tuple[str, str, OffsetMap], data: st.DataObject) -> None:
    raw, scrubbed, omap = doc
    s = data.draw(st.integers(0, len(raw)))
    e = data.draw(st.integers(s, len(raw)))
    ss, se = omap.to_scrubbed(s, e)
    assert 0 <= ss <= se <= len(scrubbed)
    for r in omap.replacements:
        if r.scrub_start < se and ss < r.scrub_end:
            assert ss <= r.scrub_start and r.scrub_end <= se


@settings(max_examples=300, deadline=None)
@given(doc=scrubbed_documents())
def test_raw_text_is_rebuilt_from_scrubbed_text_and_the_replaced_values(doc: tuple[str, str, OffsetMap]) -> None:
    raw, scrubbed, omap = doc
    pieces, pos = [], 0
    for r in omap.replacements:
        pieces += [scrubbed[pos : r.scrub_start], raw[r.raw_start : r.raw_end]]
        pos = r.scrub_end
    pieces.append(scrubbed[pos:])
    assert "".join(pieces) == raw


@settings(max_examples=300, deadline=None)
@given(doc=scrubbed_documents(), data=st.data())
def test_mapping_a_mapped_span_again_changes_nothing(doc: tuple[str, str, OffsetMap], data: st.DataObject) -> None:
    _, scrubbed, omap = doc
    s = data.draw(st.integers(0, len(scrubbed)))
    e = data.draw(st.integers(s, len(scrubbed)))
    raw_span = omap.to_raw(s, e)
    scrub_span = omap.to_scrubbed(*raw_span)
    assert omap.to_raw(*scrub_span) == raw_span  # snapping outwards is a closure: a second round trip is stable
    assert omap.to_scrubbed(*omap.to_raw(*scrub_span)) == scrub_span
