"""Many tiny rows: every reader that builds an object per row, line, message, answer or turn counts them in the
file's budget and stops at its bound, so the whole file is one dead letter and memory stays bounded whatever the
shape (the figures, with the real bound, are in the benchmarks; a real memory limit is in the integration tests)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evals.hostile_files import tiny_rows
from extraction_assets.lib.models import Document, ReadFailure
from extraction_assets.lib.readers import read_file, record

SHAPES = [
    "rows.csv",
    "wide.csv",
    "rows.xlsx",
    "lines.jsonl",
    "tiny.mbox",
    "chat.txt",
    "chat.json",
    "pulse.json",
    "lines.eml",
]
BOUND = 400  # rows one file may hold, in these tests (the real bound: record.MAX_ROWS)


@pytest.fixture(autouse=True)
def small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(record, "MAX_ROWS", BOUND)


def _read(path: Path) -> list[Document | ReadFailure]:
    return read_file(path, "acme", f"acme/{path.name}")


@pytest.mark.parametrize("name", SHAPES)
def test_a_file_of_more_rows_than_one_file_may_hold_is_refused_whole(tmp_path: Path, name: str) -> None:
    [failure] = _read(tiny_rows(tmp_path / name, 5 * BOUND))
    assert isinstance(failure, ReadFailure) and failure.source_uri == f"acme/{name}"
    assert failure.reason.startswith(f"more than {BOUND} rows, lines, messages, answers, turns and documents in all")


@pytest.mark.parametrize("name", SHAPES)
def test_a_file_within_the_bound_is_read_as_before(tmp_path: Path, name: str) -> None:
    results = _read(tiny_rows(tmp_path / name, BOUND // 8))
    assert not any(isinstance(r, ReadFailure) and "one file's limit" in r.reason for r in results)
    if name not in ("lines.jsonl", "tiny.mbox"):  # their records are no check-in and no e-mail: a failure each
        assert any(isinstance(r, Document) for r in results)


def test_the_documents_of_one_file_hold_no_more_text_than_one_file_may(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wide sheet repeats its questions in every row's check-in: a long header and short rows make small files of
    large documents (each under the bound, all together far over it)."""
    monkeypatch.setattr(record, "MAX_TEXT_CHARS", 100_000)
    question = "How did the week go" + " really" * 1_500 + "?"
    path = tmp_path / "wide.csv"
    path.write_text(f"name,{question}\n" + "".join(f"m{i},fine\n" for i in range(200)), encoding="utf-8")
    [failure] = _read(path)
    assert isinstance(failure, ReadFailure)
    assert failure.reason == "text larger than 100000 characters (the most one file may become)"


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_live_session_of_more_turns_than_one_file_may_hold_is_refused(tmp_path: Path, suffix: str) -> None:
    import json

    from extraction_assets.lib.sessions import SessionFileError, read_session, session_document, session_files

    turns = [{"id": f"t{i}", "speaker": "A", "text": "a"} for i in range(5 * BOUND)]
    path = tmp_path / "acme" / f"s-001{suffix}"
    path.parent.mkdir(parents=True)
    lines = [json.dumps({"turns": turns})] if suffix == ".json" else [json.dumps(t) for t in turns]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    [entry] = session_files(tmp_path)
    with pytest.raises(SessionFileError, match="one file's limit"):
        session_document(read_session(tmp_path, entry))
