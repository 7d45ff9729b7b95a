"""Chunks: a transcript cut at turns only, prose at paragraph then sentence boundaries, with overlap, never in a
placeholder; merged."""

from __future__ import annotations

import itertools
import random

import pytest

from extraction_assets.lib.extraction import Chunk, chunk_input, merge_chunk_candidates, split_chunks
from extraction_assets.lib.models import CandidateItem, ExtractionInput, Turn
from extraction_assets.lib.prompt_files import parse_schema_text
from extraction_assets.lib.schemas import FieldSpec, SchemaError, SchemaVersion, Shape


def _paragraphs(count: int, sentences: int = 6) -> str:
    return "\n\n".join(
        " ".join(f"Paragraph {p} sentence {s} says something about clause {p}-{s}." for s in range(sentences))
        for p in range(count)
    )


def test_a_short_document_is_one_chunk() -> None:
    assert split_chunks("Short text.", 1000, 100) == [Chunk(0, 1, 0, 11, "Short text.")]


def test_chunks_cover_the_text_within_the_limit_and_overlap() -> None:
    text = _paragraphs(40)
    chunks = split_chunks(text, 2000, 300)
    assert len(chunks) > 5
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for chunk in chunks:
        assert chunk.text == text[chunk.start : chunk.end]
        assert len(chunk.text) <= 2000
    for before, after in itertools.pairwise(chunks):
        assert after.start < before.end, "neighbours overlap"
        assert before.end - after.start <= 300
        assert after.start > before.start


def test_a_cut_prefers_a_paragraph_break_then_a_sentence_end() -> None:
    text = _paragraphs(10)
    for chunk in split_chunks(text, 1500, 0)[:-1]:
        assert text[chunk.end - 2 : chunk.end] == "\n\n"
    one_paragraph = _paragraphs(1, sentences=80)
    for chunk in split_chunks(one_paragraph, 1500, 200)[:-1]:
        assert chunk.text.rstrip().endswith(".")
    for chunk in split_chunks(one_paragraph, 1500, 200)[1:]:
        assert chunk.text.startswith("Paragraph 0 sentence"), "an overlap starts at a sentence"


def _transcript(turns: int) -> tuple[str, list[Turn]]:
    """Lines `Speaker: words.` where each speaker talks for three turns of four sentences."""
    lines = [
        f"{'Ann' if (n // 3) % 2 == 0 else 'Bao'}: " + " ".join(f"Turn {n} point {p} is made here." for p in range(4))
        for n in range(turns)
    ]
    text, spans, at = "", [], 0
    for n, line in enumerate(lines):
        spans.append(Turn(turn_id=f"l{n}", start=at, end=at + len(line), speaker=line.split(":")[0]))
        text += line + "\n"
        at = len(text)
    return text, spans


def test_a_transcript_is_cut_where_the_speaker_changes_and_an_overlap_starts_at_a_turn() -> None:
    text, turns = _transcript(60)
    speaker_changes = {t.start for before, t in itertools.pairwise(turns) if t.speaker != before.speaker}
    turn_starts = {t.start for t in turns}
    chunks = split_chunks(text, 2000, 150, turns)
    assert len(chunks) > 3
    for before, after in itertools.pairwise(chunks):
        assert before.end in speaker_changes, "not after a sentence in the middle of someone's turn"
        assert after.start in turn_starts and after.start < before.end, "the overlap is whole turns"
    plain = split_chunks(text, 2000, 150)
    assert any(c.end not in speaker_changes for c in plain[:-1]), "without turns, sentence ends are cuts as well"


def _uneven_transcript(seed: int, turns: int, longest: int) -> tuple[str, list[Turn]]:
    """Turns of one to `longest` characters by alternating speakers, sentences of about 40 characters."""
    rng = random.Random(seed)
    text, spans = "", []
    for n in range(turns):
        speaker = "Ann" if n % 2 else "Bao"
        words, length = f"{speaker}: ", rng.randint(10, longest)
        while len(words) < length:
            words += f"Point {len(words)} of turn {n} is made. "
        words = words.rstrip()[:longest]
        spans.append(Turn(turn_id=f"l{n}", start=len(text), end=len(text) + len(words), speaker=speaker))
        text += words + "\n"
    return text, spans


@pytest.mark.parametrize("seed", range(6))
def test_every_turn_no_longer_than_a_chunk_is_whole_in_one(seed: int) -> None:
    max_chars = 3000
    text, turns = _uneven_transcript(seed, 120, max_chars)  # turns from a line to a whole chunk long
    chunks = split_chunks(text, max_chars, 400, turns)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert all(len(c.text) <= max_chars for c in chunks)
    for before, after in itertools.pairwise(chunks):
        assert after.start <= before.end, "nothing between two chunks is left out"
    for turn in turns:
        assert any(c.start <= turn.start and turn.end <= c.end for c in chunks), f"{turn.turn_id} cut in two"


def test_a_turn_longer_than_a_chunk_is_cut_at_sentence_ends_and_the_next_turn_is_whole() -> None:
    long_turn = "Ann: " + " ".join(f"Sentence {n} of a very long turn." for n in range(200))
    short_turn = "Bao: A short answer."
    text = long_turn + "\n" + short_turn + "\n"
    turns = [
        Turn(turn_id="l0", start=0, end=len(long_turn), speaker="Ann"),
        Turn(turn_id="l1", start=len(long_turn) + 1, end=len(long_turn) + 1 + len(short_turn), speaker="Bao"),
    ]
    chunks = split_chunks(text, 2000, 200, turns)
    assert len(chunks) > 3
    for chunk in chunks[:-1]:
        assert chunk.text.rstrip().endswith("."), "inside the long turn, a cut falls after a sentence"
    assert any(short_turn in c.text for c in chunks)


def test_no_cut_splits_a_placeholder() -> None:
    text = "x" * 990 + "[PHONE_12]" + "y" * 990
    chunks = split_chunks(text, 1000, 0)
    assert all("[PHONE_12]" in c.text or "PHONE" not in c.text for c in chunks)
    words = " ".join(["[EMAIL_1]"] * 400)
    for chunk in split_chunks(words, 1000, 100):
        assert chunk.text.strip().startswith("[EMAIL_1]") and chunk.text.strip().endswith("[EMAIL_1]")


def test_chunk_input_rebases_the_turns_it_overlaps() -> None:
    text = "a" * 100 + "b" * 100
    doc = ExtractionInput(
        doc_id="d",
        tenant_id="t",
        kind="chat",
        text=text,
        turns=[Turn(turn_id="t1", start=0, end=100), Turn(turn_id="t2", start=100, end=200)],
    )
    part = chunk_input(doc, Chunk(1, 2, 150, 200, text[150:]))
    assert part.text == "b" * 50
    assert [(t.turn_id, t.start, t.end) for t in part.turns] == [("t2", 0, 50)]


def _schema(shape: Shape) -> SchemaVersion:
    return SchemaVersion(
        schema="t", version="v1", heuristic="generic", shape=shape, fields=[FieldSpec(name="party", type="string")]
    )


def _candidate(span: str, value: str | None = None, confidence: float = 0.9) -> CandidateItem:
    return CandidateItem(
        item_type="party", title=span, evidence_span=span, confidence=confidence, value={"value": value or span}
    )


def test_items_seen_in_two_overlapping_chunks_are_one_item_with_a_hint_into_the_whole_text() -> None:
    text = "Alpha says hello. The Buyer shall pay. Omega ends."
    first, second = Chunk(0, 2, 0, 38, text[:38]), Chunk(1, 2, 18, len(text), text[18:])
    merged = merge_chunk_candidates(
        _schema("items"),
        [
            (first, [_candidate("The Buyer shall pay.", confidence=0.8)]),
            (second, [_candidate("the buyer  shall pay.")]),
        ],
    )
    assert len(merged) == 1
    assert merged[0].confidence == 0.9
    assert merged[0].span_hint == text.index("The Buyer")


@pytest.mark.parametrize("shape", ["items", "fields", "records"])
def test_the_merge_does_not_depend_on_the_order_the_chunks_answered_in(shape: Shape) -> None:
    """Chunks are asked concurrently: equally good answers of two chunks settle on the earlier chunk's."""
    text = "The Buyer shall pay. ... the buyer shall pay."
    first, second = Chunk(0, 2, 0, 20, text[:20]), Chunk(1, 2, 20, len(text), text[20:])
    answers = [(first, [_candidate("The Buyer shall pay.")]), (second, [_candidate("the buyer shall pay.")])]
    in_order = merge_chunk_candidates(_schema(shape), answers)
    assert merge_chunk_candidates(_schema(shape), answers[::-1]) == in_order
    assert in_order[0].span_hint == 0


def test_a_field_takes_the_best_grounded_value_and_disagreement_goes_to_review_with_both() -> None:
    text = "Party: Acme Corp. ... Party: Beta LLC."
    first, second = Chunk(0, 2, 0, 18, text[:18]), Chunk(1, 2, 18, len(text), text[18:])
    merged = merge_chunk_candidates(
        _schema("fields"),
        [
            (first, [_candidate("Acme Corp", confidence=0.85), _candidate("Invented Party", confidence=0.99)]),
            (second, [_candidate("Beta LLC", confidence=0.8)]),
        ],
    )
    assert len(merged) == 1
    assert merged[0].value == {"value": "Acme Corp"}, "a grounded quote beats a more confident invented one"
    assert merged[0].more_evidence == ["Beta LLC"]
    assert merged[0].contradiction and "Beta LLC" in merged[0].contradiction


def test_agreeing_chunks_add_evidence_without_a_contradiction() -> None:
    text = "Party: Acme Corp. ... Party: ACME CORP."
    first, second = Chunk(0, 2, 0, 18, text[:18]), Chunk(1, 2, 18, len(text), text[18:])
    merged = merge_chunk_candidates(
        _schema("fields"), [(first, [_candidate("Acme Corp")]), (second, [_candidate("ACME CORP")])]
    )
    assert merged[0].contradiction is None
    assert merged[0].more_evidence == ["ACME CORP"]


def test_front_matter_sets_chunk_size_overlap_and_passes() -> None:
    head = "---\nschema: t\nversion: v1\nheuristic: generic\nfields: [{name: a}]\n"
    schema = parse_schema_text(head + "max_input_chars: 4000\nchunk_overlap_chars: 100\nextraction_passes: 2\n---\n")
    assert (schema.max_input_chars, schema.chunk_overlap_chars, schema.extraction_passes) == (4000, 100, 2)
    default = parse_schema_text(head + "---\n")
    assert (default.max_input_chars, default.chunk_overlap_chars, default.extraction_passes) == (12000, 400, 1)
    with pytest.raises(SchemaError, match="chunk_overlap_chars"):
        parse_schema_text(head + "max_input_chars: 1000\nchunk_overlap_chars: 600\n---\n")
