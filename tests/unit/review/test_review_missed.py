"""Items the extractor missed, added by a reviewer from a span of the scrubbed text: raw offsets, audit, ownership."""

from __future__ import annotations

from pathlib import Path

import pytest

from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.review import check_chain, history
from extraction_assets.lib.review.corrections import InvalidCorrection, ItemNotFound
from extraction_assets.lib.review.missed import add_missed_item
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import load_scrubbed, open_warehouse, rows_as_dicts
from extraction_assets.lib.warehouse.invariants import quote_mismatches
from tests.review_seed import seed_documents

TEXT = "Ops note.\nWrite to linh@example.com: we will ship the replacement parts by Friday.\nAll else is fine.\n"
DOCUMENTS = {"n1": ("acme", "acme/notes/n1.txt", TEXT), "g1": ("globex", "globex/notes/g1.txt", TEXT)}
ITEMS = [("n1", "risk", "All else is fine.", 0.6, "needs_review", {"severity": "low"})]


@pytest.fixture
def warehouse(tmp_path: Path) -> tuple[Path, str, str]:
    path = tmp_path / "w.duckdb"
    seed_documents(path, DOCUMENTS, ITEMS)
    with open_warehouse(path) as con:
        docs = dict(con.execute("SELECT tenant_id, doc_id FROM raw_documents").fetchall())
    return path, docs["acme"], docs["globex"]


def test_a_selected_span_of_the_scrubbed_text_becomes_an_audited_item_with_raw_offsets(warehouse) -> None:
    path, doc_id, _ = warehouse
    pulse = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    with open_warehouse(path) as con:
        scrubbed = load_scrubbed(con, [doc_id])[doc_id].text
        assert "linh@example.com" not in scrubbed
        start = scrubbed.index("Write to")
        end = scrubbed.index("Friday.") + len("Friday.")
        added = add_missed_item(
            con, "acme", doc_id, pulse, "commitment", {"due_date": "2026-12-04"}, "linh", span=(start, end)
        )
        [item] = rows_as_dicts(con, "SELECT * FROM extracted_items WHERE item_id = ?", [added.item_id])
        [evidence] = rows_as_dicts(con, "SELECT * FROM evidence WHERE item_id = ?", [added.item_id])
        [entry] = history(con, "acme", added.item_id)
        report = check_chain(con)
        mismatches = quote_mismatches(con)
    assert evidence["quote"] == TEXT[evidence["char_start"] : evidence["char_end"]]
    assert evidence["quote"] == "Write to linh@example.com: we will ship the replacement parts by Friday."
    assert "linh@example.com" not in item["title"], "the title is what the reviewer read, scrubbed"
    assert (item["status"], item["extracted_by"], item["added_by"], item["updated_by"]) == (
        "accepted",
        "human",
        "linh",
        "linh",
    )
    assert (entry.action, entry.actor, entry.before_snapshot) == ("add", "linh", {})
    assert report.intact and not mismatches


def test_a_typed_quote_is_located_and_a_wrong_one_or_another_tenants_document_refused(warehouse) -> None:
    path, doc_id, foreign = warehouse
    pulse = load_schema(DEFAULT_PROMPTS, "pulse@v1")
    with open_warehouse(path) as con:
        added = add_missed_item(
            con, "acme", doc_id, pulse, "commitment", {}, "ana", quote="we will ship the replacement parts by Friday"
        )
        [evidence] = rows_as_dicts(con, "SELECT char_start, quote FROM evidence WHERE item_id = ?", [added.item_id])
        with pytest.raises(InvalidCorrection, match="is not in the document"):
            add_missed_item(con, "acme", doc_id, pulse, "risk", {}, "ana", quote="the warehouse burned down")
        with pytest.raises(InvalidCorrection, match="already has that commitment"):
            add_missed_item(
                con,
                "acme",
                doc_id,
                pulse,
                "commitment",
                {},
                "ana",
                quote="We will ship the replacement parts by Friday",
            )
        with pytest.raises(ItemNotFound):
            add_missed_item(con, "acme", foreign, pulse, "risk", {}, "ana", quote="All else is fine.")
        with pytest.raises(InvalidCorrection, match="is not one of"):
            add_missed_item(con, "acme", doc_id, pulse, "risk", {"severity": "doom"}, "ana", quote="All else is fine")
    assert evidence == {"char_start": TEXT.index("we will"), "quote": "we will ship the replacement parts by Friday"}
