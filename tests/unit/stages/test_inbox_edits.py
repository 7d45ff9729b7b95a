"""An edit that keeps a file's size and modification time, on a real inbox folder and warehouse: the next ingest
reads it again, whether the edit set the time back (its change time moved) or fell within the time's granularity
just after the file was read (the stamp kept the content's digest). An unchanged file is still not read."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

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
