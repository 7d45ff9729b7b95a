import json
import multiprocessing
from pathlib import Path

import duckdb
import pytest

from extraction_assets.lib.models import (
    DeadLetter,
    Document,
    ExtractionOutcome,
    ExtractionStatus,
    ItemRecord,
    ItemStatus,
)
from extraction_assets.lib.warehouse import (
    TABLES,
    batched,
    documents_to_route,
    documents_to_scrub,
    insert_documents,
    iter_batches,
    open_warehouse,
    pending_extractions,
    queue_in_step,
    rebuild_review_queue,
    record_dead_letters,
    store_ingest_batch,
    table_counts,
    transaction,
    write_extraction_batch,
)
from tests.listed_statements import ListedStatements
from tests.one_row import one_row
from tests.records import quoted_item


def _doc(text: str, tenant: str = "acme") -> Document:
    return Document(
        doc_id=Document.make_id(tenant, "text", text),
        tenant_id=tenant,
        source_uri=f"{tenant}/x.txt",
        kind="text",
        text=text,
    )


def _item(doc: Document, item_id: str, quote: str, status: ItemStatus = "draft") -> ItemRecord:
    return quoted_item(doc, item_id, quote, status=status)


def _outcome(doc: Document, items: list[ItemRecord], status: ExtractionStatus = "processed") -> ExtractionOutcome:
    return ExtractionOutcome(
        doc_id=doc.doc_id,
        tenant_id=doc.tenant_id,
        schema_version="pulse@v1",
        status=status,
        extractor_version="h1",
        scrubber_version="pii-v1",
        items=items,
        error="boom" if status == "failed" else None,
    )


def test_schema_creates_every_table(tmp_path: Path) -> None:
    with open_warehouse(tmp_path / "w.duckdb") as con:
        assert set(table_counts(con)) == set(TABLES)
        assert all(n == 0 for n in table_counts(con).values())


def test_documents_insert_once(tmp_path: Path) -> None:
    docs = [_doc("one"), _doc("two"), _doc("one", tenant="other")]
    with open_warehouse(tmp_path / "w.duckdb") as con:
        assert insert_documents(con, docs) == 3
        assert insert_documents(con, docs) == 0
        assert one_row(con.execute("SELECT count(DISTINCT tenant_id) FROM raw_documents"))[0] == 2


def test_dead_letters_are_not_duplicated(tmp_path: Path) -> None:
    letter = DeadLetter(stage="ingest", tenant_id="acme", source_uri="acme/bad.json", reason="malformed JSON")
    other = letter.model_copy(update={"reason": "empty file"})
    with open_warehouse(tmp_path / "w.duckdb") as con:
        assert record_dead_letters(con, [letter, other]) == 2
        assert record_dead_letters(con, [letter]) == 0


def test_an_ingest_batch_stores_its_documents_letters_and_stamps_together(tmp_path: Path) -> None:
    from extraction_assets.lib.warehouse import FileStamp

    doc = _doc("one")
    letter = DeadLetter(stage="ingest", tenant_id="acme", source_uri="acme/bad.json", reason="malformed JSON")
    tables = ("raw_documents", "dead_letters", "inbox_files")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        with pytest.raises(duckdb.Error):  # the stamp cannot be written: nothing of the batch is
            store_ingest_batch(con, [doc], [letter], {"acme/x.txt": FileStamp("not a size", 1)})  # type: ignore[arg-type]
        assert [one_row(con.execute(f"SELECT count(*) FROM {t}"))[0] for t in tables] == [0, 0, 0]
        assert store_ingest_batch(con, [doc], [letter], {"acme/x.txt": FileStamp(3, 1)}) == (1, 1)
        assert [one_row(con.execute(f"SELECT count(*) FROM {t}"))[0] for t in tables] == [1, 1, 1]
        assert store_ingest_batch(con, [doc], [letter], {}) == (0, 0)


def test_no_dead_letters_ask_the_warehouse_nothing() -> None:
    con = duckdb.connect()
    con.close()  # any statement would fail
    assert record_dead_letters(con, iter([])) == 0


def test_rewrite_replaces_machine_items_keeps_human_ones_and_removes_stale(tmp_path: Path) -> None:
    doc = _doc("Supplier delay. Cash is short. Penalty looming.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        write_extraction_batch(
            con,
            "pulse@v1",
            [
                _outcome(
                    doc,
                    [
                        _item(doc, "a", "Supplier delay."),
                        _item(doc, "b", "Cash is short."),
                        _item(doc, "c", "Penalty looming."),
                    ],
                )
            ],
        )
        con.execute("UPDATE extracted_items SET status = 'accepted', title = 'human title' WHERE item_id = 'b'")
        written = write_extraction_batch(
            con, "pulse@v1", [_outcome(doc, [_item(doc, "a", "Supplier delay."), _item(doc, "b", "Cash is short.")])]
        )
        rows = dict(con.execute("SELECT item_id, title FROM extracted_items").fetchall())
        evidence = sorted(r[0] for r in con.execute("SELECT item_id FROM evidence").fetchall())
        attempts = one_row(con.execute("SELECT attempts FROM extraction_status"))[0]
    assert rows == {"a": "Supplier delay.", "b": "human title"}  # c was stale, b is a person's
    assert evidence == ["a", "b"]
    assert written == {"items": 1, "evidence": 1, "protected_kept": 1, "stale_removed": 1, "routed": 0}
    assert attempts == 2


def test_failed_outcome_keeps_previous_items_and_stays_pending(tmp_path: Path) -> None:
    doc = _doc("Supplier delay.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        con.execute(
            "INSERT INTO scrubbed_documents (doc_id, tenant_id, text, offset_map, pii_counts, pii_total, "
            "scrubber_version, scrubbed_at, policy) "
            "VALUES (?, 'acme', ?, '{}', '{}', 0, 'pii-v1', now(), NULL)",
            [doc.doc_id, doc.text],
        )
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, [_item(doc, "a", "Supplier delay.")])])
        assert pending_extractions(con, "pulse@v1", ["text"], "h1") == []
        assert pending_extractions(con, "pulse@v1", ["text"], "h2") == [doc.doc_id]
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, [], status="failed")])
        assert one_row(con.execute("SELECT count(*) FROM extracted_items"))[0] == 1
        assert pending_extractions(con, "pulse@v1", ["text"], "h1") == [doc.doc_id]
        assert pending_extractions(con, "pulse@v1", ["email"], "h1") == []


def test_review_queue_is_derived_from_needs_review_items(tmp_path: Path) -> None:
    doc = _doc("Supplier delay. Cash is short.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        items = [_item(doc, "a", "Supplier delay.", "needs_review"), _item(doc, "b", "Cash is short.")]
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, items)])
        assert rebuild_review_queue(con, "pulse@v1") == 1
        assert rebuild_review_queue(con, "pulse@v1") == 1
        row = con.execute("SELECT item_id, evidence_quote, source_uri FROM review_queue").fetchone()
    assert row == ("a", "Supplier delay.", "acme/x.txt")


def test_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    with open_warehouse(tmp_path / "w.duckdb") as con:
        try:
            with transaction(con):
                insert_documents_raw = (
                    "INSERT INTO dead_letters VALUES ('x', 's', 't', 'u', NULL, NULL, 'r', '{}', now())"
                )
                con.execute(insert_documents_raw)
                raise RuntimeError("crash mid-batch")
        except RuntimeError:
            pass
        assert one_row(con.execute("SELECT count(*) FROM dead_letters"))[0] == 0


def test_batched() -> None:
    assert batched(["a", "b", "c"], 2) == [["a", "b"], ["c"]]
    assert batched([], 5) == []


def test_iter_batches_takes_a_stream_one_batch_at_a_time() -> None:
    taken: list[int] = []

    def stream():
        for n in range(5):
            taken.append(n)
            yield n

    batches = iter_batches(stream(), 2)
    assert next(batches) == [0, 1]
    assert taken == [0, 1]
    assert list(batches) == [[2, 3], [4]]
    assert list(iter_batches([], 3)) == []


def _writer(path: str, worker: int, n: int) -> None:
    for i in range(n):
        with open_warehouse(path) as con:
            record_dead_letters(
                con, [DeadLetter(stage="test", tenant_id="t", source_uri=f"w{worker}/{i}", reason="concurrent write")]
            )


def test_two_processes_writing_at_once_wait_for_the_lock(tmp_path: Path) -> None:
    path = str(tmp_path / "w.duckdb")
    with open_warehouse(path):
        pass
    ctx = multiprocessing.get_context("spawn")
    workers = [ctx.Process(target=_writer, args=(path, w, 15)) for w in range(2)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
    assert [p.exitcode for p in workers] == [0, 0]
    con = duckdb.connect(path, read_only=True)
    assert one_row(con.execute("SELECT count(*) FROM dead_letters"))[0] == 30


def test_a_record_keyed_item_has_one_owner_whatever_order_its_copies_are_written_in(tmp_path: Path) -> None:
    """Two copies of one message (same record key): one item, under the copy with the smaller doc_id, whichever
    is written first (parallel shards write in no fixed order; a DuckDB file and a lake must agree)."""
    first, second = _doc("Invoice 42 due."), _doc("Fwd: Invoice 42 due.")
    owner = min(first, second, key=lambda d: d.doc_id)
    for n, order in enumerate(((first, second), (second, first))):
        with open_warehouse(tmp_path / f"w{n}.duckdb") as con:
            insert_documents(con, [first, second])
            for doc in order:
                write_extraction_batch(con, "pulse@v1", [_outcome(doc, [_item(doc, "record-42", "Invoice 42 due.")])])
            rows = con.execute("SELECT item_id, doc_id FROM extracted_items").fetchall()
            evidence = con.execute("SELECT doc_id FROM evidence").fetchall()
        assert rows == [("record-42", owner.doc_id)]
        assert evidence == [(owner.doc_id,)]


def test_rows_are_written_by_column_name_whatever_their_key_order(tmp_path: Path) -> None:
    from datetime import datetime

    import pytest

    from extraction_assets.lib.warehouse import insert_rows

    with open_warehouse(tmp_path / "w.duckdb") as con:
        row = {"checked_at": datetime(2026, 12, 1), "row_count": 7, "head_hash": "abc"}
        reordered = {"head_hash": "def", "row_count": 9, "checked_at": datetime(2026, 12, 2)}
        insert_rows(con, "audit_log_heads", [row])
        insert_rows(con, "audit_log_heads", [reordered])
        stored = con.execute("SELECT row_count, head_hash FROM audit_log_heads ORDER BY checked_at").fetchall()
        assert stored == [(7, "abc"), (9, "def")]
        with pytest.raises(ValueError, match="same columns"):
            insert_rows(con, "audit_log_heads", [row, reordered])


class _CountingConnection:
    """A connection that counts its statements."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.statements = 0

    def execute(self, sql: str, params: object = None) -> duckdb.DuckDBPyConnection:
        self.statements += 1
        return self.con.execute(sql, params)

    def __getattr__(self, name: str) -> object:  # what is not a statement (registering the rows' view)
        return getattr(self.con, name)


def test_many_rows_are_written_in_one_statement_with_nulls_and_conflicts(tmp_path: Path) -> None:
    from datetime import datetime

    from extraction_assets.lib.warehouse.connection import insert_rows, merge_rows

    rows = [
        {"dead_letter_id": f"d{i}", "stage": "test", "tenant_id": "t", "source_uri": f"s{i}", "doc_id": None,
         "schema_version": None if i % 2 else "pulse@v1", "reason": "r", "detail": "{}",
         "first_seen_at": datetime(2026, 12, 1)}
        for i in range(1000)
    ]  # fmt: skip
    with open_warehouse(tmp_path / "w.duckdb") as con:
        counting = _CountingConnection(con)
        insert_rows(counting, "dead_letters", rows)  # type: ignore[arg-type]
        merge_rows(counting, "dead_letters", rows[:10])  # type: ignore[arg-type]
        assert counting.statements == 2
        stored = con.execute("SELECT count(*), count(schema_version), max(source_uri) FROM dead_letters").fetchone()
    assert stored == (1000, 500, "s999")


def test_documents_load_by_id_after_deletes_and_new_rows(tmp_path: Path) -> None:
    from extraction_assets.lib.warehouse import load_documents

    docs = [_doc(f"note {i}") for i in range(40)]
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, docs[:30])
        con.execute("DELETE FROM raw_documents WHERE doc_id IN (SELECT unnest(?))", [[d.doc_id for d in docs[:10]]])
        insert_documents(con, docs[30:])
        wanted = sorted(d.doc_id for d in docs[5:35:3])  # some deleted, some old, some new
        loaded = load_documents(con, wanted)
    assert [d.doc_id for d in loaded] == sorted(d.doc_id for d in docs[5:35:3] if d not in docs[:10])
    assert {d.doc_id: d.text for d in loaded} == {d.doc_id: d.text for d in docs[10:] if d.doc_id in wanted}


def test_rows_read_at_known_row_ids_need_no_look_up_and_a_moved_row_is_still_read(tmp_path: Path) -> None:
    """A batch read at the row ids its planning found runs one statement; a row that moved since (here: deleted and
    written again) is looked up and read all the same, and a wrong row id never reads another document."""
    from extraction_assets.lib.warehouse import document_rows

    docs = [_doc(f"note {i}") for i in range(12)]
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, docs)
        wanted = sorted(d.doc_id for d in docs[2:9:2])
        rowids = dict(con.execute("SELECT doc_id, rowid FROM raw_documents").fetchall())
        expected = document_rows(con, wanted)
        said: list[str] = []
        assert document_rows(ListedStatements(con, said), wanted, rowids) == expected  # type: ignore[arg-type]
        assert len(said) == 1, said
        moved = docs[4]
        con.execute("DELETE FROM raw_documents WHERE doc_id = ?", [moved.doc_id])
        insert_documents(con, [moved])
        assert (
            rowids[moved.doc_id]
            != dict(con.execute("SELECT doc_id, rowid FROM raw_documents").fetchall())[moved.doc_id]
        )
        said.clear()
        listed = ListedStatements(con, said)
        assert [r["doc_id"] for r in document_rows(listed, wanted, rowids)] == wanted  # type: ignore[arg-type]
        assert len(said) == 3, said  # the read, the look-up, the read again
        swapped = {**rowids, wanted[0]: rowids[docs[0].doc_id]}  # a row id that is another document's
        assert [r["doc_id"] for r in document_rows(con, wanted, swapped)] == wanted


def test_quotes_are_stamped_at_the_documents_known_row_ids_and_a_moved_document_is_left_to_the_check(
    tmp_path: Path,
) -> None:
    """The batch's quotes are compared with its documents read at the row ids they were read at (no look-up): a
    document whose row moved since gets no stamp on its quotes, so the quote check reads its text instead."""
    from extraction_assets.lib.warehouse import invariants

    docs = [_doc("Supplier delay."), _doc("Cash is short.")]
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, docs)
        rowids = dict(con.execute("SELECT doc_id, rowid FROM raw_documents").fetchall())
        moved = docs[1]
        con.execute("DELETE FROM raw_documents WHERE doc_id = ?", [moved.doc_id])
        insert_documents(con, [moved])
        said: list[str] = []
        write_extraction_batch(
            ListedStatements(con, said),  # type: ignore[arg-type]
            "pulse@v1",
            [_outcome(doc, [_item(doc, f"i{n}", doc.text)]) for n, doc in enumerate(docs)],
            raw_rowids=rowids,
        )
        stamped = dict(con.execute("SELECT item_id, checked_hash IS NOT NULL FROM evidence").fetchall())
        mismatches = invariants.quote_mismatches(con)
    assert stamped == {"i0": True, "i1": False}
    assert not [sql for sql in said if "rowid FROM raw_documents" in sql]
    assert mismatches == {}


def test_a_list_parameter_searches_no_import_path_for_an_absent_pandas(tmp_path: Path) -> None:
    """DuckDB tries `import pandas` per list element; once the warehouse is open that try costs no path search."""
    import importlib.abc
    import importlib.util
    import sys

    if sys.modules.get("pandas") is None and importlib.util.find_spec("pandas") is not None:
        pytest.skip("pandas is installed: DuckDB's tries find it")
    searches: list[str] = []

    class Recorder(importlib.abc.MetaPathFinder):
        def find_spec(self, name: str, path: object, target: object = None) -> None:
            searches.append(name)

    with open_warehouse(tmp_path / "w.duckdb") as con:
        sys.meta_path.insert(0, Recorder())
        try:
            ids = [f"d{i}" for i in range(50)]
            con.execute("SELECT count(*) FROM raw_documents WHERE doc_id IN (SELECT unnest(?))", [ids]).fetchall()
        finally:
            sys.meta_path.pop(0)
    assert "pandas" not in searches


def test_a_connection_that_writes_nothing_leaves_no_log_to_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with open_warehouse(path):
        pass
    with open_warehouse(path) as con:
        assert not path.with_name("w.duckdb.wal").exists()  # the schema was there: nothing was replaced
        con.execute("DROP VIEW evidence_image_regions")
    with open_warehouse(path) as con:  # a missing (or changed) view is made again
        assert con.execute("SELECT count(*) FROM evidence_image_regions").fetchone() == (0,)


def test_a_queue_is_in_step_once_it_holds_every_needs_review_item_queued_after_its_change(tmp_path: Path) -> None:
    doc = _doc("Supplier delay. Cash is short.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        assert queue_in_step(con, "pulse@v1"), "nothing stored: nothing to queue"
        insert_documents(con, [doc])
        items = [_item(doc, "a", "Supplier delay.", "needs_review"), _item(doc, "b", "Cash is short.")]
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, items)])
        assert not queue_in_step(con, "pulse@v1"), "its needs_review item is not queued yet"
        rebuild_review_queue(con, "pulse@v1")
        assert queue_in_step(con, "pulse@v1")
        con.execute("UPDATE extracted_items SET status = 'accepted' WHERE item_id = 'a'")
        assert not queue_in_step(con, "pulse@v1"), "a queued item that no longer needs review"


def test_a_queue_found_in_step_is_known_in_step_while_what_it_is_derived_from_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The expected queue is derived only when a fingerprinted row moved: here deriving it fails, so a verdict
    reached without it shows the fingerprint decided; each change below must reach the derivation again."""
    from extraction_assets.lib.warehouse import currency

    doc = _doc("Supplier delay. Cash is short.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        items = [_item(doc, "a", "Supplier delay.", "needs_review"), _item(doc, "b", "Cash is short.")]
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, items)])
        monkeypatch.setattr(currency, "_QUEUE_OUT_OF_STEP", "SELECT error('derived ' || $version || $queued_at)")
        con.execute(
            "INSERT INTO schema_version_roles VALUES ('pulse@v1', 'pulse', 'current', '[]', TIMESTAMP '2020-01-01')"
        )
        changes = [  # none touches updated_at or queued_at: only the rows' content moves
            "DELETE FROM review_queue WHERE item_id = 'a'",
            "UPDATE extracted_items SET status = 'accepted' WHERE item_id = 'a'",
            "UPDATE evidence SET quote = 'Supplier' WHERE item_id = 'a'",
            "UPDATE raw_documents SET source_uri = 'acme/y.txt'",
            "UPDATE schema_version_roles SET rivals = '[\"pulse@v2\"]' WHERE schema_version = 'pulse@v1'",
        ]
        for change in changes:
            rebuild_review_queue(con, "pulse@v1")
            assert queue_in_step(con, "pulse@v1"), "rebuilt: in step by its fingerprint"
            con.execute(change)
            with pytest.raises(duckdb.Error, match="derived"):
                queue_in_step(con, "pulse@v1")


def test_a_queue_found_in_step_records_its_fingerprint_only_when_asked(tmp_path: Path) -> None:
    doc = _doc("Supplier delay. Cash is short.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, [_item(doc, "a", "Supplier delay.", "needs_review")])])
        rebuild_review_queue(con, "pulse@v1")
        con.execute("DELETE FROM review_queue_inputs")
        assert queue_in_step(con, "pulse@v1")
        assert con.execute("SELECT count(*) FROM review_queue_inputs").fetchone() == (0,)
        assert queue_in_step(con, "pulse@v1", remember=True)
        assert con.execute("SELECT schema_version FROM review_queue_inputs").fetchall() == [("pulse@v1",)]


def test_work_lists_come_in_the_order_the_documents_are_stored(tmp_path: Path) -> None:
    """A batch of work read from a fresh connection is cheap only when its rows are stored side by side."""
    docs = [_doc(f"Note number {n}.") for n in range(12)]
    assert [d.doc_id for d in docs] != sorted(d.doc_id for d in docs)  # ids do not sort in the stored order
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, docs)
        stored = [row[0] for row in con.execute("SELECT doc_id FROM raw_documents ORDER BY rowid").fetchall()]
        assert documents_to_scrub(con, {"acme": "pii-v3"}) == stored
        for doc in docs:
            con.execute(
                "INSERT INTO scrubbed_documents (doc_id, tenant_id, text, offset_map, pii_counts, pii_total, "
                "scrubber_version, scrubbed_at, policy) VALUES (?, 'acme', ?, '{}', '{}', 0, 'pii-v3', now(), NULL)",
                [doc.doc_id, doc.text],
            )
        assert [d.doc_id for d in documents_to_route(con, "pulse@v1", ["text"], "rules")] == stored
        assert pending_extractions(con, "pulse@v1", ["text"], "h1") == stored


def test_a_document_whose_scrub_outlasted_its_budget_waits_for_a_new_scrubber_version(tmp_path: Path) -> None:
    slow, other = _doc("a 1 MB subject"), _doc("a plain note")
    too_slow = DeadLetter(
        stage="scrub",
        tenant_id="acme",
        source_uri="acme/x.txt",
        doc_id=slow.doc_id,
        reason="ScrubTooSlow: scrubbing took longer than its budget of 20 s",
        detail={"scrubber_version": "pii-v4+abc"},
    )
    crashed = too_slow.model_copy(update={"doc_id": other.doc_id, "reason": "RuntimeError: boom"})
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [slow, other])
        record_dead_letters(con, [too_slow, crashed])
        assert documents_to_scrub(con, {"acme": "pii-v4+abc"}) == [other.doc_id]  # a crash is tried again
        assert sorted(documents_to_scrub(con, {"acme": "pii-v5+abc"})) == sorted([slow.doc_id, other.doc_id])


class _Recording:
    """A connection that records the statements run through it."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.statements: list[str] = []

    def execute(self, sql: str, *args: object) -> duckdb.DuckDBPyConnection:
        self.statements.append(sql)
        return self.con.execute(sql, *args)


def test_a_file_at_this_ddl_is_recognised_by_one_lookup_that_lists_no_catalog(tmp_path: Path) -> None:
    """Listing views builds DuckDB's internal ones on every fresh connection (20-40 ms per writer)."""
    from extraction_assets.lib.warehouse.ddl import ensure_schema

    with open_warehouse(tmp_path / "w.duckdb"):
        pass  # a new file: brought up to this DDL and stamped
    with open_warehouse(tmp_path / "w.duckdb", read_only=True) as con:
        recording = _Recording(con)
        ensure_schema(recording)  # type: ignore[arg-type]
    assert recording.statements == ["SELECT ddl_stamp() WHERE NOT EXISTS (FROM evidence_image_regions LIMIT 0)"]


def test_a_file_without_the_stamp_is_brought_up_and_stamped(tmp_path: Path) -> None:
    from extraction_assets.lib.warehouse.ddl import SCHEMA_STAMP, ensure_schema

    with open_warehouse(tmp_path / "w.duckdb") as con:
        con.execute("DROP MACRO ddl_stamp")  # a file stamped before the macro, or one whose DDL failed half-way
    with duckdb.connect(str(tmp_path / "w.duckdb")) as con:
        recording = _Recording(con)
        ensure_schema(recording)  # type: ignore[arg-type]
        assert len(recording.statements) > 10
        assert con.execute("SELECT ddl_stamp()").fetchone() == (SCHEMA_STAMP,)


def test_a_documents_turns_are_parsed_once_for_every_reader_and_anew_when_they_change(tmp_path: Path) -> None:
    from extraction_assets.lib.models import Turn
    from extraction_assets.lib.warehouse import load_documents
    from extraction_assets.lib.warehouse.documents import parsed_turns

    text = "Ann: we ship Friday\nBo: the vendor is late"
    turns = [Turn(turn_id="t1", start=0, end=19)]
    doc = _doc(text).model_copy(update={"kind": "transcript", "turns": turns})
    parsed_turns.cache_clear()
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        first, second = load_documents(con, [doc.doc_id]), load_documents(con, [doc.doc_id])
        assert parsed_turns.cache_info().misses == 1 and parsed_turns.cache_info().hits == 1
        assert first[0].turns == second[0].turns == turns and first[0].turns is not second[0].turns
        later = [*turns, Turn(turn_id="t2", start=20, end=42)]
        stored = json.dumps([t.model_dump() for t in later])
        con.execute("UPDATE raw_documents SET turns = ? WHERE doc_id = ?", [stored, doc.doc_id])
        assert load_documents(con, [doc.doc_id])[0].turns == later
    assert parsed_turns.cache_info().misses == 2


def test_duckdb_gets_a_memory_limit_and_threads_fitted_to_the_machine_or_as_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a limit DuckDB may keep 80% of the machine for its buffer pool, so a run's memory grew with the
    warehouse; every database a process opens gets the limit and the thread count (the settings' or fitted ones)."""
    import subprocess
    import sys

    from extraction_assets.lib.warehouse.engine import fitted_memory_mb, fitted_threads

    assert 64 <= fitted_memory_mb() <= 256 and fitted_threads() >= 1
    show = (
        "import sys\n"
        "from extraction_assets.lib.warehouse import open_warehouse\n"
        "with open_warehouse(sys.argv[1]) as con:\n"
        "    print(*con.execute(\"SELECT current_setting('memory_limit'), current_setting('threads')\").fetchone())\n"
        "    print(*con.execute(\"SELECT current_setting('allocator_flush_threshold')\").fetchone())\n"
    )
    fitted = subprocess.run([sys.executable, "-c", show, str(tmp_path / "a.duckdb")], capture_output=True, text=True)
    assert fitted.stdout.splitlines()[0].split()[-1] == str(fitted_threads()), fitted.stderr
    assert fitted.stdout.splitlines()[1] == "7.6 MiB", "freed memory goes back from the allocator's caches"
    monkeypatch.setenv("EXTRACTION_DUCKDB_MEMORY_MB", "512")
    monkeypatch.setenv("EXTRACTION_DUCKDB_THREADS", "3")
    set_ = subprocess.run([sys.executable, "-c", show, str(tmp_path / "b.duckdb")], capture_output=True, text=True)
    assert set_.stdout.splitlines()[0].split() == ["488.2", "MiB", "3"], set_.stderr


def test_a_quote_verified_as_it_is_stored_is_not_read_again_until_it_or_its_document_changes(tmp_path: Path) -> None:
    """The quote check compared every quote with its document's text on every run, holding every text at once (a
    32 k-document warehouse ran DuckDB out of its memory limit); a quote verified as it was stored carries a
    fingerprint, and only rows whose fingerprint no longer holds are compared."""
    from extraction_assets.lib.warehouse import invariants

    doc = _doc("Supplier delay. Cash is short. Penalty looming.")
    with open_warehouse(tmp_path / "w.duckdb") as con:
        insert_documents(con, [doc])
        write_extraction_batch(con, "pulse@v1", [_outcome(doc, [_item(doc, "i1", "Cash is short.")])])
        assert invariants.unverified_quotes(con) == {}
        assert invariants.quote_mismatches(con) == {}
        con.execute("UPDATE evidence SET quote = 'Cash is long.'")
        assert invariants.unverified_quotes(con) == {doc.doc_id: ["ev-i1"]}
        assert invariants.quote_mismatches(con) == {"pulse@v1": ["ev-i1"]}
        con.execute("UPDATE evidence SET quote = 'Cash is short.'")
        assert invariants.quote_mismatches(con) == {}
        con.execute("UPDATE raw_documents SET text = replace(text, 'Cash', 'Cask')")
        assert invariants.quote_mismatches(con) == {"pulse@v1": ["ev-i1"]}


def test_a_batch_read_costs_its_rows_not_the_rows_stored_between_them(tmp_path: Path) -> None:
    """Two documents stored 3,000 rows (60 MB of text) apart are read under a 16 MB DuckDB limit: a semi-join on
    their row ids decoded every row between them and ran out of memory (as a batch of transcripts spread over a
    32 k-document warehouse did at 128 MB)."""
    import random
    import string

    from extraction_assets.lib.warehouse import load_documents, texts_to_scrub

    rng = random.Random(45)
    letters = (string.ascii_letters + " ").encode()
    as_letters = bytes(letters[byte % len(letters)] for byte in range(256))  # random bytes to letters and spaces
    docs = [_doc(f"note {i} " + rng.randbytes(20_000).translate(as_letters).decode()) for i in range(3000)]
    with open_warehouse(tmp_path / "w.duckdb") as con:
        for batch in batched(docs, 500):
            insert_documents(con, batch)
        con.execute("CHECKPOINT")
    ends = [docs[-1].doc_id, docs[0].doc_id]
    with open_warehouse(tmp_path / "w.duckdb") as con:
        con.execute("SET memory_limit = '16MB'")
        loaded = load_documents(con, ends)
        scrub = texts_to_scrub(con, ends)
    assert [d.text for d in loaded] == [d.text for d in sorted([docs[0], docs[-1]], key=lambda d: d.doc_id)]
    assert [row[3] for row in scrub] == [docs[-1].text, docs[0].text]


def test_an_id_list_selects_what_a_list_parameter_does_without_converting_each_id(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import builtins
    import sys

    import numpy  # noqa: F401  (loaded, as in a pass that has written a large batch)

    from extraction_assets.lib.warehouse.connection import LIST_PARAMETER_VALUES, id_list

    con = duckdb.connect()
    con.execute("CREATE TABLE t (doc_id VARCHAR)")
    con.execute("INSERT INTO t VALUES ('a'), ('b'), ('c')")
    ids = ["c", "a", "zz"] * 200
    want = con.execute("SELECT doc_id FROM t WHERE doc_id IN (SELECT unnest(?)) ORDER BY 1", [ids]).fetchall()
    tries: list[str] = []
    real = builtins.__import__

    def counted(name: str, *args: object, **kwargs: object) -> object:
        tries.append(name)
        return real(name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(builtins, "__import__", counted)
    with id_list(con, ids) as (wanted, params), id_list(con, []) as (nothing, none):  # two at once
        assert con.execute(f"SELECT doc_id FROM t WHERE doc_id IN {wanted} ORDER BY 1", params).fetchall() == want
        assert con.execute(f"SELECT doc_id FROM t WHERE doc_id IN {nothing}", none).fetchall() == []
    # a list parameter tries `import pandas` once or twice per id (~5 us each): the view converts the column at once
    assert tries.count("pandas") < 10
    assert not [v for v in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()]
    # a small list where NumPy is not loaded stays a list parameter: a fresh process never imports NumPy for it
    monkeypatch.delitem(sys.modules, "numpy")
    with id_list(con, ids[:LIST_PARAMETER_VALUES]) as (wanted, params):
        assert params == [ids[:LIST_PARAMETER_VALUES]]
        assert con.execute(f"SELECT doc_id FROM t WHERE doc_id IN {wanted} ORDER BY 1", params).fetchall() == want
    assert "numpy" not in sys.modules
