"""A small evaluation registry for the eval tests: a team chat set scored by pulse@v1 (a chat, not a meeting, which
the pulse pack abstains on), one whose file is absent, one for
a version without a prompt file, and a PII set scored by the scrubber alone."""

from __future__ import annotations

import json
from pathlib import Path

TEXT = (
    "Ann: Good morning everyone.\n"
    "Bob: The supplier delay is a serious risk for the launch.\n"
    "Ann: Please decide whether we approve the budget by Friday.\n"
    "Bob: Mail me at bob@example.com.\n"
)


def _span(fragment: str) -> dict[str, int]:
    start = TEXT.index(fragment)
    return {"start": start, "end": TEXT.index("\n", start)}


def write_registry(tmp_path: Path) -> Path:
    """The registry file under `tmp_path`, with its gold files."""
    meetings = tmp_path / "gold" / "standups.jsonl"
    meetings.parent.mkdir()
    items = [
        {"kinds": ["decision"], "evidence": [_span("Ann: Please decide")]},
        {"kinds": ["problem_or_risk"], "evidence": [_span("Bob: The supplier")]},
    ]
    records = [{"id": f"s{i}", "text": TEXT.replace("Friday", f"day {i}"), "gold": {"items": items}} for i in range(4)]
    meetings.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    start = TEXT.index("bob@")
    pii = tmp_path / "gold" / "pii.jsonl"
    entity = {"type": "EMAIL_ADDRESS", "start": start, "end": start + len("bob@example.com")}
    pii.write_text(json.dumps({"id": "p1", "text": TEXT, "gold": {"entities": [entity]}}) + "\n", encoding="utf-8")
    path = tmp_path / "registry.yaml"
    path.write_text(
        f"""datasets:
  standups:
    path: {meetings}
    schema_version: pulse@v1
    document_kind: chat
    turns: lines
    mode: evidence_turns
    items: items
    item_spans: evidence
    fields:
      decision: {{select: {{kinds: decision}}}}
      risk: {{select: {{kinds: problem_or_risk}}}}
  not_here:
    path: {tmp_path / "absent" / "dev.jsonl"}
    schema_version: pulse@v1
    fields:
      risk: {{gold: risk}}
  receipts:
    path: {meetings}
    schema_version: receiptz@v1
    fields:
      total: {{gold: total}}
  pii:
    path: {pii}
    schema_version: pii@v1
    mode: entity_spans
    items: entities
    fields:
      EMAIL: {{select: {{type: EMAIL_ADDRESS}}}}
""",
        encoding="utf-8",
    )
    return path
