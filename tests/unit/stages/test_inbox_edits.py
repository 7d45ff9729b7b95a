"""An edit that keeps a file's size and modification time, on a real inbox folder and warehouse: the next ingest
reads it again, whether the edit set the time back (its change time moved) or fell within the time's granularity
just after the file was read (the stamp kept the content's digest). An unchanged file is still not read."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import pytest

from extraction_assets.lib.stages import ingest_inbox
from extraction_assets.lib.warehouse import open_warehouse

BEFORE, AFTER = "We ship the order on Monday.\n", "We ship the order on Friday.\n"  # the same length
LONG_AGO_NS = 1_700_000_000 * 10**9  # a modification time far from now: the stamp alone can tell


def _texts(warehouse: Path) -> list[str]:
    with open_warehouse(warehouse, read_only=True) as con:
        return sorted(text for (text,) in con.execute("SELECT text FROM raw_documents").fetchall())


def test_an_edit_that_sets_size_and_modification_time_back_is_read_again(tmp_path: Path) -> None:
    inbox, warehouse = tmp_path / "inbox", tmp_path / "w.duckdb"
    note = inbox / "acme" / "note.txt"
    note.parent.mkdir(parents=True)
    note.write_text(BEFORE, encoding="utf-8")
    os.utime(note, ns=(LONG_AGO_NS, LONG_AGO_NS))
    connect = partial(open_warehouse, warehouse)
    assert ingest_inbox(connect, inbox, None).files_read == 1

    note.write_text(AFTER, encoding="utf-8")
    os.utime(note, ns=(LONG_AGO_NS, LONG_AGO_NS))  # `touch -d`, `cp -p`, an editor that keeps times
    assert note.stat().st_size == len(BEFORE) and note.stat().st_mtime_ns == LONG_AGO_NS
    again = ingest_inbox(connect, inbox, None)
    assert again.files_read == 1 and again.inserted == 1
    assert _texts(warehouse) == [AFTER, BEFORE]
    assert ingest_inbox(connect, inbox, None).files_unchanged == 1, "once read, unchanged again"


def test_an_edit_within_the_timestamps_granularity_after_the_read_is_read_again(tmp_path: Path) -> None:
    """The note is read right after it was written; it is then rewritten so quickly that size, modification and
    change time all stay as they were stamped (made here by setting the times and the stamp's change time)."""
    inbox, warehouse = tmp_path / "inbox", tmp_path / "w.duckdb"
    note = inbox / "acme" / "note.txt"
    note.parent.mkdir(parents=True)
    note.write_text(BEFORE, encoding="utf-8")
    connect = partial(open_warehouse, warehouse)
    assert ingest_inbox(connect, inbox, None).files_read == 1
    stamped = note.stat()

    note.write_text(AFTER, encoding="utf-8")
    os.utime(note, ns=(stamped.st_atime_ns, stamped.st_mtime_ns))
    with open_warehouse(warehouse) as con:  # the same change time too, as an edit in the same tick leaves it
        con.execute("UPDATE inbox_files SET ctime_ns = ?", [note.stat().st_ctime_ns])
    again = ingest_inbox(connect, inbox, None)
    assert again.files_read == 1 and _texts(warehouse) == [AFTER, BEFORE]
    unchanged = ingest_inbox(connect, inbox, None)
    assert unchanged.files_read == 0 and unchanged.files_unchanged == 1, "an unchanged file is compared, not read"


def _per_source(con: object) -> dict[str, int]:
    """Each file's documents and dead letters stored so far."""
    rows = con.execute(  # type: ignore[attr-defined]
        "SELECT source_uri, count(*) FROM (SELECT source_uri FROM raw_documents UNION ALL "
        "SELECT source_uri FROM dead_letters) GROUP BY 1"
    ).fetchall()
    return dict(rows)


def test_files_are_stamped_a_batch_at_a_time_each_after_all_its_records(
    inbox: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ingest holds the stamps of the files in flight, not the whole inbox's: each batch stamps its files once
    every document and dead letter of theirs is stored (a file's records may go on into the next batch; the stamps
    commit with the batch that stores the last of them), so a crash loses no file, and the stored rows are an
    ingest's in one go."""
    from extraction_assets.lib.stages import ingest

    whole = partial(open_warehouse, tmp_path / "whole.duckdb")
    once = ingest_inbox(whole, inbox, None)
    stamped: list[dict[str, int]] = []
    real = ingest.store_ingest_batch

    def storing(con: object, docs: object, letters: object, stamps: dict[str, object]) -> tuple[int, int]:
        done = real(con, docs, letters, stamps)  # type: ignore[arg-type]
        if stamps:  # what is stored once the batch's transaction, stamps and all, has committed
            stored = _per_source(con)
            stamped.append({uri: stored.get(uri, 0) for uri in stamps})
        return done

    monkeypatch.setattr(ingest, "INGEST_BATCH", 3)
    monkeypatch.setattr(ingest, "READ_CHUNK", 2)
    monkeypatch.setattr(ingest, "store_ingest_batch", storing)
    batches = partial(open_warehouse, tmp_path / "batches.duckdb")
    report = ingest_inbox(batches, inbox, None)
    assert len(stamped) > 10 and max(map(len, stamped)) <= 8, [len(s) for s in stamped]
    with batches(read_only=True) as con:
        final = _per_source(con)
        files = {uri for (uri,) in con.execute("SELECT source_uri FROM inbox_files").fetchall()}
    assert [uri for s in stamped for uri in s if s[uri] != final.get(uri, 0)] == [], "stamped before all its rows"
    assert files == {uri for s in stamped for uri in s} and len(files) == report.files_read == once.files_read
    assert (report.inserted, report.duplicates, report.new_dead_letters, report.documents_read) == (
        once.inserted,
        once.duplicates,
        once.new_dead_letters,
        once.documents_read,
    )
    for table in ("raw_documents", "dead_letters", "inbox_files"):
        with whole(read_only=True) as a, batches(read_only=True) as b:
            # a stamp keeps the digest only of a file written within the last seconds (`RACY_NS`): not compared
            keep = "* EXCLUDE (read_at, content_sha256)" if table == "inbox_files" else "count(*)"
            assert sorted(a.execute(f"SELECT {keep} FROM {table}").fetchall()) == sorted(
                b.execute(f"SELECT {keep} FROM {table}").fetchall()
            ), table
