"""A mixed inbox of public documents for the throughput bench, built deterministically from the eval sets.

The `dev.jsonl` files of the eval data (`EXTRACTION_EVALSETS`, default `../shared/evalsets` beside the
project) become files the inbox readers take: Enron messages as `.eml` under `mail/`, SROIE receipts
and CUAD contracts as `.txt` under `receipts/` and `contracts/`, QMSum meetings as transcript JSON
under `meetings/`. The records are interleaved, each source spread evenly over the whole order, so that any
prefix (the "+1% new documents" of the bench) holds every kind in its share of the set, and the set is
repeated across tenant folders (`tenant-1`, `tenant-2`, ...): the same text in another tenant is another
document. Document `i` always lands in the same file with the same content, so the inbox of `n + k`
documents is the inbox of `n` documents plus `k` new ones.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from extraction_assets.lib.settings import PROJECT_DIR

EVALSETS_ENV = "EXTRACTION_EVALSETS"
DEFAULT_EVALSETS = PROJECT_DIR.parent / "shared" / "evalsets"
# Which eval set becomes which inbox folder, and the file suffix its reader takes.
SOURCES = (("enron_categories", "mail", ".eml"), ("sroie", "receipts", ".txt"), ("cuad", "contracts", ".txt"))
MEETINGS = ("qmsum_meetings", "meetings", ".json")
_SPEAKER_LINE = re.compile(r"^([^:\n]{1,60}): (.*)$")


@dataclass(frozen=True)
class InboxFile:
    """One document of the bench inbox: where it goes below its tenant and what it holds."""

    folder: str
    name: str
    content: bytes


def evalsets_dir() -> Path:
    return Path(os.environ.get(EVALSETS_ENV) or DEFAULT_EVALSETS)


def _records(data: Path, dataset: str) -> list[dict[str, object]]:
    lines = (data / dataset / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def meeting_transcript(record_id: str, text: str) -> dict[str, object]:
    """A QMSum meeting ("Speaker: words" per line) as transcript JSON; a line without a speaker continues the turn."""
    turns: list[dict[str, str]] = []
    for line in text.splitlines():
        match = _SPEAKER_LINE.match(line)
        if match:
            turns.append({"speaker": match[1].strip(), "text": match[2]})
        elif line.strip() and turns:
            turns[-1]["text"] += " " + line.strip()
    return {"title": record_id, "turns": turns}


def _safe_name(record_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", record_id)[:80]


def source_files(data: Path | None = None) -> list[InboxFile]:
    """Every eval record as an inbox file, the sources interleaved so that any prefix is a sample of the set."""
    data = data or evalsets_dir()
    per_source: list[list[InboxFile]] = []
    for dataset, folder, suffix in SOURCES:
        per_source.append(
            [
                InboxFile(folder, _safe_name(str(r["id"])) + suffix, str(r["text"]).encode("utf-8"))
                for r in _records(data, dataset)
            ]
        )
    dataset, folder, suffix = MEETINGS
    per_source.append(
        [
            InboxFile(
                folder,
                _safe_name(str(r["id"])) + suffix,
                json.dumps(meeting_transcript(str(r["id"]), str(r["text"])), ensure_ascii=False).encode("utf-8"),
            )
            for r in _records(data, dataset)
        ]
    )
    return _spread(per_source)


def _spread(groups: list[list[InboxFile]]) -> list[InboxFile]:
    """The groups in one order where the `i`-th of `n` files of a group stands at `(i + 0.5) / n` of the way (ties
    in group order): a prefix of any length holds each group in its share of the whole, give or take one file. A
    round-robin would not: it puts the 50 contracts of a 700-record set among the first 200 records."""
    placed = [((i + 0.5) / len(group), g, f) for g, group in enumerate(groups) for i, f in enumerate(group)]
    return [f for _, _, f in sorted(placed, key=lambda p: (p[0], p[1]))]


def build_inbox(target: Path, documents: int, files: list[InboxFile] | None = None) -> int:
    """Write documents 0 .. `documents`-1 under `target` (files already there are left as they are)."""
    files = files if files is not None else source_files()
    for i in range(documents):
        tenant, index = divmod(i, len(files))
        file = files[index]
        path = target / f"tenant-{tenant + 1}" / file.folder / f"{index:04d}-{file.name}"
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(file.content)
    return documents
