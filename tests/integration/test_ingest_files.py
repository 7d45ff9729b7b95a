"""Ingest through the real asset: an unchanged file is not read again, a copy is counted as a duplicate, and
two people's identical check-ins stay two documents."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg

from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from extraction_assets.runner import run_pipeline


def _ingest(settings: Settings, instance: dg.DagsterInstance) -> dict[str, object]:
    ingest = run_pipeline(settings, schema_keys=["pulse@v1"], instance=instance)[0]
    assert ingest.success, ingest
    return ingest.metadata["raw_documents"]


def test_unchanged_files_are_not_read_again_and_copies_are_counted(settings: Settings) -> None:
    instance = dg.DagsterInstance.ephemeral()
    first = _ingest(settings, instance)
    assert isinstance(first["files_read"], int) and first["files_read"] > 20 and first["files_unchanged"] == 0

    again = _ingest(settings, instance)
    assert (again["files_read"], again["files_unchanged"]) == (0, first["files_read"])

    note = settings.inbox / "acme" / "notes" / "2026-11-24-ops-standup.md"
    shutil.copy(note, settings.inbox / "acme" / "notes" / "copy-of-standup.md")
    note.write_text(note.read_text(encoding="utf-8") + "\n- One more line.\n", encoding="utf-8")
    third = _ingest(settings, instance)
    assert third["files_read"] == 2 and third["new_documents"] == 1 and third["duplicates"] == 1
    with open_warehouse(settings.warehouse) as con:
        letters = rows_as_dicts(con, "SELECT source_uri, reason FROM dead_letters WHERE stage = 'duplicate'")
    assert letters == [{"source_uri": "acme/notes/copy-of-standup.md", "reason": "same document as " + str(
        note.relative_to(settings.inbox).as_posix())}]  # fmt: skip


def test_two_peoples_identical_check_ins_are_two_documents(settings: Settings, tmp_path: Path) -> None:
    answers = [{"question": "Hôm nay làm gì?", "answer": "Giao hàng cho Bếp Nhà."}]
    for name, author in (("a.json", "Lan"), ("b.json", "Minh")):
        path = settings.inbox / "acme" / "pulses" / name
        path.write_text(json.dumps({"author": author, "date": "2026-11-30", "answers": answers}), encoding="utf-8")
    _ingest(settings, dg.DagsterInstance.ephemeral())
    with open_warehouse(settings.warehouse) as con:
        rows = con.execute(
            "SELECT source_uri FROM raw_documents WHERE source_uri IN ('acme/pulses/a.json', 'acme/pulses/b.json')"
        ).fetchall()
    assert sorted(r[0] for r in rows) == ["acme/pulses/a.json", "acme/pulses/b.json"]
