"""The throughput bench's inbox: deterministic, readable by the inbox readers, and growable by new documents."""

from __future__ import annotations

import json
from pathlib import Path

from evals.bench_inbox import build_inbox, meeting_transcript, source_files
from extraction_assets.lib.models import Document
from extraction_assets.lib.readers import read_inbox

MAIL = "Message-ID: <1@x>\r\nDate: Mon, 18 Oct 1999 01:47 -0700\r\nFrom: a@b.com\r\nSubject: Hi\r\n\r\nI will go.\r\n"


def _evalsets(root: Path) -> Path:
    records = {
        "enron_categories": [{"id": "enron-1", "text": MAIL}, {"id": "enron-2", "text": MAIL.replace("go", "run")}],
        "sroie": [{"id": "sroie-1", "text": "SHOP SDN BHD\nTOTAL 10.00\n"}],
        "cuad": [{"id": "cuad-A/B", "text": "This Agreement is made between A and B."}],
        "qmsum_meetings": [{"id": "qmsum-1", "text": "Grad A: OK , we 're on .\nmore words\nGrad B: Yes .\n"}],
    }
    for dataset, rows in records.items():
        (root / dataset).mkdir(parents=True)
        (root / dataset / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return root


def test_meeting_lines_become_turns_and_unlabelled_lines_continue_the_turn() -> None:
    transcript = meeting_transcript("m", "Grad A: OK .\nmore words\nGrad B: Yes .")
    assert transcript == {
        "title": "m",
        "turns": [{"speaker": "Grad A", "text": "OK . more words"}, {"speaker": "Grad B", "text": "Yes ."}],
    }


def test_sources_are_interleaved_by_kind(tmp_path: Path) -> None:
    files = source_files(_evalsets(tmp_path / "evalsets"))
    assert [f.folder for f in files] == ["mail", "receipts", "contracts", "meetings", "mail"]
    assert files[2].name == "cuad-A_B.txt"


def test_any_prefix_holds_each_kind_in_its_share_of_the_set(tmp_path: Path) -> None:
    """A round-robin would put the one contract among the first four files, a quarter of a prefix for a tenth of
    the set: the "+1% new documents" of the throughput bench would weigh several times 1% of the inbox."""
    root = tmp_path / "evalsets"
    sizes = {"enron_categories": 8, "sroie": 1, "cuad": 1, "qmsum_meetings": 0}
    for dataset, n in sizes.items():
        (root / dataset).mkdir(parents=True)
        rows = [{"id": f"{dataset}-{i}", "text": MAIL if dataset == "enron_categories" else "x"} for i in range(n)]
        (root / dataset / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    folders = [f.folder for f in source_files(root)]
    assert folders == ["mail"] * 4 + ["receipts", "contracts"] + ["mail"] * 4
    assert "contracts" not in folders[:4]


def test_the_inbox_repeats_the_set_per_tenant_and_every_file_is_a_document(tmp_path: Path) -> None:
    files = source_files(_evalsets(tmp_path / "evalsets"))
    inbox = tmp_path / "inbox"
    assert build_inbox(inbox, 2 * len(files), files) == 10
    docs = [d for d in read_inbox(inbox)]
    assert all(isinstance(d, Document) for d in docs)
    assert len({d.doc_id for d in docs if isinstance(d, Document)}) == 10
    assert {d.tenant_id for d in docs} == {"tenant-1", "tenant-2"}
    assert sorted({d.kind for d in docs if isinstance(d, Document)}) == ["email", "text", "transcript"]


def test_a_larger_inbox_is_the_smaller_one_plus_new_files(tmp_path: Path) -> None:
    files = source_files(_evalsets(tmp_path / "evalsets"))
    small, large = tmp_path / "small", tmp_path / "large"
    build_inbox(small, 7, files)
    build_inbox(large, 9, files)
    small_files = {p.relative_to(small): p.read_bytes() for p in small.rglob("*") if p.is_file()}
    large_files = {p.relative_to(large): p.read_bytes() for p in large.rglob("*") if p.is_file()}
    assert len(large_files) == 9
    assert all(large_files[rel] == content for rel, content in small_files.items())


def test_routing_figures_count_items_from_a_schema_that_does_not_fit_the_folder(tmp_path: Path) -> None:
    from evals.bench_throughput import routing_figures
    from extraction_assets.lib.warehouse import open_warehouse

    warehouse = tmp_path / "w.duckdb"
    with open_warehouse(warehouse) as con:
        for doc_id, uri in (("m", "t1/mail/a.eml"), ("r", "t1/receipts/b.txt")):
            con.execute(
                "INSERT INTO raw_documents (doc_id, tenant_id, source_uri, kind, text, turns, metadata, char_count, "
                "ingested_at) VALUES (?, 't1', ?, 'text', 'x', '[]', '{}', 1, now())",
                [doc_id, uri],
            )
        for item_id, doc_id, schema, status in (
            ("1", "m", "email@v1", "draft"),
            ("2", "r", "receipt@v1", "needs_review"),
            ("3", "m", "pulse@v1", "draft"),
            ("4", "r", "receipt@v1", "draft"),
        ):
            con.execute(
                "INSERT INTO extracted_items (item_id, doc_id, tenant_id, schema_version, item_type, value, title, "
                "confidence, status, extracted_by, extractor_version, review_reasons, created_at, updated_at) "
                "VALUES (?, ?, 't1', ?, 'x', '{}', 't', 0.7, ?, 'heuristic', 'h', '[]', now(), now())",
                [item_id, doc_id, schema, status],
            )
    figures = routing_figures(warehouse)
    assert figures["items"] == 4 and figures["items_from_unfit_schema_share"] == 0.25
    assert figures["items_receipt_in_receipts"] == 2 and figures["to_review_receipt_in_receipts"] == 1
