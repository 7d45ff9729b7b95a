"""Chaos-import and interview bench: how fast sheets and pasted chats are read, and what interview@v1 fills.

Reading figures use generated inputs (a long-layout CSV, a wide-layout workbook, a pasted chat),
so they measure the readers, not the sample data. The interview figures run the offline heuristic
over the bundled interview transcripts: how many field records are filled, how many are null
placeholders, and how many wait for review.
"""

from __future__ import annotations

import csv
import io
import tempfile
import time
from collections import Counter
from pathlib import Path

import openpyxl

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.readers import read_file, read_inbox
from extraction_assets.lib.settings import DEFAULT_PROMPTS, SAMPLE_INBOX

Figures = dict[str, float | int | str]
QUESTIONS = [f"Question {n}?" for n in range(1, 7)]
PULSES = 500
CHAT_MESSAGES = 5000
INTERVIEW_ROUNDS = 20


def _timed_read(folder: Path, name: str, data: bytes) -> tuple[list, float]:
    path = folder / name
    path.write_bytes(data)
    started = time.perf_counter()
    records = read_file(path, "bench", f"bench/{name}")
    return records, time.perf_counter() - started


def _long_csv() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";")
    writer.writerow(["Member", "Date", "Question", "Answer"])
    for n in range(PULSES):
        for q in QUESTIONS:
            writer.writerow([f"member {n}", "2026-11-30", q, f"I will send report {n} by Friday; delay risk {n}."])
    return out.getvalue().encode("utf-8")


def _wide_workbook() -> bytes:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Timestamp", "Name", *QUESTIONS])
    for n in range(PULSES):
        sheet.append([f"2026-11-30 08:{n % 60:02d}:00", f"member {n}", *[f"Answer {n}-{q}" for q in range(6)]])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def _pasted_chat() -> bytes:
    lines = [f"[{n // 60 % 24:02d}:{n % 60:02d}] Member {n % 7}: message number {n}" for n in range(CHAT_MESSAGES)]
    return ("Group chat\n" + "\n".join(lines) + "\n").encode("utf-8")


def _interview_figures() -> Figures:
    schema = load_schema(DEFAULT_PROMPTS, "interview@v1")
    docs = [d for d in read_inbox(SAMPLE_INBOX) if isinstance(d, Document) and d.kind in schema.document_kinds]
    scrubbed = [scrub_document(d) for d in docs]
    extractor = HeuristicExtractor()
    started = time.perf_counter()
    for _ in range(INTERVIEW_ROUNDS):
        outcomes = [extract_document(d, s, schema, extractor) for d, s in zip(docs, scrubbed, strict=True)]
    elapsed = time.perf_counter() - started
    items = [i for o in outcomes for i in o.items]
    reasons = Counter(r.split(":")[0] for i in items for r in i.review_reasons)
    return {
        "interview_docs": len(docs),
        "interview_extract_docs_per_s": round(len(docs) * INTERVIEW_ROUNDS / elapsed, 1),
        "interview_records": len(items),
        "interview_values_filled": sum(1 for i in items if i.evidence),
        "interview_null_placeholders": sum(1 for i in items if not i.evidence),
        "interview_needs_review": sum(1 for i in items if i.status == "needs_review"),
        "interview_contradictions": reasons["contradiction"],
        "interview_denials": reasons["denied_by_speaker"],
    }


def bench_chaos_import() -> Figures:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        csv_docs, csv_s = _timed_read(folder, "long.csv", _long_csv())
        xlsx_docs, xlsx_s = _timed_read(folder, "wide.xlsx", _wide_workbook())
        (chat,), chat_s = _timed_read(folder, "paste.txt", _pasted_chat())
    assert all(isinstance(d, Document) for d in [*csv_docs, *xlsx_docs, chat])
    return {
        "csv_pulses_per_s": round(len(csv_docs) / csv_s, 1),
        "xlsx_pulses_per_s": round(len(xlsx_docs) / xlsx_s, 1),
        "pasted_chat_messages_per_s": round(len(chat.turns) / chat_s, 1),
        **_interview_figures(),
        "measured_on": (
            f"generated: a {PULSES}-pulse long-layout CSV ({PULSES * 6} rows), a {PULSES}-row wide workbook, "
            f"a {CHAT_MESSAGES}-message pasted chat; interview figures: the bundled transcripts under interview@v1, "
            f"offline heuristic, {INTERVIEW_ROUNDS} rounds for the rate"
        ),
    }
