"""Each invariant query must find a planted violation and nothing in clean data."""

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import ALL_DOCUMENTS, Shard, invariants, open_warehouse, shard_of

SCHEMA = load_schema(DEFAULT_PROMPTS, "pulse@v1")
TEXT = "Supplier delay. Cash is short."

EVIDENCE_COLUMNS = (
    "(evidence_id, item_id, doc_id, tenant_id, schema_version, char_start, char_end, quote, turn_id, match_kind,"
    " strength, evidence_type, match_score, created_at)"
)
# named columns: a column added to the table (they only ever are) leaves these rows as they were
ITEM_COLUMNS = """(item_id, doc_id, tenant_id, schema_version, item_type, value, normalized_value, title, confidence,
    status, extracted_by, extractor_version, model, review_reasons, reasoning_summary, created_at, updated_at,
    updated_by)"""


@pytest.fixture
def con(tmp_path: Path):
    with open_warehouse(tmp_path / "w.duckdb") as con:
        con.execute(
            "INSERT INTO raw_documents VALUES "
            "('d1', 'acme', 'acme/x.txt', 'text', ?, '[]', NULL, NULL, '{}', 30, now(), NULL)",
            [TEXT],
        )
        for item_id, status, conf, reasons in [
            ("i1", "draft", 0.7, "[]"),
            ("i2", "needs_review", 0.65, '["below_threshold: x"]'),
        ]:
            con.execute(
                f"""INSERT INTO extracted_items {ITEM_COLUMNS}
                   VALUES (?, 'd1', 'acme', 'pulse@v1', 'risk', '{{}}', NULL, 't', ?, ?,
                   'heuristic', 'h1', NULL, ?, NULL, now(), now(), NULL)""",
                [item_id, conf, status, reasons],
            )
        con.execute(
            f"""INSERT INTO evidence {EVIDENCE_COLUMNS} VALUES
               ('e1', 'i1', 'd1', 'acme', 'pulse@v1', 0, 15, 'Supplier delay.', NULL,
               'exact', 'strong', 'user_quote', 100, now()),
               ('e2', 'i2', 'd1', 'acme', 'pulse@v1', 16, 30, 'Cash is short.', NULL,
               'exact', 'strong', 'user_quote', 100, now())"""
        )
        con.execute(
            "INSERT INTO scrubbed_documents (doc_id, tenant_id, text, offset_map, pii_counts, pii_total, "
            "scrubber_version, scrubbed_at, policy) VALUES "
            "('d1', 'acme', 'Mail [EMAIL_1] now', '{}', '{}', 1, 'pii-v1', now(), NULL)"
        )
        yield con


def test_clean_data_has_no_violations(con) -> None:
    assert invariants.items_without_evidence(con) == {}
    assert invariants.quote_mismatches(con, ["pulse@v1"]) == {}
    assert invariants.confidence_out_of_band(con, [SCHEMA]) == {}
    assert invariants.documents_over_cap(con, [SCHEMA]) == {}
    assert invariants.review_status_mismatches(con) == {}
    assert invariants.cross_tenant_evidence(con) == {}
    assert invariants.unmasked_pii(con) == []


def test_each_planted_violation_is_found(con) -> None:
    con.execute("DELETE FROM evidence WHERE evidence_id = 'e2'")
    assert invariants.items_without_evidence(con, ["pulse@v1"]) == {"pulse@v1": ["i2"]}
    assert invariants.items_without_evidence(con, ["other@v1"]) == {}
    con.execute("UPDATE evidence SET char_end = 14")
    assert invariants.quote_mismatches(con) == {"pulse@v1": ["e1"]}
    con.execute("UPDATE extracted_items SET confidence = 1.0 WHERE item_id = 'i1'")
    assert invariants.confidence_out_of_band(con, [SCHEMA]) == {"pulse@v1": [("i1", "heuristic", 1.0)]}
    con.execute("UPDATE extracted_items SET status = 'draft' WHERE item_id = 'i2'")
    assert invariants.review_status_mismatches(con) == {"pulse@v1": ["i2"]}
    con.execute("UPDATE evidence SET tenant_id = 'other'")
    assert invariants.cross_tenant_evidence(con) == {"pulse@v1": ["e1"]}
    con.execute("UPDATE scrubbed_documents SET text = 'Mail dana@acme.com now'")
    assert invariants.unmasked_pii(con) == [("d1", "EMAIL")]


def test_a_shard_finds_the_violations_of_its_own_documents_alone(con) -> None:
    # a shard's run checks its shard's rows (`checks.evaluations`): d1's violations are its shard's, no other's
    home = Shard(shard_of("d1", 2), 2)
    other = Shard(1 - home.index, 2)
    con.execute("DELETE FROM evidence WHERE evidence_id = 'e2'")
    con.execute("UPDATE evidence SET char_end = 14, tenant_id = 'other'")
    con.execute("UPDATE extracted_items SET confidence = 1.0, status = 'draft'")
    capped = SCHEMA.model_copy(update={"max_items": 1})
    found = {
        shard: [
            invariants.items_without_evidence(con, ["pulse@v1"], shard),
            invariants.quote_mismatches(con, ["pulse@v1"], shard),
            invariants.confidence_out_of_band(con, [SCHEMA], shard),
            invariants.documents_over_cap(con, [capped], shard),
            invariants.review_status_mismatches(con, ["pulse@v1"], shard),
            invariants.cross_tenant_evidence(con, ["pulse@v1"], shard),
        ]
        for shard in (home, other, ALL_DOCUMENTS)
    }
    assert all(found[home]) and found[home] == found[ALL_DOCUMENTS]
    assert not any(found[other])


def test_cap_violation(con) -> None:
    capped = SCHEMA.model_copy(update={"max_items": 1})
    assert invariants.documents_over_cap(con, [capped]) == {"pulse@v1": [("d1", 2)]}


def test_the_band_check_finds_each_way_out_of_band_and_fetches_only_those(con) -> None:
    """Every item inside its band stays in DuckDB: 40,000 of them cost the check no rows in Python (fetching every
    machine item held 21 MB at 32 k documents), and each item outside a band, by either extractor, is found."""
    con.execute(
        f"""INSERT INTO extracted_items {ITEM_COLUMNS}
           SELECT 'bulk' || n, 'd1', 'acme', 'pulse@v1', 'risk', '{{}}', NULL, 't', 0.6 + (n % 21) / 100, 'draft',
           'heuristic', 'h1', NULL, '[]', NULL, now(), now(), NULL FROM range(40000) r(n)"""
    )
    con.execute(
        f"""INSERT INTO evidence {EVIDENCE_COLUMNS} SELECT 'e-bulk' || n, 'bulk' || n, 'd1', 'acme', 'pulse@v1', 0,
           15, 'Supplier delay.', NULL, 'exact', 'strong', 'user_quote', 100, now() FROM range(40000) r(n)"""
    )
    tracemalloc.start()
    try:
        assert invariants.confidence_out_of_band(con, [SCHEMA]) == {}
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held < 1_000_000, held  # fetching the rows of 40,000 items held 11 MB
    for item_id, by, confidence in [
        ("bulk1", "heuristic", 0.59),
        ("bulk2", "heuristic", 0.81),
        ("bulk3", "model", 0.7),
        ("bulk4", "model", 1.0),
    ]:
        con.execute(
            "UPDATE extracted_items SET extracted_by = ?, confidence = ? WHERE item_id = ?", [by, confidence, item_id]
        )
    con.execute("UPDATE extracted_items SET extracted_by = 'model', confidence = 0.85 WHERE item_id = 'bulk5'")
    con.execute("UPDATE extracted_items SET extracted_by = 'human', confidence = 1.0 WHERE item_id = 'bulk6'")
    assert invariants.confidence_out_of_band(con, [SCHEMA]) == {
        "pulse@v1": [
            ("bulk1", "heuristic", 0.59),
            ("bulk2", "heuristic", 0.81),
            ("bulk3", "model", 0.7),
            ("bulk4", "model", 1.0),
        ]
    }
    assert invariants.confidence_out_of_band(con, []) == {}


def test_null_placeholder_needs_no_evidence_only_while_in_review(con) -> None:
    con.execute(
        f"""INSERT INTO extracted_items {ITEM_COLUMNS}
           VALUES ('i3', 'd1', 'acme', 'pulse@v1', 'risk', '{{"value": null}}', NULL, 't',
           0.0, 'needs_review', 'heuristic', 'h1', NULL, '["no_evidence: x"]', NULL, now(), now(), NULL)"""
    )
    assert invariants.items_without_evidence(con) == {}
    con.execute("UPDATE extracted_items SET status = 'draft' WHERE item_id = 'i3'")
    assert invariants.items_without_evidence(con) == {"pulse@v1": ["i3"]}


def test_quotes_are_checked_across_document_batches(con, monkeypatch) -> None:
    monkeypatch.setattr(invariants, "CHECK_ROWS", 100)  # the document-id check scans the table in three statements
    con.execute("DELETE FROM evidence")
    texts = {f"d{n:03d}": f"Document number {n} says hello." for n in range(invariants.CHECK_BATCH + 5)}
    con.execute("DELETE FROM raw_documents")
    for doc_id, text in texts.items():
        con.execute(
            "INSERT INTO raw_documents (doc_id, tenant_id, source_uri, kind, text, turns, metadata, char_count,"
            " ingested_at) VALUES (?, 'acme', ?, 'text', ?, '[]', '{}', ?, now())",
            [doc_id, doc_id, text, len(text)],
        )
        wrong = doc_id in ("d000", f"d{invariants.CHECK_BATCH + 4:03d}")
        con.execute(
            f"INSERT INTO evidence {EVIDENCE_COLUMNS} VALUES (?, 'i1', ?, 'acme', 'pulse@v1', 0, 8, ?, NULL, 'exact',"
            " 'strong',"
            " 'user_quote', 100, now())",
            [f"e-{doc_id}", doc_id, "Documen!" if wrong else "Document"],
        )
    assert invariants.quote_mismatches(con) == {"pulse@v1": ["e-d000", f"e-d{invariants.CHECK_BATCH + 4:03d}"]}
    assert invariants.ids_not_content_hashes(con) == sorted(texts)


def test_the_pii_check_searches_only_texts_changed_since_their_scrub(tmp_path: Path, monkeypatch) -> None:
    from extraction_assets.lib.models import Document
    from extraction_assets.lib.pii import (
        Detection,
        scrub_document,
        scrubber,  # the check imports the detectors when it runs
    )
    from extraction_assets.lib.warehouse import upsert_scrubbed

    searched: list[str] = []
    real = scrubber.find_unmasked

    def counting(text: str, *args: Any, **kwargs: Any) -> list[Detection]:
        searched.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(scrubber, "find_unmasked", counting)
    with open_warehouse(tmp_path / "w.duckdb") as con:
        docs = [
            Document(doc_id=f"d{i}", tenant_id="acme", source_uri=f"acme/{i}.txt", kind="text", text=f"Mail a{i}@b.com")
            for i in range(3)
        ]
        upsert_scrubbed(con, [scrub_document(d) for d in docs])
        assert invariants.unmasked_pii(con) == [] and searched == []
        con.execute("UPDATE scrubbed_documents SET text = 'Mail x@y.com' WHERE doc_id = 'd1'")
        assert invariants.unmasked_pii(con) == [("d1", "EMAIL")] and searched == ["Mail x@y.com"]


def test_a_text_whose_fingerprint_still_matches_is_not_searched(tmp_path: Path, monkeypatch) -> None:
    """The fingerprint alone clears a row: even one stored without the checked text's sha256 is skipped."""
    from extraction_assets.lib.models import Document
    from extraction_assets.lib.pii import Detection, scrub_document, scrubber
    from extraction_assets.lib.warehouse import upsert_scrubbed

    searched: list[str] = []
    real = scrubber.find_unmasked

    def counting(text: str, *args: Any, **kwargs: Any) -> list[Detection]:
        searched.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(scrubber, "find_unmasked", counting)
    with open_warehouse(tmp_path / "w.duckdb") as con:
        doc = Document(doc_id="d1", tenant_id="acme", source_uri="acme/1.txt", kind="text", text="Mail a@b.com now")
        upsert_scrubbed(con, [scrub_document(doc)])
        con.execute("UPDATE scrubbed_documents SET checked_sha256 = NULL")
        assert invariants.unmasked_pii(con) == [] and searched == []
        con.execute("UPDATE scrubbed_documents SET text = 'Mail x@y.com now'")  # an old row corrupted later
        assert invariants.unmasked_pii(con) == [("d1", "EMAIL")] and searched == ["Mail x@y.com now"]


@pytest.fixture
def stored(tmp_path: Path, monkeypatch):
    """Three read documents stored by the writer, and the ids the id check recomputes from then on."""
    from extraction_assets.lib.models import Document
    from extraction_assets.lib.warehouse import insert_documents

    docs = []
    for i, metadata in enumerate([{}, {"author": "Dana", "date": "2024-05-01"}, {"session_id": "s1"}]):
        text = f"Note {i}: supplier delay."
        doc_id = Document.make_id("acme", "text", text, metadata)
        docs.append(
            Document(
                doc_id=doc_id, tenant_id="acme", source_uri=f"acme/{i}.txt", kind="text", text=text, metadata=metadata
            )
        )
    recomputed: list[str] = []
    real = invariants.is_content_hash

    def recomputing(doc_id: str, *content: Any) -> bool:
        recomputed.append(doc_id)
        return real(doc_id, *content)

    monkeypatch.setattr(invariants, "is_content_hash", recomputing)
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, docs)
        yield con, recomputed


def test_the_id_check_skips_documents_unchanged_since_they_were_stored(stored) -> None:
    con, recomputed = stored
    assert invariants.ids_not_content_hashes(con) == [] and recomputed == []


@pytest.mark.parametrize(
    "corruption",
    [
        "UPDATE raw_documents SET text = text || '!' WHERE source_uri = 'acme/1.txt'",
        "UPDATE raw_documents SET metadata = '{\"author\": \"Eve\"}' WHERE source_uri = 'acme/1.txt'",
        "UPDATE raw_documents SET tenant_id = 'other' WHERE source_uri = 'acme/1.txt'",
        "UPDATE raw_documents SET kind = 'email' WHERE source_uri = 'acme/1.txt'",
        "UPDATE raw_documents SET doc_id = 'forged' WHERE source_uri = 'acme/1.txt'",
    ],
)
def test_an_old_document_corrupted_after_it_was_stored_is_found(stored, corruption: str) -> None:
    con, recomputed = stored
    con.execute(corruption)
    (wrong,) = con.execute("SELECT doc_id FROM raw_documents WHERE source_uri = 'acme/1.txt'").fetchone()
    assert invariants.ids_not_content_hashes(con) == [wrong] and recomputed == [wrong]


def test_a_document_stored_under_an_id_that_is_not_its_hash_gets_no_fingerprint(tmp_path: Path) -> None:
    from extraction_assets.lib.models import Document
    from extraction_assets.lib.warehouse import insert_documents

    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(
            con, [Document(doc_id="made-up", tenant_id="acme", source_uri="acme/x.txt", kind="text", text="Hello")]
        )
        assert con.execute("SELECT checked_hash FROM raw_documents").fetchall() == [(None,)]
        assert invariants.ids_not_content_hashes(con) == ["made-up"]


def test_a_row_another_writer_stored_under_the_same_id_is_not_fingerprinted_by_this_one(tmp_path: Path) -> None:
    """The merge leaves a stored key alone: what this writer verified is not what is stored, so it stamps nothing."""
    from extraction_assets.lib.models import Document
    from extraction_assets.lib.warehouse import insert_documents

    doc = Document(
        doc_id=Document.make_id("acme", "text", "Hello"),
        tenant_id="acme",
        source_uri="acme/x.txt",
        kind="text",
        text="Hello",
    )
    with open_warehouse(tmp_path / "w.duckdb") as con:
        con.execute(
            "INSERT INTO raw_documents (doc_id, tenant_id, source_uri, kind, text, turns, metadata, char_count,"
            " ingested_at) VALUES (?, 'acme', 'acme/x.txt', 'text', 'Hello, changed', '[]', '{}', 14, now())",
            [doc.doc_id],
        )
        assert insert_documents(con, [doc]) == 0
        assert con.execute("SELECT checked_hash FROM raw_documents").fetchall() == [(None,)]
        assert invariants.ids_not_content_hashes(con) == [doc.doc_id]


def test_quotes_after_emoji_cjk_and_combining_marks_are_compared_by_code_point(con) -> None:
    text = "Nhắc 👍🏽 lại: 会议 e\u0301tait prévu. Cash is short."
    start = text.index("Cash")
    con.execute("DELETE FROM evidence")
    con.execute("UPDATE raw_documents SET text = ? WHERE doc_id = 'd1'", [text])
    for evidence_id, lo, quote in [("right", start, "Cash is short."), ("shifted", start - 1, " Cash is short")]:
        con.execute(
            f"INSERT INTO evidence {EVIDENCE_COLUMNS} VALUES (?, 'i1', 'd1', 'acme', 'pulse@v1', ?, ?, ?, NULL,"
            " 'exact', 'strong', 'user_quote', 100, now())",
            [evidence_id, lo, lo + len(quote) + (1 if evidence_id == "shifted" else 0), quote],
        )
    assert invariants.quote_mismatches(con) == {"pulse@v1": ["shifted"]}
