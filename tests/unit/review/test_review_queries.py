"""Reviewer reads: the queue's filters and order, evidence in context, tenant scope; the re-run preview."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.review import corrections, highlight_segments, item_detail, list_queue, preview_rerun
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from tests.listed_statements import ListedStatements
from tests.review_seed import HOSTILE, SCHEMA, TEXTS, seed


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "w.duckdb"
    return path, seed(path)


def test_highlight_segments_cover_the_text_once() -> None:
    text = "0123456789"
    segments = highlight_segments(text, [(6, 8), (2, 4), (3, 5)])
    assert "".join(s.text for s in segments) == text
    assert [(s.text, s.evidence) for s in segments] == [
        ("01", None),
        ("23", 1),
        ("4", 2),
        ("5", None),
        ("67", 0),
        ("89", None),
    ]


def test_queue_is_tenant_scoped_filtered_and_most_urgent_first(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        acme = list_queue(con, "acme")
        globex = list_queue(con, "globex")
        risks = list_queue(con, "acme", item_type="risk")
        by_rule = list_queue(con, "acme", reason="below_threshold")
        other_rule = list_queue(con, "acme", reason="contradiction")
        everything = list_queue(con, "acme", status="any")
        other_version = list_queue(con, "acme", schema_version="pulse@v9")
    assert [r.item_id for r in acme] == [ids["acme:decision"], ids["acme:risk"]]  # lower confidence first
    assert acme[0].priority > acme[1].priority
    assert [r.item_id for r in globex] == [ids["globex:commitment"]]
    assert [r.item_type for r in risks] == ["risk"]
    assert len(by_rule) == 2 and other_rule == []
    assert {r.status for r in everything} == {"draft", "needs_review"} and len(everything) == 3
    assert other_version == []


def test_the_queue_query_reads_only_the_rows_shown(warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    """Filter and limit are the query's: a tenant's whole queue is never read (nor its documents loaded) to show a
    page of it."""
    path, ids = warehouse
    read: list[int] = []

    def counted(con, sql, params=()):
        rows = rows_as_dicts(con, sql, params)
        read.append(len(rows))
        return rows

    monkeypatch.setattr("extraction_assets.lib.review.queries.rows_as_dicts", counted)
    with open_warehouse(path) as con:
        first = list_queue(con, "acme", limit=1)
        first_by_rule = list_queue(con, "acme", reason="below_threshold", limit=1)
        none = list_queue(con, "acme", limit=0)
    assert [r.item_id for r in first] == [ids["acme:decision"]]
    assert [r.item_id for r in first_by_rule] == [ids["acme:decision"]]
    assert none == []
    assert read == [1, 1, 0]


def test_item_detail_shows_evidence_in_context(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        detail = item_detail(con, "acme", ids["acme:risk"], context_chars=20)
    text = TEXTS["acme"]
    [evidence] = detail.evidence
    assert text[evidence.char_start : evidence.char_end] == evidence.quote
    assert evidence.before == text[evidence.char_start - 20 : evidence.char_start]
    assert evidence.after.startswith(" " + HOSTILE[:10])
    assert "".join(s.text for s in detail.segments) == text
    assert [s.text for s in detail.segments if s.evidence is not None] == [evidence.quote]
    assert detail.source_uri == "acme/notes/week.txt"


def test_rerun_preview_counts_what_would_be_overwritten_and_what_needs_confirmation(warehouse) -> None:
    path, ids = warehouse
    with open_warehouse(path) as con:
        before = preview_rerun(con, SCHEMA, "acme")
        corrections.accept(con, "acme", ids["acme:risk"], "ana")
        change = corrections.Change(value={}, replace=True, status="draft")  # a person's value, left a draft
        corrections.apply_change(con, "acme", ids["acme:commitment"], change, "ben", "correct")
        after = preview_rerun(con, SCHEMA, "acme")
        everyone = preview_rerun(con, SCHEMA)
        other_version = preview_rerun(con, "pulse@v2", "acme")
        said: list[str] = []
        no_docs = preview_rerun(ListedStatements(con, said), SCHEMA, "acme", doc_ids=[])  # type: ignore[arg-type]
        assert said == [], "no document: nothing to ask"
    assert (before.would_overwrite, before.need_confirmation) == (3, 0)
    assert (after.would_overwrite, after.need_confirmation) == (1, 2)
    assert after.protected_by_status == {"accepted (human)": 1, "draft (human)": 1}
    assert set(after.protected_items) == {ids["acme:risk"], ids["acme:commitment"]}
    assert "would overwrite 1 draft/needs_review items; 2 need confirmation" in after.message
    assert (everyone.would_overwrite, everyone.need_confirmation, everyone.documents) == (2, 2, 2)
    assert (other_version.would_overwrite, other_version.need_confirmation) == (0, 0)
    assert (no_docs.would_overwrite, no_docs.need_confirmation, no_docs.documents) == (0, 0, 0)
    assert no_docs.protected_items == [] and no_docs.protected_by_status == {}


def test_bidirectional_controls_in_stored_strings_are_shown_marked_never_raw(warehouse) -> None:
    """A right-to-left override in a model's title would reorder what a reviewer reads ("pay 100" as "001 yap")."""
    path, _ = warehouse
    with open_warehouse(path) as con:
        [row] = list_queue(con, "acme", limit=1)
        con.execute(
            "UPDATE extracted_items SET title = ?, value = ? WHERE item_id = ?",
            ["pay \u202e001 USD\u202c now", '{"owner_name": "Dana\u2067x\u2069"}', row.item_id],
        )
        [again] = [r for r in list_queue(con, "acme", status="any", limit=500) if r.item_id == row.item_id]
        detail = item_detail(con, "acme", row.item_id)
    assert again.title == "pay ⟦U+202E⟧001 USD⟦U+202C⟧ now"
    assert detail.item["title"] == again.title and detail.item["value"] == {"owner_name": "Dana⟦U+2067⟧x⟦U+2069⟧"}
    assert not any(c in again.title + str(detail.model_dump()) for c in "\u202e\u202c\u2067\u2069")
