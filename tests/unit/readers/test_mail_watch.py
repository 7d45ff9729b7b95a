"""The mail sensor's cursor: which mail files are new, exactly-once batch keys, given-back files and back-off."""

from __future__ import annotations

import os
from pathlib import Path

from extraction_assets.lib.readers import MailCursor, mail_stamps
from extraction_assets.lib.readers.mail_watch import LOST_AFTER_S, RETRY_AFTER_S


def test_mail_stamps_finds_mail_files_under_tenants_only(tmp_path: Path) -> None:
    (tmp_path / "acme" / "mail").mkdir(parents=True)
    (tmp_path / "acme" / "mail" / "a.eml").write_text("Subject: a\n\nhi\n")
    (tmp_path / "acme" / "box.MBOX").write_text("From x\nSubject: b\n\nhi\n")
    (tmp_path / "acme" / "notes.txt").write_text("not mail")
    (tmp_path / "acme" / ".hidden.eml").write_text("Subject: c\n\nhidden\n")
    (tmp_path / "root.eml").write_text("Subject: d\n\noutside a tenant\n")
    os.symlink("/etc/hostname", tmp_path / "acme" / "link.eml")  # outside the tenant folder: never read
    stamps = mail_stamps(tmp_path)
    assert sorted(stamps) == ["acme/box.MBOX", "acme/mail/a.eml"]
    info = (tmp_path / "acme" / "mail" / "a.eml").stat()
    assert stamps["acme/mail/a.eml"] == (info.st_size, info.st_mtime_ns)


def test_a_file_is_asked_for_once_and_done_when_its_batch_completes() -> None:
    cursor = MailCursor()
    stamps = {"acme/a.eml": (10, 1), "acme/box.mbox": (20, 1)}
    assert cursor.changed(stamps, now=0) == stamps
    key = cursor.request(stamps, runs=2)
    assert key == MailCursor().request(stamps, runs=2)  # the same files, the same attempt: the same run key
    assert cursor.changed(stamps, now=0) == {}  # being read: not asked for twice
    grown = {**stamps, "acme/box.mbox": (35, 2)}
    assert cursor.changed(grown, now=0) == {"acme/box.mbox": (35, 2)}  # an mbox that grew meanwhile: new work
    cursor.settle(key, complete=True, now=0)
    assert cursor.done == stamps and cursor.changed(stamps, now=0) == {}
    assert MailCursor.parse(cursor.dump()) == cursor


def test_a_batch_that_left_work_undone_gives_its_files_back_after_a_back_off() -> None:
    cursor = MailCursor()
    stamps = {"acme/a.eml": (10, 1)}
    first = cursor.request(stamps, runs=1)
    cursor.settle(first, complete=False, now=100.0)
    assert cursor.done == {} and cursor.attempts == {"acme/a.eml": 1}
    assert cursor.changed(stamps, now=100.0) == {}  # waiting
    assert cursor.changed(stamps, now=100.0 + RETRY_AFTER_S) == stamps
    second = cursor.request(stamps, runs=1)
    assert second != first  # another attempt: another run key, so Dagster starts it
    cursor.settle(second, complete=False, now=200.0)
    assert cursor.retry_at["acme/a.eml"] == 200.0 + 2 * RETRY_AFTER_S  # doubled
    cursor.forget_missing({})
    assert cursor.attempts == {} and cursor.retry_at == {}


def test_a_batch_whose_runs_never_appeared_is_lost_after_a_while() -> None:
    cursor = MailCursor()
    key = cursor.request({"acme/a.eml": (10, 1)}, runs=2, now=1000.0)
    batch = cursor.in_flight[key]
    assert not batch.lost(runs_found=1, now=1000.0 + LOST_AFTER_S - 1)
    assert batch.lost(runs_found=1, now=1000.0 + LOST_AFTER_S + 1)
    assert not batch.lost(runs_found=2, now=1000.0 + LOST_AFTER_S + 1)  # all there: it waits for them to finish
