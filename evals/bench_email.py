"""E-mail bench: email@v1 over the labelled Enron messages, read the way the inbox reads a mailbox.

Every record's raw message is written into one temporary `.mbox` file (body lines starting with
"From " escaped, as mbox writers do), read back by the inbox reader, scrubbed and extracted with the
offline `email` pack. The figures say whether every message parses, how the messages are routed
(records per module, messages with none) and whether every record is grounded. The data file is
`EXTRACTION_EMAIL_BENCH_DATA`, default `../shared/evalsets/enron_categories/dev.jsonl` beside the
project; without it the group reports that it was skipped.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path

from extraction_assets.lib.extraction import HeuristicExtractor, extract_document
from extraction_assets.lib.models import Document
from extraction_assets.lib.pii import scrub_document
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.readers import read_file
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PROJECT_DIR

Figures = dict[str, float | int | str]
DATA_ENV = "EXTRACTION_EMAIL_BENCH_DATA"
DEFAULT_DATA = PROJECT_DIR.parent / "shared" / "evalsets" / "enron_categories" / "dev.jsonl"
SCHEMA = "email@v1"


def _mbox(texts: list[str]) -> str:
    """Messages in mboxo form: a "From " separator line each, "From " body lines escaped with ">"."""
    out = []
    for text in texts:
        lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
        escaped = "\n".join(">" + line if line.startswith("From ") else line for line in lines)
        out.append(f"From MAILER-DAEMON Mon Jan  1 00:00:00 2001\n{escaped}\n\n")
    return "".join(out)


def bench_email() -> Figures:
    data = Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
    if not data.exists():
        return {"skipped": 1, "measured_on": f"no data file at {data}"}
    texts = [json.loads(line)["text"] for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    schema = load_schema(DEFAULT_PROMPTS, SCHEMA)
    extractor = HeuristicExtractor()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.mbox"
        path.write_text(_mbox(texts), encoding="utf-8")
        started = time.perf_counter()
        read = read_file(path, "bench", "bench/bench.mbox")
    docs = [r for r in read if isinstance(r, Document)]
    modules: Counter[str] = Counter()
    without_record = without_evidence = mismatches = dropped = failed = 0
    for doc in docs:
        outcome = extract_document(doc, scrub_document(doc), schema, extractor)
        failed += outcome.status != "processed"
        dropped += outcome.dropped
        without_record += not outcome.items
        for item in outcome.items:
            modules[item.item_type] += 1
            without_evidence += not item.evidence
            mismatches += sum(doc.text[e.char_start : e.char_end] != e.quote for e in item.evidence)
    seconds = time.perf_counter() - started
    return {
        "messages": len(texts),
        "documents_read": len(docs),
        "read_failures": len(read) - len(docs),
        "extraction_failures": failed,
        **{f"records_{module}": modules[module] for module in ("finance", "crm", "intel", "promotions")},
        "messages_without_record": without_record,
        "records_without_evidence": without_evidence,
        "quote_mismatches": mismatches,
        "dropped_ungrounded": dropped,
        "messages_per_s": round(len(docs) / seconds, 1),
        "measured_on": f"{data.parent.name}/{data.name}: {len(texts)} messages as one mbox, offline email pack",
    }
