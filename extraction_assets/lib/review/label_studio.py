"""Label Studio round trip: the review queue as tasks, and annotators' decisions back as corrections.

Export: one task per item; `data.text` is the raw document, the item's evidence are `predictions`
(labels over text spans, named by item type), and `label_config` is the labeling interface to paste
into the project. Label Studio counts offsets in UTF-16 code units (JavaScript strings), the warehouse
in code points; spans are converted on the way out. Import reads Label Studio's JSON export and
applies each task's latest annotation (decision, corrected value, normalized value, note) through
`corrections.apply_change`, so the same rules, tenant scope and audit apply. Evidence is never changed:
a relabelled span is reported, not applied.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from extraction_assets.lib.review.corrections import Action, Change, NothingToChange, ReviewError, apply_change
from extraction_assets.lib.review.queries import item_detail, list_queue

if TYPE_CHECKING:  # duckdb loads when a connection opens, not with the code location; schemas (YAML) when read
    import duckdb

    from extraction_assets.lib.schemas import SchemaVersion

TEXT = "text"
EVIDENCE = "evidence"
DECISION = "decision"
VALUE = "value"
NORMALIZED = "normalized_value"
NOTE = "note"
DECISIONS = ("accepted", "rejected", "needs_review")


class ImportReport(BaseModel):
    applied: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    skipped: list[tuple[str, str]] = Field(default_factory=list)  # (item or task, why)
    failed: list[tuple[str, str]] = Field(default_factory=list)
    notices: list[tuple[str, str]] = Field(default_factory=list)  # applied, but something was not


def utf16_offset(text: str, index: int) -> int:
    """A code-point index as the UTF-16 offset Label Studio uses."""
    return len(text[:index].encode("utf-16-le")) // 2


def label_config(item_types: Iterable[str]) -> str:
    """The labeling interface for exported tasks: the text, evidence labels, a decision and corrections."""
    labels = "\n".join(f'    <Label value="{escape(t)}"/>' for t in sorted(set(item_types)))
    choices = "\n".join(f'    <Choice value="{escape(d)}"/>' for d in DECISIONS)
    return f"""<View>
  <Header value="$item_type: $title"/>
  <Header value="$reasons" size="6"/>
  <Text name="{TEXT}" value="$text"/>
  <Labels name="{EVIDENCE}" toName="{TEXT}">
{labels}
  </Labels>
  <Choices name="{DECISION}" toName="{TEXT}" choice="single" showInline="true">
{choices}
  </Choices>
  <TextArea name="{VALUE}" toName="{TEXT}" maxSubmissions="1" editable="true"
            placeholder="corrected value as JSON (empty keeps $value)"/>
  <TextArea name="{NORMALIZED}" toName="{TEXT}" maxSubmissions="1" editable="true"
            placeholder="normalized value as JSON (optional)"/>
  <TextArea name="{NOTE}" toName="{TEXT}" maxSubmissions="1" editable="true" placeholder="note (optional)"/>
</View>
"""


def export_tasks(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    schema_version: str | None = None,
    status: str = "needs_review",
) -> list[dict[str, Any]]:
    """The tenant's queue (or items of `status`) as Label Studio tasks with the evidence as predictions."""
    tasks = []
    for row in list_queue(con, tenant_id, schema_version=schema_version, status=status, limit=1_000_000):
        detail = item_detail(con, tenant_id, row.item_id, context_chars=0)
        text = "".join(segment.text for segment in detail.segments)
        item = detail.item
        result = [
            {
                "id": ev.evidence_id[:10],
                "from_name": EVIDENCE,
                "to_name": TEXT,
                "type": "labels",
                "value": {
                    "start": utf16_offset(text, ev.char_start),
                    "end": utf16_offset(text, ev.char_end),
                    "text": ev.quote,
                    "labels": [item["item_type"]],
                },
            }
            for ev in detail.evidence
        ]
        result.append(
            {
                "id": "status",
                "from_name": DECISION,
                "to_name": TEXT,
                "type": "choices",
                "value": {"choices": [item["status"]]},
            }
        )
        tasks.append(
            {
                "data": {
                    TEXT: text,
                    "item_id": item["item_id"],
                    "schema_version": item["schema_version"],
                    "item_type": item["item_type"],
                    "title": item["title"],
                    "status": item["status"],
                    "reasons": "; ".join(item["review_reasons"]) or "-",
                    "value": json.dumps(item["value"], ensure_ascii=False),
                    "source_uri": detail.source_uri,
                },
                "predictions": [
                    {
                        "model_version": item["extractor_version"],
                        "score": item["confidence"],
                        "result": result,
                    }
                ],
            }
        )
    return tasks


def _latest_annotation(task: Mapping[str, Any]) -> Mapping[str, Any] | None:
    kept = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
    return max(kept, key=lambda a: str(a.get("updated_at") or a.get("created_at") or ""), default=None)


def _text_of(result: Mapping[str, Any]) -> str:
    text = result.get("value", {}).get("text") or [""]
    return "\n".join(text).strip() if isinstance(text, list) else str(text).strip()


def _json_field(name: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ReviewError(f"{name} is not valid JSON ({exc.msg}): {raw[:80]!r}") from exc


def change_from_annotation(annotation: Mapping[str, Any]) -> tuple[Change, Action, str | None, list[str]]:
    """The correction an annotation asks for, its action, its note, and the span labels it carries."""
    fields: dict[str, Any] = {}
    note = None
    labels: list[str] = []
    for result in annotation.get("result") or []:
        name = result.get("from_name")
        if name == DECISION:
            choices = result.get("value", {}).get("choices") or []
            if choices:
                fields["status"] = choices[0]
        elif name in (VALUE, NORMALIZED) and _text_of(result):
            fields[name] = _json_field(name, _text_of(result))
        elif name == NOTE:
            note = _text_of(result) or None
        elif name == EVIDENCE:
            labels += result.get("value", {}).get("labels") or []
    change = Change(**fields)
    only_status = set(fields) == {"status"}
    action: Action = "correct"
    if only_status and change.status in ("accepted", "rejected"):
        action = "accept" if change.status == "accepted" else "reject"
    return change, action, note, labels


def import_annotations(
    con: duckdb.DuckDBPyConnection,
    tenant_id: str,
    tasks: Sequence[Mapping[str, Any]],
    actor: str,
    schemas: Mapping[str, SchemaVersion] | None = None,
) -> ImportReport:
    """Apply each task's latest annotation as a correction; a bad task is reported and the rest go on."""
    report = ImportReport()
    for number, task in enumerate(tasks, start=1):
        item_id = str((task.get("data") or {}).get("item_id") or "")
        if not item_id:
            report.failed.append((f"task {number}", "no data.item_id: not a task exported by extraction-assets"))
            continue
        annotation = _latest_annotation(task)
        if annotation is None:
            report.skipped.append((item_id, "no annotation"))
            continue
        try:
            change, action, note, labels = change_from_annotation(annotation)
            if not change.model_fields_set:
                report.skipped.append((item_id, "the annotation holds no decision and no corrected value"))
                continue
            who = annotation.get("completed_by")
            source = f"Label Studio annotation {annotation.get('id', '?')}" + (f" by {who}" if who else "")
            apply_change(
                con, tenant_id, item_id, change, actor, action, f"{source}: {note}" if note else source, schemas
            )
        except NothingToChange:
            report.unchanged.append(item_id)
            continue
        except ValueError as exc:  # a ReviewError, or a decision that is not a status
            report.failed.append((item_id, str(exc)))
            continue
        report.applied.append(item_id)
        relabelled = sorted(set(labels) - {str(task["data"].get("item_type"))})
        if relabelled:
            report.notices.append((item_id, f"span labels {relabelled} not applied: evidence is never changed"))
    return report
