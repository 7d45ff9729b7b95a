"""The scripted reviewer of the review benches: it decides each item of the bench inbox from the eval sets' gold.

A document of the bench inbox (`evals.bench_inbox`) is an eval record: its file is named after the record id, its
folder says which eval set. An item is judged by the registry entry of that set (`evals/registry.yaml`), with the
comparators the eval report uses:
- fields (receipts, contracts): a value the gold holds is accepted; a wrong one is corrected to the gold's value
  (as the field's type: an ISO date, a number, yes/no), or rejected where the gold has no value or the field is a
  set (the parties: which member is wrong is not the reviewer's guess);
- evidence turns (meetings): a decision or risk whose quote lies in the evidence of a gold item of its kind is
  accepted, any other rejected;
- a field the gold does not cover (an e-mail record, a contract's type, a meeting's commitment) is accepted: the
  gold does not contradict it, and the reviewer has no other source.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from evals.bench_inbox import MEETINGS, SOURCES, evalsets_dir
from extraction_assets.lib.evaluation.comparators import (
    is_truthy,
    parse_amount,
    parse_date,
    set_members,
    spans_overlap,
    values_match,
)
from extraction_assets.lib.evaluation.gold import GoldRecord, read_gold, resolve, spans_at
from extraction_assets.lib.evaluation.registry import (
    DEFAULT_ATTRIBUTE,
    Comparator,
    DatasetEntry,
    FieldMapping,
    load_registry,
)
from extraction_assets.lib.evaluation.scoring import Prediction

Action = Literal["accept", "reject", "correct"]
_FILE = re.compile(r"^\d{4}-(?P<name>.+)\.[a-z]+$")


@dataclass(frozen=True)
class Verdict:
    """What the scripted reviewer decides for one item; `judged`: whether the gold said anything about it."""

    action: Action
    judged: bool
    value: dict[str, Any] = field(default_factory=dict)  # a correction's fields

    @property
    def key(self) -> str:
        """Items with the same key get the same decision: one action on a group can take them together."""
        return f"{self.action}:{json.dumps(self.value, sort_keys=True, default=str)}"


ACCEPT_UNJUDGED = Verdict("accept", judged=False)


def _safe_name(record_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", record_id)[:80]


class GoldReviewer:
    """The gold of every eval set the bench inbox is built from, found by the inbox file a document came from."""

    def __init__(self, data: Path | None = None) -> None:
        data = data or evalsets_dir()
        registry = load_registry()
        self.by_folder: dict[str, tuple[DatasetEntry | None, dict[str, GoldRecord]]] = {}
        for dataset, folder, _ in (*SOURCES, MEETINGS):
            entry = registry.datasets.get(dataset)
            records = {
                _safe_name(r.id): r for r in read_gold(data / dataset / "dev.jsonl") if isinstance(r, GoldRecord)
            }
            self.by_folder[folder] = (entry, records)

    def record(self, source_uri: str) -> tuple[DatasetEntry | None, GoldRecord | None]:
        parts = source_uri.split("/")
        entry, records = self.by_folder.get(parts[-2], (None, {})) if len(parts) >= 2 else (None, {})
        match = _FILE.match(parts[-1])
        return entry, (records.get(match["name"]) if match else None)

    def verdict(self, source_uri: str, item_type: str, value: dict[str, Any], quote: str) -> Verdict:
        """The decision for an item of `item_type` with `value` and evidence `quote` in the document of `source_uri`."""
        entry, record = self.record(source_uri)
        if entry is None or record is None:
            return ACCEPT_UNJUDGED
        mappings = [m for m in entry.fields.values() if item_type in m.schema_fields]
        if not mappings:
            return ACCEPT_UNJUDGED
        if entry.mode == "evidence_turns":
            return _on_evidence(entry, record, mappings, quote)
        return _on_value(record, mappings[0], Prediction(field=item_type, value=value, quote=quote, confidence=0))


@dataclass(frozen=True)
class Missed:
    """A gold value the extractor has no item for: what a reviewer adds, with its raw-text span."""

    item_type: str
    value: dict[str, Any]
    span: tuple[int, int]


def missed_items(reviewer: GoldReviewer, source_uri: str, found: set[str]) -> list[Missed]:
    """The gold values of a document's single-value fields (a field of its own, with a span and a value the field can
    hold) whose field has no item with evidence among `found`: what the extractor missed."""
    entry, record = reviewer.record(source_uri)
    if entry is None or record is None or entry.mode != "fields":
        return []
    missed = []
    for name, mapping in entry.fields.items():
        if len(mapping.schema_fields) != 1 or mapping.schema_fields[0] in found or not mapping.spans:
            continue
        gold = [v for v in resolve(record.gold, mapping.gold or "") if v not in (None, "", [], {})]
        spans = spans_at(record.gold, mapping.spans, name)
        value = _gold_as_type(gold[0], mapping) if gold else None
        if value is None or not spans or mapping.compare == Comparator.BOOLEAN:
            continue
        missed.append(Missed(mapping.schema_fields[0], {mapping.attribute: value}, (spans[0].start, spans[0].end)))
    return missed


def _on_evidence(entry: DatasetEntry, record: GoldRecord, mappings: list[FieldMapping], quote: str) -> Verdict:
    start = record.text.find(quote.strip()) if quote.strip() else -1
    if start < 0:
        return Verdict("reject", judged=True)
    span = (start, start + len(quote.strip()))
    for mapping in mappings:
        for item in resolve(record.gold, entry.items or ""):
            kinds = item.get("kinds", []) if isinstance(item, dict) else []
            wanted = mapping.select.get("kinds")
            if wanted and wanted not in kinds:
                continue
            if any(spans_overlap(span, (g.start, g.end)) for g in spans_at(item, entry.item_spans)):
                return Verdict("accept", judged=True)
    return Verdict("reject", judged=True)


def _gold_as_type(gold: Any, mapping: FieldMapping) -> Any:
    """A gold value as the item's field stores it, or None when it does not read as one."""
    if mapping.compare == Comparator.DATE:
        parsed = parse_date(gold, mapping.day_first)
        return parsed.isoformat() if parsed else None
    if mapping.compare == Comparator.AMOUNT:
        amount = parse_amount(gold)
        return float(amount) if amount is not None else None
    if mapping.compare == Comparator.BOOLEAN:
        return is_truthy(gold, mapping.truthy)
    if mapping.compare in (Comparator.NORMALIZED, Comparator.EXACT):
        return " ".join(str(gold).split()) or None
    return None  # sets and spans: no single value to set


def _on_value(record: GoldRecord, mapping: FieldMapping, prediction: Prediction) -> Verdict:
    gold = [v for v in resolve(record.gold, mapping.gold or "") if v not in (None, "", [], {})]
    predicted = prediction.value_for(mapping.attribute)
    if mapping.compare == Comparator.SET:
        members = set(set_members(predicted, mapping.split))
        gold_members = {m for g in gold for m in set_members(g, mapping.split)}
        right = bool(members) and members <= gold_members
    elif mapping.compare == Comparator.BOOLEAN:
        said = predicted not in (None, False) and str(predicted).strip().lower() not in ("", "no", "false", "none", "0")
        right = said == any(is_truthy(g, mapping.truthy) for g in gold)
    else:
        right = any(values_match(predicted, g, mapping) for g in gold)
    if right:
        return Verdict("accept", judged=True)
    target = _gold_as_type(gold[0], mapping) if gold else None
    if mapping.compare == Comparator.BOOLEAN:
        target = any(is_truthy(g, mapping.truthy) for g in gold)
    if target is None:
        return Verdict("reject", judged=True)
    return Verdict("correct", judged=True, value={mapping.attribute or DEFAULT_ATTRIBUTE: target})
