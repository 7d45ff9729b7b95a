"""`extraction-assets watch`: one warm process that brings the warehouse up to date, then extracts what arrives."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import duckdb
from watchfiles import Change

from extraction_assets.commands.watch import InputFilter
from tests.one_row import one_row

NOTE = "Subject: release\nFrom: lan@example.org\n\nWe will ship the release by Friday. Risk: the vendor may slip.\n"


def _wait_for(out: Path, text: str, process: subprocess.Popen[bytes], seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in out.read_text(errors="replace"):
            return
        assert process.poll() is None, f"the watch ended early:\n{out.read_text(errors='replace')[-3000:]}"
        time.sleep(0.2)
    raise AssertionError(f"no {text!r} within {seconds} s:\n{out.read_text(errors='replace')[-3000:]}")


def _watch(tmp_path: Path, inbox: Path, prompts: Path, sink: IO[bytes], *options: str) -> subprocess.Popen[bytes]:
    """`extraction-assets watch` on the test's inbox, prompts and warehouse, offline, its output into `sink`."""
    command = [str(Path(sys.executable).with_name("extraction-assets")), "watch", *options]
    command += ["--inbox", str(inbox), "--prompts", str(prompts), "--warehouse", str(tmp_path / "warehouse.duckdb")]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_LLM_", "DAGSTER_HOME"))}
    return subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env={**env, "COLUMNS": "200"})


def test_a_file_that_arrives_is_extracted_by_the_next_pass(tmp_path: Path, inbox: Path, prompts: Path) -> None:
    warehouse, out = tmp_path / "warehouse.duckdb", tmp_path / "watch.out"
    with out.open("wb") as sink:
        watch = _watch(tmp_path, inbox, prompts, sink, "--passes", "2")
        try:
            _wait_for(out, "pass 1 done", watch)
            (inbox / "acme" / "arrived-note.eml").write_text(NOTE)
            assert watch.wait(timeout=180) == 0, out.read_text(errors="replace")[-3000:]
        finally:
            watch.kill()
    said = out.read_text(errors="replace")
    assert "pass 1: bringing the warehouse up to date" in said and "pass 2: 1 changed files" in said
    with duckdb.connect(str(warehouse), read_only=True) as con:
        decided = one_row(
            con.execute(
                "SELECT count(*) FROM raw_documents r JOIN document_applicability a USING (doc_id) "
                "WHERE r.source_uri LIKE '%arrived-note.eml'"
            )
        )[0]
    assert decided >= 1, "the new note was ingested and every schema version that reads e-mail decided on it"


def test_the_warehouse_files_never_start_a_pass(tmp_path: Path) -> None:
    warehouse = tmp_path / "inbox" / "w.duckdb"
    keep = InputFilter(warehouse)
    assert not keep(Change.modified, str(warehouse))
    assert not keep(Change.added, str(tmp_path / "inbox" / "w.duckdb.wal"))
    assert not keep(Change.added, str(tmp_path / "inbox" / "w.duckdb.readers"))
    assert keep(Change.added, str(tmp_path / "inbox" / "acme" / "note.eml"))
    assert not keep(Change.added, str(tmp_path / "inbox" / "acme" / ".note.eml.swp")), "an editor's swap file"


def test_sigterm_ends_a_watch_as_ctrl_c_does(tmp_path: Path, inbox: Path, prompts: Path) -> None:
    """A service manager stops a watch with SIGTERM: it ends as on Ctrl-C (exit 130), not killed mid-line."""
    import signal

    out = tmp_path / "watch.out"
    with out.open("wb") as sink:
        watch = _watch(tmp_path, inbox, prompts, sink)
        try:
            _wait_for(out, "pass 1 done", watch)
            watch.send_signal(signal.SIGTERM)
            assert watch.wait(timeout=60) == 130, out.read_text(errors="replace")[-3000:]
        finally:
            watch.kill()
