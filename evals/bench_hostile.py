"""Hostile-inbox bench: bombs, huge files, bad lines and links beside good documents, run end to end.

The inbox is built in a temporary folder: an XLSX decompression bomb, a text file over the size limit, a
5 MB single line, a 100,000-row CSV, a JSONL file with a 10,000-deep line and a 5,000-digit number between
good lines, many tiny rows within the size limit (an 8 MB CSV of 4 M one-character rows, a 1 M-row workbook),
links out of the tenant folder (a system file, another tenant, a loop) and a FIFO, beside a few good documents.
The offline `extraction-assets run` goes through it in a child process; the bench reports that process's peak RSS
(target: at most 1 GB), the dead letters by reason and the documents kept.
"""

from __future__ import annotations

import json
import os
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

from evals.bench_throughput import Figures, run_offline
from evals.hostile_files import tiny_rows

GOOD = {
    "acme/notes/standup.md": "- We will send the quote to Northwind by Friday.\n- Risk: the supplier is late.\n",
    "acme/pulses/lan.json": json.dumps(
        {"author": "Lan", "date": "2026-11-30", "answers": [{"question": "Blockers?", "answer": "Cash is short."}]}
    ),
    "other/notes/secret.md": "Other tenant's note: the margin is 31%.\n",
}


def build_hostile_inbox(root: Path) -> int:
    """The hostile inbox under `root`; returns how many files it holds."""
    for rel, text in GOOD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    bad = root / "acme" / "bad"
    bad.mkdir(parents=True)
    with zipfile.ZipFile(bad / "bomb.xlsx", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("xl/worksheets/sheet1.xml", b"\0" * (256 * 1024 * 1024))
    with (bad / "huge.txt").open("wb") as out:  # 50 MB of text, over the 8 MB default
        for _ in range(50):
            out.write(b"The supplier is late again. " * 37450)
    (bad / "one-line.txt").write_text("x" * (5 * 1024 * 1024), encoding="utf-8")
    rows = "\n".join(f"Lan,2026-11-{1 + i % 28:02d},Q{i % 6}?,answer {i}" for i in range(100_000))
    (bad / "rows.csv").write_text("member,date,question,answer\n" + rows + "\n", encoding="utf-8")
    good_line = json.dumps({"author": "Minh", "date": "2026-11-29", "answers": [{"question": "Q?", "answer": "ok"}]})
    lines = [good_line, "[" * 10_000 + "]" * 10_000, '{"answers": ' + "9" * 5_000 + "}", good_line]
    (bad / "mixed.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    tiny_rows(bad / "tiny-rows.csv", 4_000_000)  # each row costs memory beyond its one character
    tiny_rows(bad / "tiny-rows.xlsx", 1_000_000)
    (bad / "passwd.txt").symlink_to("/etc/passwd")
    (bad / "other-tenant.md").symlink_to(root / "other" / "notes" / "secret.md")
    (bad / "loop.txt").symlink_to(bad / "loop.txt")
    os.mkfifo(bad / "pipe.txt")
    return sum(1 for _ in root.rglob("*"))


def bench_hostile() -> Figures:
    import duckdb

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = build_hostile_inbox(root / "inbox")
        run = run_offline(root / "inbox", root / "w.duckdb")
        with duckdb.connect(str(root / "w.duckdb"), read_only=True) as con:
            reasons = Counter(
                reason.split(" (")[0].split(":")[0]
                for (reason,) in con.execute("SELECT reason FROM dead_letters").fetchall()
            )
            kept = con.execute("SELECT count(*) FROM raw_documents").fetchone()[0]  # type: ignore[index]
            leaked = con.execute(
                "SELECT count(*) FROM raw_documents "
                "WHERE text LIKE '%root:%' OR (tenant_id = 'acme' AND text LIKE '%margin is 31%')"
            ).fetchone()[0]  # type: ignore[index]
    figures: Figures = {
        "entries": files,
        "seconds": run.seconds,
        "peak_rss_mb": run.peak_rss_mb,
        "exit_code": run.exit_code,
        "documents_kept": int(kept),
        "documents_from_outside_the_tenant": int(leaked),
    }
    figures |= {f"dead_letters.{reason}": n for reason, n in sorted(reasons.items())}
    figures["measured_on"] = (
        "a built inbox: a 256 MB XLSX bomb, 50 MB text, 5 MB line, 100,000-row CSV, bad JSONL lines, an 8 MB CSV of "
        "4 M rows, a 1 M-row XLSX, links out (system file, other tenant, loop), a FIFO, and 3 good documents; offline "
        "`extraction-assets run` in a child"
    )
    return figures
