"""Routing through the real assets: decisions stored once, a changed rule re-routes its own schema only, and the
documents a schema no longer reads lose their machine items but keep a person's."""

from __future__ import annotations

import dagster as dg

from extraction_assets.lib.review import corrections
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts, warehouse_summary
from extraction_assets.runner import run_pipeline
from tests.conftest import with_front_matter
from tests.one_row import one_row

RECEIPT, PULSE = "receipt@v1", "pulse@v1"


def _decisions(settings: Settings, schema: str) -> dict[str, tuple[bool, object]]:
    with open_warehouse(settings.warehouse) as con:
        rows = con.execute(
            "SELECT doc_id, taken, decided_at FROM document_applicability WHERE schema_version = ?", [schema]
        ).fetchall()
    return {doc_id: (taken, decided_at) for doc_id, taken, decided_at in rows}


def _items(settings: Settings, schema: str) -> list[dict]:
    with open_warehouse(settings.warehouse) as con:
        return rows_as_dicts(
            con,
            "SELECT item_id, doc_id, status, extracted_by FROM extracted_items WHERE schema_version = ? ORDER BY 1",
            [schema],
        )


def test_a_changed_rule_reroutes_its_schema_only_and_keeps_what_a_person_owns(settings: Settings) -> None:
    instance = dg.DagsterInstance.ephemeral()
    assert all(s.success for s in run_pipeline(settings, schema_keys=[RECEIPT, PULSE], instance=instance))
    receipts = _items(settings, RECEIPT)
    taken = {doc for doc, (is_taken, _) in _decisions(settings, RECEIPT).items() if is_taken}
    assert receipts and {i["doc_id"] for i in receipts} <= taken
    pulse_before = _decisions(settings, PULSE)
    with open_warehouse(settings.warehouse) as con:
        summary = warehouse_summary(con)
    by_schema = {row[0]: row[1:] for row in summary["by_schema"]}
    read, not_read, items, to_review, _, _ = by_schema[RECEIPT]
    assert (read, read + not_read, items) == (len(taken), len(_decisions(settings, RECEIPT)), len(receipts))
    assert to_review == sum(1 for i in receipts if i["status"] == "needs_review")
    with open_warehouse(settings.warehouse) as con:
        tenant = con.execute("SELECT tenant_id FROM extracted_items WHERE item_id = ?", [receipts[0]["item_id"]])
        corrections.accept(con, one_row(tenant)[0], receipts[0]["item_id"], "ana")

    # a run with nothing new routes nothing again
    assert all(s.success for s in run_pipeline(settings, schema_keys=[RECEIPT, PULSE], instance=instance))
    assert _decisions(settings, PULSE) == pulse_before

    prompt = settings.prompts_dir / "receipt" / "v1.md"
    original = prompt.read_text(encoding="utf-8")
    prompt.write_text(
        with_front_matter(original, 'applies_to:\n  paths: ["nowhere/*"]\n'), encoding="utf-8"
    )  # reads nothing
    assert all(s.success for s in run_pipeline(settings, schema_keys=[RECEIPT, PULSE], instance=instance))
    assert not any(is_taken for is_taken, _ in _decisions(settings, RECEIPT).values())
    kept = _items(settings, RECEIPT)
    assert [(i["item_id"], i["status"]) for i in kept] == [(receipts[0]["item_id"], "accepted")]
    assert _decisions(settings, PULSE) == pulse_before  # another schema's decisions were not touched
    with open_warehouse(settings.warehouse) as con:
        assert con.execute("SELECT count(*) FROM extraction_status WHERE schema_version = ?", [RECEIPT]).fetchone() == (
            0,
        )

    prompt.write_text(original, encoding="utf-8")  # back to the defaults: the receipt is read and extracted again
    assert all(s.success for s in run_pipeline(settings, schema_keys=[RECEIPT], instance=instance))
    assert {i["item_id"] for i in _items(settings, RECEIPT)} == {i["item_id"] for i in receipts}
