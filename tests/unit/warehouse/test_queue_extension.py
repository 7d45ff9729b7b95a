"""A queue that only new items left behind is extended by their groups' rows: the same table a rebuild gives, and the
same fingerprint; anything else that moved makes it rebuilt instead."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.models import Document, ExtractionOutcome, ItemStatus
from extraction_assets.lib.warehouse import (
    bring_queue_in_step,
    insert_documents,
    open_warehouse,
    queue_in_step,
    rebuild_review_queue,
    write_extraction_batch,
)
from extraction_assets.lib.warehouse.review_queue import queue_inputs, remembered_queue_inputs
from tests.records import processed, quoted_item

VERSION, RIVAL = "pulse@v1", "pulse@v2"
TITLES = ("Supplier delay", "supplier  DELAY", "Cash is short", "Hire two temps", "Ship by Friday")
TENANTS = ("acme", "globex")
STATUSES: tuple[ItemStatus, ...] = ("draft", "needs_review", "needs_review", "accepted")
# every column of a queue row but the time it was queued
ROWS = """SELECT item_id, tenant_id, doc_id, schema_version, item_type, title, confidence, reasons, evidence_quote,
                 source_uri, priority, group_id, group_size, probability_correct
          FROM review_queue ORDER BY schema_version, item_id"""


def _documents(rng: random.Random, first: int, count: int) -> list[Document]:
    documents = []
    for n in range(first, first + count):
        tenant = rng.choice(TENANTS)
        text = ". ".join(rng.sample(TITLES, 3)) + f". Note {n}."
        documents.append(
            Document(
                doc_id=Document.make_id(tenant, "text", text),
                tenant_id=tenant,
                source_uri=f"{tenant}/n{n}.txt",
                kind="text",
                text=text,
            )
        )
    return documents


def _outcome(rng: random.Random, doc: Document, version: str) -> ExtractionOutcome:
    """Items of the titles the text holds, each a draft or one to review, some typed alike to form groups."""
    items = []
    for title in TITLES:
        if title not in doc.text or rng.random() < 0.3:
            continue
        items.append(
            quoted_item(
                doc,
                f"{version}:{doc.doc_id[:12]}:{doc.text.index(title)}",
                title,
                version=version,
                status=rng.choice(STATUSES),
                item_type=rng.choice(("risk", "risk", "decision")),
                confidence=round(rng.uniform(0.5, 0.8), 2),
                probability_correct=rng.choice((None, round(rng.uniform(0.2, 0.9), 2))),
            )
        )
    return processed(doc, version, items)


def _extract(con: duckdb.DuckDBPyConnection, rng: random.Random, documents: list[Document], version: str) -> None:
    insert_documents(con, documents)
    write_extraction_batch(con, version, [_outcome(rng, doc, version) for doc in documents])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("rivals", [False, True])
def test_new_items_extend_the_queue_to_what_a_rebuild_gives(tmp_path: Path, seed: int, rivals: bool) -> None:
    rng = random.Random(seed)
    with open_warehouse(tmp_path / "w.duckdb") as con:
        earlier = _documents(rng, 0, 24)
        _extract(con, rng, earlier, VERSION)
        if rivals:  # a rival version read some documents: the items it disagrees with are queued too
            _extract(con, rng, earlier[::2], RIVAL)
            con.execute(
                f"INSERT INTO schema_version_roles VALUES ('{VERSION}', 'pulse', 'current', '[\"{RIVAL}\"]', now())"
            )
        rebuild_review_queue(con, VERSION)
        assert bring_queue_in_step(con, VERSION) == "in step"
        _extract(con, rng, _documents(rng, 24, 6), VERSION)  # a pass with new documents
        assert bring_queue_in_step(con, VERSION) == "extended"
        extended = con.execute(ROWS).fetchall()
        recorded = remembered_queue_inputs(con, VERSION)
        assert recorded is not None and recorded.fingerprint == queue_inputs(con, VERSION), "the same fingerprint"
        assert queue_in_step(con, VERSION)
        rebuild_review_queue(con, VERSION)
        assert extended == con.execute(ROWS).fetchall()
        assert any(row[12] > 1 for row in extended), "groups that new items joined are in the case"


EARLIER = "updated_at < (SELECT max(updated_at) FROM extracted_items)"  # an item of the first pass
CHANGES = {  # what else a pass may have moved besides adding items: each one means a rebuild
    "an earlier item's status": "UPDATE extracted_items SET status = 'accepted' WHERE item_id = (SELECT min(item_id) "
    f"FROM extracted_items WHERE status = 'needs_review' AND {EARLIER})",
    "an earlier item removed": f"DELETE FROM extracted_items WHERE item_id = (SELECT min(item_id) FROM extracted_items "
    f"WHERE {EARLIER})",
    "an evidence quote": "UPDATE evidence SET quote = 'x' WHERE item_id = (SELECT min(item_id) FROM extracted_items)",
    "a document's source": "UPDATE raw_documents SET source_uri = 'moved/x.txt' WHERE doc_id = (SELECT min(doc_id) "
    "FROM extracted_items)",
    "a queued row": "DELETE FROM review_queue WHERE item_id = (SELECT min(item_id) FROM review_queue)",
    "the version's role": f"INSERT INTO schema_version_roles VALUES ('{VERSION}', 'pulse', 'current', '[]', now())",
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_queue_is_rebuilt_where_more_than_new_items_moved(tmp_path: Path, change: str) -> None:
    rng = random.Random(1)
    with open_warehouse(tmp_path / "w.duckdb") as con:
        _extract(con, rng, _documents(rng, 0, 24), VERSION)
        rebuild_review_queue(con, VERSION)
        _extract(con, rng, _documents(rng, 24, 6), VERSION)
        con.execute(CHANGES[change])
        before = con.execute("SELECT * FROM review_queue ORDER BY item_id").fetchall()
        assert bring_queue_in_step(con, VERSION) == "out of step"
        assert con.execute("SELECT * FROM review_queue ORDER BY item_id").fetchall() == before, "nothing written"
        rebuild_review_queue(con, VERSION)
        assert queue_in_step(con, VERSION)
