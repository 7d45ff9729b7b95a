"""The stages on their own, without Dagster: the sample inbox (or the review seed) in a temporary warehouse."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from extraction_assets.lib.pii import load_policy
from extraction_assets.lib.review import read_kept_heads
from extraction_assets.lib.review.audit import OUTSIDE_HEAD_SUFFIX
from extraction_assets.lib.review.corrections import Change, apply_change
from extraction_assets.lib.stages import (
    ScrubProgress,
    check_audit_log,
    ingest_inbox,
    refresh_review_queue,
    scrub_pending,
)
from extraction_assets.lib.warehouse import beside_warehouse, open_warehouse
from tests.review_seed import SCHEMA, item_ids, seed


def test_ingest_stores_new_documents_once_and_reads_an_unchanged_inbox_by_its_stamps(
    inbox: Path, tmp_path: Path
) -> None:
    connect = partial(open_warehouse, tmp_path / "w.duckdb")
    first = ingest_inbox(connect, inbox, None)
    assert first.inserted > 0 and first.total == first.inserted and first.files_read > 0
    assert sum(first.new_by_kind.values()) == first.inserted
    (inbox / "acme" / "copy.txt").write_text((next((inbox / "acme").rglob("*.txt"))).read_text())
    again = ingest_inbox(connect, inbox, None)
    assert again.inserted == 0 and again.total == first.total
    assert again.files_read == 1 and again.files_unchanged == first.files_read, "only the new file is read"
    assert again.duplicates == 1 and again.new_dead_letters == 1, "the copy is a dead letter, not a second row"


def test_scrub_masks_every_pending_document_once_and_reports_each_batch(inbox: Path, tmp_path: Path) -> None:
    connect = partial(open_warehouse, tmp_path / "w.duckdb")
    ingested = ingest_inbox(connect, inbox, None)
    seen: list[ScrubProgress] = []
    report = scrub_pending(connect, load_policy(None), None, seen.append)
    assert report.pending == ingested.total and report.scrubbed_now == ingested.total and not report.failures
    assert report.total == ingested.total and seen and seen[-1].done == ingested.total
    assert sum(report.masked.values()) > 0 and set(report.per_tenant) <= set(report.tenants)
    assert scrub_pending(connect, load_policy(None), None).pending == 0, "an up-to-date row is not scrubbed again"


def test_a_review_queue_is_rebuilt_when_out_of_step_with_its_items_and_left_alone_when_in_step(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    seed(path)  # three needs_review items of pulse@v1, its queue built
    with open_warehouse(path) as con:
        kept = refresh_review_queue(con, SCHEMA)
        assert (kept.queued, kept.rebuilt) == (3, False)
        assert kept.figures["items_by_status"] == {"draft": 1, "needs_review": 3}
        assert kept.figures["by_rule"] == {"below_threshold": 3} and len(kept.figures["preview"]) == 3
        con.execute("DELETE FROM review_queue WHERE schema_version = ?", [SCHEMA])
        rebuilt = refresh_review_queue(con, SCHEMA)
        assert (rebuilt.queued, rebuilt.rebuilt) == (3, True)
        assert refresh_review_queue(con, SCHEMA).rebuilt is False, "in step again after the rebuild"


def test_the_audit_check_records_a_moved_head_once_and_keeps_it_beside_the_warehouse(tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    seed(path)
    connect = partial(open_warehouse, path)
    with open_warehouse(path) as con:
        apply_change(con, "acme", item_ids()["acme:risk"], Change(status="accepted"), "lan", "accept")
    first = check_audit_log(connect, path)
    assert first.report.intact and first.recorded and first.report.head.row_count == 1
    outside = beside_warehouse(path, OUTSIDE_HEAD_SUFFIX)
    assert outside is not None and [k.head for k in read_kept_heads(outside)] == [first.report.head] * 2
    again = check_audit_log(connect, path)
    assert again.report.intact and not again.recorded, "an idle check writes nothing"
    with open_warehouse(path) as con:
        con.execute("DELETE FROM audit_log")
    assert not check_audit_log(connect, path).report.intact, "a log that shrank fails"
