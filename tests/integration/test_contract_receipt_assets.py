"""End to end: contract@v1 and receipt@v1 materialized from the sample inbox into a temporary DuckDB."""

from __future__ import annotations

import json

import dagster as dg

from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import open_warehouse, rows_as_dicts
from extraction_assets.runner import run_pipeline

CONTRACTS = "minsk-legal/contracts/"
RU_SUPPLY = "minsk-legal/dogovory/2026-01-15-dogovor-postavki.txt"
PDF = "minsk-legal/contracts/2026-03-03-dogovor-uslug.pdf"
RECEIPT = "minsk-legal/expenses/2026-02-18-stationery-receipt.txt"


def _routing(settings: Settings) -> dict[str, dict]:
    with open_warehouse(settings.warehouse) as con:
        rows = rows_as_dicts(
            con,
            """SELECT r.source_uri, d.outcome, d.flags, d.weighted_confidence, d.routed_at
               FROM document_routing d JOIN raw_documents r USING (doc_id) WHERE d.schema_version = 'contract@v1'""",
        )
    return {row.pop("source_uri"): row for row in rows}


def test_contracts_are_routed_and_receipts_read(settings: Settings) -> None:
    results = run_pipeline(settings, schema_keys=["contract@v1", "receipt@v1"], instance=dg.DagsterInstance.ephemeral())
    assert all(r.success for r in results), results
    assert [r.failed_checks for r in results] == [[] for _ in results]

    routing = _routing(settings)
    step = next(r for r in results if r.name == "extract contract@v1")
    assert step.metadata["extracted_items"]["routing_outcomes"] == {"deep_analysis": 2, "manual_review": 2}
    assert set(routing) == {
        RU_SUPPLY,
        PDF,
        "minsk-legal/dogovory/dogovor-arendy-skan.txt",
        "minsk-legal/contracts/2026-03-02-software-license.txt",
    }  # only contracts are routed: notes, pulses and e-mails of the other tenants are not
    assert routing[RU_SUPPLY]["outcome"] == "deep_analysis"
    assert json.loads(routing[RU_SUPPLY]["flags"]) == ["penalty_clause", "arbitration_clause"]
    assert routing[PDF]["outcome"] == "deep_analysis"
    assert {r["outcome"] for uri, r in routing.items() if uri.startswith(CONTRACTS) and uri != PDF} == {"manual_review"}

    with open_warehouse(settings.warehouse) as con:
        items = rows_as_dicts(
            con,
            """SELECT r.source_uri, i.schema_version, i.item_type, i.value, e.quote, e.char_start, e.char_end, r.text
               FROM extracted_items i JOIN evidence e USING (item_id) JOIN raw_documents r ON r.doc_id = i.doc_id
               WHERE i.schema_version IN ('contract@v1', 'receipt@v1')""",
        )
    for row in items:
        assert row["text"][row["char_start"] : row["char_end"]] == row["quote"]
    values = {(r["source_uri"], r["item_type"]): json.loads(r["value"])["value"] for r in items}
    assert values[(PDF, "party_a")] == "Частное унитарное предприятие «ЗападИнфоСервис»"
    assert values[(PDF, "total_amount")] == 36000.0
    assert values[(RU_SUPPLY, "currency")] == "BYN"
    assert values[(RECEIPT, "total")] == 49.5
    assert {r["source_uri"] for r in items if r["schema_version"] == "receipt@v1"} == {RECEIPT}
    with open_warehouse(settings.warehouse) as con:
        scan = con.execute(
            "SELECT reason FROM dead_letters WHERE stage = 'ingest' AND source_uri = ?",
            ["minsk-legal/scans/2026-03-05-skan-dogovora.pdf"],
        ).fetchall()
    assert len(scan) == 1 and "no text layer" in scan[0][0]

    receipts = next(r for r in results if r.name == "extract receipt@v1").metadata["extracted_items"]
    assert str(receipts["confidence"]).startswith("calibrated: items under probability")
    share, capture, precision = (
        receipts[k] for k in ("queue_share", "expected_error_capture", "expected_precision_unqueued")
    )
    assert isinstance(share, float | int) and 0 <= share <= 1 and receipts["calibrated_items"] == 4
    assert isinstance(capture, float | int) and 0 <= capture <= 1
    assert isinstance(precision, float | int) and 0 < precision < 1
    at_fit = receipts["review_figures_at_fit"]
    assert isinstance(at_fit, str) and "error capture" in at_fit and "cross-validated" in at_fit and "ECE" in at_fit
    with open_warehouse(settings.warehouse) as con:
        probabilities = dict(
            con.execute(
                """SELECT item_type, probability_correct FROM extracted_items WHERE schema_version = 'contract@v1'
                   AND doc_id IN (SELECT doc_id FROM raw_documents WHERE source_uri = ?)""",
                [PDF],
            ).fetchall()
        )
    assert probabilities["contract_type"] is None  # no labelled data judges it: today's confidence
    assert 0 < probabilities["party_a"] < 1

    again = run_pipeline(settings, schema_keys=["contract@v1"], instance=dg.DagsterInstance.ephemeral())
    assert all(r.success for r in again)
    assert _routing(settings) == routing  # nothing re-extracted, nothing re-routed
