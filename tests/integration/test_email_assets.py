"""End to end: email@v1 and a user-defined schema through the real assets into a temporary DuckDB."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.defs.resources import PipelineResource
from extraction_assets.defs.sensors import schema_version_sensor
from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings
from extraction_assets.lib.warehouse import invariants, open_warehouse, rows_as_dicts
from extraction_assets.runner import run_pipeline
from tests.conftest import covered
from tests.dagster_results import run_requests
from tests.one_row import one_row

EMAIL = "email@v1"
INVOICE = """Message-ID: <inv-7781@northwind.test>
Date: Fri, 27 Nov 2026 11:20:00 -0600
From: Northwind Packaging Billing <billing@northwind.test>
To: Dana Whitfield <dana@acme.test>
Subject: Invoice INV-2026-0117 for PO NW-55120

Please find attached invoice INV-2026-0117. The total amount due is $4,210.00.
Payment is due by 2026-12-11.

> Dana wrote: our budget for the next order is $9,000.00.

--
Northwind Packaging | +1 312 555 0199
"""
INQUIRY = """Message-ID: <req-5521@brightline.test>
Date: Mon, 30 Nov 2026 09:12:00 -0800
From: Jordan Reyes <jordan.reyes@brightline.test>
To: Sam Patel <sam@acme.test>
Subject: Request for quote: lobby lighting

We are interested in your retrofit service. Could you send us a quote for 40 pendants by Friday?
You can reach me at +1 510 555 0177.
"""
LUNCH = """Message-ID: <lunch@acme.test>
Date: Mon, 30 Nov 2026 12:00:00 -0800
From: Priya Nair <priya@acme.test>
Subject: Lunch?

Anyone up for tacos at noon?
"""


def mbox(*messages: str) -> str:
    return "".join(f"From MAILER-DAEMON Mon Nov 30 12:00:00 2026\n{m}\n" for m in messages)


@pytest.fixture
def mail_settings(tmp_path: Path) -> Settings:
    inbox = tmp_path / "inbox"
    (inbox / "acme" / "email").mkdir(parents=True)
    (inbox / "acme" / "email" / "2026-11-27-invoice.eml").write_text(INVOICE, encoding="utf-8")
    (inbox / "acme" / "email" / "2026-11-30-lunch.eml").write_text(LUNCH, encoding="utf-8")
    # the same invoice delivered again to another mailbox (same Message-ID, another To: another document)
    redelivered = INVOICE.replace("To: Dana Whitfield <dana@acme.test>", "To: Accounts <ap@acme.test>")
    (inbox / "acme" / "mailbox").mkdir()
    (inbox / "acme" / "mailbox" / "shared.mbox").write_text(mbox(INQUIRY, redelivered), encoding="utf-8")
    return Settings(warehouse=tmp_path / "w.duckdb", inbox=inbox, prompts_dir=DEFAULT_PROMPTS)


def _records(settings: Settings) -> list[dict]:
    with open_warehouse(settings.warehouse) as con:
        return rows_as_dicts(
            con,
            """SELECT i.item_id, i.item_type, i.value, i.status, i.confidence, r.source_uri
               FROM extracted_items i JOIN raw_documents r USING (doc_id)
               WHERE i.schema_version = ? ORDER BY i.item_type""",
            [EMAIL],
        )


def test_email_records_are_upserted_by_message_id(mail_settings: Settings) -> None:
    results = run_pipeline(mail_settings, schema_keys=[EMAIL], instance=dg.DagsterInstance.ephemeral())
    assert all(r.success and not r.failed_checks for r in results), results
    with open_warehouse(mail_settings.warehouse) as con:
        docs = dict(con.execute("SELECT source_uri, kind FROM raw_documents").fetchall())
        processed = one_row(
            con.execute(
                "SELECT count(*) FROM extraction_status WHERE schema_version = ? AND status = 'processed'", [EMAIL]
            )
        )[0]
        assert invariants.items_without_evidence(con, [EMAIL]) == {}
        assert invariants.quote_mismatches(con, [EMAIL]) == {}
        quotes = rows_as_dicts(
            con,
            """SELECT e.item_id, e.quote, e.turn_id, e.char_start, e.char_end, r.text FROM evidence e
               JOIN raw_documents r USING (doc_id) WHERE e.schema_version = ?""",
            [EMAIL],
        )
    assert docs == {
        "acme/email/2026-11-27-invoice.eml": "email",
        "acme/email/2026-11-30-lunch.eml": "email",
        "acme/mailbox/shared.mbox#1": "email",
        "acme/mailbox/shared.mbox#2": "email",
    }
    assert processed == 4  # the lunch e-mail matches no module and is still processed
    records = _records(mail_settings)
    assert [r["item_type"] for r in records] == ["crm", "finance"]  # two copies of the invoice, one record
    finance = json.loads(records[1]["value"])
    assert (finance["Amount"], finance["Currency"], finance["Reference"]) == (4210.0, "USD", "INV-2026-0117")
    assert records[1]["source_uri"] in ("acme/email/2026-11-27-invoice.eml", "acme/mailbox/shared.mbox#2")
    crm = json.loads(records[0]["value"])
    assert crm["Contact_Email"] == "[EMAIL_1]"
    assert "jordan.reyes@brightline.test" in {q["quote"] for q in quotes}  # masked value, raw evidence
    for quote in quotes:
        assert quote["text"][quote["char_start"] : quote["char_end"]] == quote["quote"]
        assert "9,000" not in quote["quote"] and "555 0199" not in quote["quote"]  # quoted reply, signature

    # a re-run changes nothing; re-extracting every copy still keeps one record per message and module
    results = run_pipeline(mail_settings, schema_keys=[EMAIL], instance=dg.DagsterInstance.ephemeral())
    assert _records(mail_settings) == records
    with open_warehouse(mail_settings.warehouse) as con:
        con.execute("UPDATE extraction_status SET extractor_version = 'older-version'")
    run_pipeline(mail_settings, schema_keys=[EMAIL], instance=dg.DagsterInstance.ephemeral())
    assert [(r["item_id"], r["item_type"]) for r in _records(mail_settings)] == [
        (r["item_id"], r["item_type"]) for r in records
    ]


NEW_SCHEMA = """---
schema: warranty_claim
version: v1
shape: fields
orchestration: model_first
heuristic: generic
document_kinds: [email, text]
fields:
  - {name: claim_amount, type: number, description: what the customer claims}
  - {name: purchase_date, type: date}
  - {name: defect, type: enum, enum_options: [cracked, flicker, dead], required: true}
  - {name: contact, type: string}
options:
  generic:
    when: [warranty]
    fields:
      claim_amount: {find: amount, near: [claim, refund]}
      purchase_date: {find: date, near: [bought, purchased], only_near: true}
      contact: {find: email}
---
Extract a warranty claim.
"""


def test_a_new_prompt_file_is_a_partition_extracted_offline(tmp_path: Path) -> None:
    prompts = tmp_path / "prompts"
    (prompts / "warranty_claim").mkdir(parents=True)
    (prompts / "warranty_claim" / "v1.md").write_text(NEW_SCHEMA, encoding="utf-8")
    inbox = tmp_path / "inbox" / "acme"
    inbox.mkdir(parents=True)
    (inbox / "claim.txt").write_text(
        "Warranty claim: the panel we purchased on 2026-10-02 started to flicker.\n"
        "Please refund $220.00 to ops@harbor.test.\n",
        encoding="utf-8",
    )
    (inbox / "other.txt").write_text("Team lunch moved to Friday.\n", encoding="utf-8")
    settings = Settings(warehouse=tmp_path / "w.duckdb", inbox=tmp_path / "inbox", prompts_dir=prompts)

    instance = dg.DagsterInstance.ephemeral()
    pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(prompts))
    sensed = schema_version_sensor(dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline}))
    assert [covered(r) for r in run_requests(sensed)] == [("warranty_claim@v1", "warranty_claim@v1")]

    results = run_pipeline(settings, schema_keys=["warranty_claim@v1"], instance=instance)
    assert all(r.success and not r.failed_checks for r in results), results
    with open_warehouse(settings.warehouse) as con:
        rows = rows_as_dicts(
            con,
            """SELECT i.item_type, i.value, i.status, r.source_uri,
                      (SELECT count(*) FROM evidence e WHERE e.item_id = i.item_id) AS evidence
               FROM extracted_items i JOIN raw_documents r USING (doc_id) ORDER BY r.source_uri, i.item_type""",
        )
    by_field = {(r["source_uri"], r["item_type"]): r for r in rows}
    claim = {k[1]: json.loads(v["value"])["value"] for k, v in by_field.items() if k[0] == "acme/claim.txt"}
    assert claim == {"claim_amount": 220.0, "purchase_date": "2026-10-02", "defect": "flicker", "contact": "[EMAIL_1]"}
    assert all(r["evidence"] >= 1 for r in rows if r["source_uri"] == "acme/claim.txt")
    # the schema's `when` phrases route: the document they do not take is not read at all (no placeholder either)
    assert not [r for r in rows if r["source_uri"] == "acme/other.txt"]
    with open_warehouse(settings.warehouse) as con:
        decisions = rows_as_dicts(
            con,
            """SELECT r.source_uri, a.taken, a.reason FROM document_applicability a JOIN raw_documents r USING (doc_id)
               ORDER BY 1""",
        )
    assert decisions == [
        {"source_uri": "acme/claim.txt", "taken": True, "reason": "gate, gate passed"},
        {"source_uri": "acme/other.txt", "taken": False, "reason": "gate, gate failed"},
    ]
