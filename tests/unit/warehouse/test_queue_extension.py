"""A queue that only new items left behind is extended by their groups' rows: the same table a rebuild gives, and the
same fingerprint; anything else that moved makes it rebuilt instead."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.models import Document, ExtractionOutcome, ItemStatus
from extraction_assets.lib.stages import refresh_review_queues
from extraction_assets.lib.warehouse import (
    bring_queues_in_step,
    insert_documents,
    open_warehouse,
    queue_in_step,
    rebuild_review_queue,
    write_extraction_batch,
)
from extraction_assets.lib.warehouse.review_queue import QueueInputs, queue_currency, queue_inputs
from tests.listed_statements import ListedStatements
from tests.records import processed, quoted_item

VERSION, RIVAL = "pulse@v1", "pulse@v2"


def remembered_queue_inputs(con: duckdb.DuckDBPyConnection, version: str) -> QueueInputs | None:
    """The fingerprint recorded for the version's queue."""
    return queue_currency(con, [version])[version][1]


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
        assert bring_queues_in_step(con, [VERSION])[VERSION] == "in step"
        _extract(con, rng, _documents(rng, 24, 6), VERSION)  # a pass with new documents
        assert bring_queues_in_step(con, [VERSION])[VERSION] == "extended"
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


def _copy(template: Path, tmp_path: Path) -> Path:
    """A warehouse of the test's own: a copy of a module's `template`, made once for the cases that start alike."""
    shutil.copyfile(template, tmp_path / "w.duckdb")
    return tmp_path / "w.duckdb"


@pytest.fixture(scope="module")
def new_items_behind(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A queue built, then a pass with new documents (each case of the test below makes one change on a copy)."""
    rng = random.Random(1)
    warehouse = tmp_path_factory.mktemp("new-items-behind") / "w.duckdb"
    with open_warehouse(warehouse) as con:
        _extract(con, rng, _documents(rng, 0, 24), VERSION)
        rebuild_review_queue(con, VERSION)
        _extract(con, rng, _documents(rng, 24, 6), VERSION)
    return warehouse


@pytest.mark.parametrize("change", CHANGES)
def test_a_queue_is_rebuilt_where_more_than_new_items_moved(
    new_items_behind: Path, tmp_path: Path, change: str
) -> None:
    with open_warehouse(_copy(new_items_behind, tmp_path)) as con:
        con.execute(CHANGES[change])
        before = con.execute("SELECT * FROM review_queue ORDER BY item_id").fetchall()
        assert bring_queues_in_step(con, [VERSION])[VERSION] == "out of step"
        assert con.execute("SELECT * FROM review_queue ORDER BY item_id").fetchall() == before, "nothing written"
        rebuild_review_queue(con, VERSION)
        assert queue_in_step(con, VERSION)


def _two_versions(con: duckdb.DuckDBPyConnection, rng: random.Random) -> None:
    """A version and its rival (each the other's), with their queues built and their fingerprints recorded."""
    earlier = _documents(rng, 0, 24)
    _extract(con, rng, earlier, VERSION)
    _extract(con, rng, earlier[::2], RIVAL)
    for version, role, rival in ((VERSION, "current", RIVAL), (RIVAL, "challenger", VERSION)):
        con.execute(f"INSERT INTO schema_version_roles VALUES ('{version}', 'pulse', '{role}', '[\"{rival}\"]', now())")
        rebuild_review_queue(con, version)


def test_one_statement_gives_each_version_its_own_fingerprint(tmp_path: Path) -> None:
    with open_warehouse(tmp_path / "w.duckdb") as con:
        _two_versions(con, random.Random(2))
        together = queue_currency(con, [VERSION, RIVAL, "none@v1"])
        alone = {v: queue_currency(con, [v])[v] for v in (VERSION, RIVAL, "none@v1")}
        recorded = {v: remembered_queue_inputs(con, v) for v in (VERSION, RIVAL)}
    assert together == alone
    assert [together[v][0] for v in (VERSION, RIVAL)] == [recorded[v].fingerprint for v in (VERSION, RIVAL)]  # type: ignore[union-attr]
    assert together["none@v1"][0].split(":")[1:] == ["0/0"] * 7 and together["none@v1"][1] is None
    assert len({together[v][0] for v in together}) == 3


RIVAL_CHANGES = {  # what the version's queue reads of its rival: moving it moves the version's disagreements
    "a rival item's title": f"UPDATE extracted_items SET title = 'Other' WHERE item_id = (SELECT min(item_id) "
    f"FROM extracted_items WHERE schema_version = '{RIVAL}')",
    "the version's role": f"UPDATE schema_version_roles SET rivals = '[]', decided_at = now() "
    f"WHERE schema_version = '{VERSION}'",
    "a rival document's extraction": "UPDATE extraction_status SET status = 'failed' WHERE doc_id = (SELECT "
    f"min(doc_id) FROM extraction_status WHERE schema_version = '{RIVAL}') AND schema_version = '{RIVAL}'",
}


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two versions with their queues in step (each case of the test below makes one change on a copy)."""
    warehouse = tmp_path_factory.mktemp("two-versions") / "w.duckdb"
    with open_warehouse(warehouse) as con:
        _two_versions(con, random.Random(5))
    return warehouse


@pytest.mark.parametrize("change", [None, *{**CHANGES, **RIVAL_CHANGES}])
def test_refreshing_every_version_at_once_rebuilds_what_moved_and_keeps_the_rest(
    two_versions: Path, tmp_path: Path, change: str | None
) -> None:
    """A version whose recorded fingerprint is today's is not looked at again (nothing written); any change made
    behind the queues' back (no requeue) moves a fingerprint, and that queue is checked again (derived, or rebuilt,
    and its fingerprint recorded anew): after the refresh every queue is what a rebuild gives."""
    with open_warehouse(_copy(two_versions, tmp_path)) as con:
        before = {v: remembered_queue_inputs(con, v) for v in (VERSION, RIVAL)}
        if change is not None:
            con.execute({**CHANGES, **RIVAL_CHANGES}[change])
        reports = refresh_review_queues(con, [VERSION, RIVAL])
        after = {v: remembered_queue_inputs(con, v) for v in (VERSION, RIVAL)}
        refreshed = con.execute(ROWS).fetchall()
        for version in (VERSION, RIVAL):
            rebuild_review_queue(con, version)
        rebuilt = con.execute(ROWS).fetchall()
    assert refreshed == rebuilt
    if change is None:
        assert after == before and not any(r.rebuilt for r in reports.values()), "queues in step: nothing written"
    else:
        assert after != before, f"{change}: seen by a fingerprint"


@pytest.mark.parametrize("seed", range(4))
def test_every_version_new_items_left_behind_is_extended_in_one_statement(tmp_path: Path, seed: int) -> None:
    """Two versions' queues that only new items left behind are extended together: one statement derives both
    versions' rows (its plan is most of its cost), each queue what its rebuild gives, each with its own fingerprint;
    the proofs read every version's new items' groups with their parts, in one statement."""
    rng = random.Random(seed)
    with open_warehouse(tmp_path / "w.duckdb") as con:
        earlier = _documents(rng, 0, 24)
        for version in (VERSION, RIVAL):
            _extract(con, rng, earlier, version)
            rebuild_review_queue(con, version)
        later = _documents(rng, 24, 6)
        for version in (VERSION, RIVAL):
            _extract(con, rng, later, version)
        said: list[str] = []
        steps = bring_queues_in_step(ListedStatements(con, said), [VERSION, RIVAL])  # type: ignore[arg-type]
        assert steps == {VERSION: "extended", RIVAL: "extended"}
        assert sum(sql.lstrip().startswith("INSERT INTO review_queue ") for sql in said) == 1, said
        # the fingerprints of all (one statement), every version's new items' parts and groups (one), the rows
        reading = [sql for sql in said if "extracted_items" in sql]
        assert len(reading) == 3, reading
        assert sum("updated_at > a.since" in sql for sql in reading) == 1, reading
        extended = con.execute(ROWS).fetchall()
        for version in (VERSION, RIVAL):
            recorded = remembered_queue_inputs(con, version)
            assert recorded is not None and recorded.fingerprint == queue_inputs(con, version)
            rebuild_review_queue(con, version)
        assert extended == con.execute(ROWS).fetchall()
        assert {row[3] for row in extended} == {VERSION, RIVAL}
