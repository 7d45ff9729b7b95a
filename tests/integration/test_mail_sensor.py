"""Mail as it arrives: the mail sensor ticks as the daemon would, a message appears in a watched folder (and
an mbox grows) meanwhile, and each message is extracted exactly once, keyed by its Message-ID."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.mail_sensor import BATCH_TAG, TICK_SECONDS, mail_sensor
from extraction_assets.defs.resources import ExtractorResource, PipelineResource
from extraction_assets.lib.extraction import OrchestratedExtractor
from extraction_assets.lib.readers import MailCursor, mail_watch
from extraction_assets.lib.settings import DEFAULT_PROMPTS, Settings
from extraction_assets.lib.warehouse import open_warehouse
from tests.conftest import covered
from tests.stub_model import StubModel

EMAIL = "email@v1"
FIRST = """Message-ID: <inv-7781@northwind.test>
Date: Fri, 27 Nov 2026 11:20:00 -0600
From: Northwind Packaging Billing <billing@northwind.test>
To: Dana Whitfield <dana@acme.test>
Subject: Invoice INV-2026-0117 for PO NW-55120

Please find attached invoice INV-2026-0117. The total amount due is $4,210.00.
Payment is due by 2026-12-11.
"""
ARRIVING = """Message-ID: <inv-7790@northwind.test>
Date: Tue, 01 Dec 2026 08:05:00 -0600
From: Northwind Packaging Billing <billing@northwind.test>
To: Dana Whitfield <dana@acme.test>
Subject: Invoice INV-2026-0131 for PO NW-55188

Please find attached invoice INV-2026-0131. The total amount due is $1,980.00.
Payment is due by 2026-12-15.
"""
PROMO = """Message-ID: <promo-88@lumenhaus.test>
Date: Sat, 28 Nov 2026 07:00:00 +0000
From: Lumenhaus <news@lumenhaus.test>
To: Sam Patel <sam@acme.test>
Subject: Black Friday: 30% off all pendants

Use code BF30 for 30% off all pendants until 2026-12-02. Free shipping on every order.
"""
APPENDED = """Message-ID: <req-5521@brightline.test>
Date: Tue, 01 Dec 2026 09:12:00 -0800
From: Jordan Reyes <jordan.reyes@brightline.test>
To: Sam Patel <sam@acme.test>
Subject: Request for quote: lobby lighting

We are interested in your retrofit service. Could you send us a quote for 40 pendants by Friday?
"""


def _mbox_message(message: str) -> str:
    return f"From MAILER-DAEMON Tue Dec  1 12:00:00 2026\n{message}\n"


QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


class SensorLoop:
    """The daemon's part: tick the sensor with its cursor, launch what it asks for, one run after the other."""

    def __init__(self, settings: Settings, instance: dg.DagsterInstance) -> None:
        self.defs = build_definitions(settings)
        self.job = self.defs.resolve_job_def("live_mail_job")
        self.instance = instance
        self.pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(settings.prompts_dir))
        self.cursor: str | None = None
        self.requests: list[dg.RunRequest] = []
        self.after_run: Callable[[], None] = lambda: None  # called after each run (a test's stopwatch)

    def tick(self) -> list[dg.RunRequest]:
        context = dg.build_sensor_context(
            instance=self.instance, cursor=self.cursor, resources={"pipeline": self.pipeline}
        )
        result = mail_sensor(context)
        assert isinstance(result, dg.SensorResult)
        self.cursor = result.cursor
        for request in result.dynamic_partitions_requests or []:
            assert isinstance(request, dg.AddDynamicPartitionsRequest)
            self.instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
        for run in result.run_requests or []:
            tags = {**run.tags, "dagster/run_key": run.run_key or ""}
            self.job.execute_in_process(
                run_config=QUIET, instance=self.instance, partition_key=run.partition_key, tags=tags
            )
            self.after_run()
        self.requests += result.run_requests or []
        return list(result.run_requests or [])


def _records_of(settings: Settings, message_id: str) -> list[tuple[str, str, int]]:
    """The email@v1 records of one message: (module, document, extraction attempts)."""
    with open_warehouse(settings.warehouse, read_only=True) as con:
        return con.execute(
            """SELECT i.item_type, i.doc_id, e.attempts FROM extracted_items i
               JOIN raw_documents r USING (doc_id)
               JOIN extraction_status e ON e.doc_id = i.doc_id AND e.schema_version = i.schema_version
               WHERE i.schema_version = ? AND json_extract_string(r.metadata, '$.message_id') = ?
               ORDER BY 1""",
            [EMAIL, message_id],
        ).fetchall()


@pytest.fixture
def mail_settings(tmp_path: Path) -> Settings:
    mail = tmp_path / "inbox" / "acme" / "mail"
    mail.mkdir(parents=True)
    (mail / "2026-11-27-invoice.eml").write_text(FIRST, encoding="utf-8")
    (mail / "shared.mbox").write_text(_mbox_message(PROMO), encoding="utf-8")
    return Settings(warehouse=tmp_path / "warehouse.duckdb", inbox=tmp_path / "inbox", prompts_dir=DEFAULT_PROMPTS)


def test_a_message_arriving_while_the_sensor_runs_is_extracted_once(mail_settings: Settings) -> None:
    loop = SensorLoop(mail_settings, dg.DagsterInstance.ephemeral())
    first = loop.tick()  # the mail already there: one batch, one run per schema version that reads e-mail only
    assert [r.partition_key for r in first] == ["email@v1"]
    assert _records_of(mail_settings, "<inv-7781@northwind.test>")[0][0] == "finance"
    assert loop.tick() == []  # settled: nothing new

    arrival = mail_settings.inbox / "acme" / "mail" / "2026-12-01-invoice.eml"
    written_at: list[float] = []

    def deliver() -> None:
        arrival.write_text(ARRIVING, encoding="utf-8")
        written_at.append(time.perf_counter())

    stored_at: list[float] = []

    def stopwatch() -> None:
        if written_at and not stored_at and _records_of(mail_settings, "<inv-7790@northwind.test>"):
            stored_at.append(time.perf_counter())

    loop.after_run = stopwatch
    threading.Timer(0.5, deliver).start()
    for _ in range(20):  # the daemon's loop: a tick every TICK_SECONDS
        started = time.perf_counter()
        loop.tick()
        if stored_at:
            break
        time.sleep(max(0.0, TICK_SECONDS - (time.perf_counter() - started)))
    assert stored_at, "the new message was never extracted"
    print(f"new message's record stored {stored_at[0] - written_at[0]:.1f} s after it was written (tick every 2 s)")

    for _ in range(3):
        assert loop.tick() == []  # exactly once: later ticks ask for nothing
    records = _records_of(mail_settings, "<inv-7790@northwind.test>")
    assert [(module, attempts) for module, _, attempts in records] == [("finance", 1)]
    batches = {r.tags[BATCH_TAG] for r in loop.requests}
    assert len(batches) == 2 and len(loop.requests) == 2  # two batches, one run each
    runs = loop.instance.get_runs(filters=dg.RunsFilter(tags={BATCH_TAG: loop.requests[-1].tags[BATCH_TAG]}))
    assert len(runs) == 1 and runs[0].status == dg.DagsterRunStatus.SUCCESS


def test_a_message_appended_to_an_mbox_is_extracted_once(mail_settings: Settings) -> None:
    loop = SensorLoop(mail_settings, dg.DagsterInstance.ephemeral())
    loop.tick()
    before = _records_of(mail_settings, "<promo-88@lumenhaus.test>")
    assert [module for module, _, _ in before] == ["promotions"]
    with (mail_settings.inbox / "acme" / "mail" / "shared.mbox").open("a", encoding="utf-8") as box:
        box.write(_mbox_message(APPENDED))
    started = time.perf_counter()
    stored_at: list[float] = []

    def stopwatch() -> None:
        if not stored_at and _records_of(mail_settings, "<req-5521@brightline.test>"):
            stored_at.append(time.perf_counter())

    loop.after_run = stopwatch
    asked = loop.tick()
    print(f"appended message's record stored {stored_at[0] - started:.1f} s after the tick that saw it began")
    assert [covered(r) for r in asked] == [("email@v1", "email@v1")]
    assert [module for module, _, attempts in _records_of(mail_settings, "<req-5521@brightline.test>")] == ["crm"]
    assert _records_of(mail_settings, "<promo-88@lumenhaus.test>") == before  # the earlier message: untouched
    assert loop.tick() == []
    cursor = MailCursor.parse(loop.cursor)
    assert sorted(cursor.done) == ["acme/mail/2026-11-27-invoice.eml", "acme/mail/shared.mbox"]
    assert not cursor.in_flight


def test_seed_001_failure_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed module extraction: the file is given back and retried next run (the record is replaced, not
    added); a failed classification: a dead letter with its reason, and the cursor moves on."""
    mail = tmp_path / "inbox" / "acme" / "mail"
    mail.mkdir(parents=True)
    (mail / "2026-11-27-invoice.eml").write_text(FIRST, encoding="utf-8")
    prompts = tmp_path / "prompts"
    shutil.copytree(DEFAULT_PROMPTS / "email", prompts / "email")
    settings = Settings(warehouse=tmp_path / "warehouse.duckdb", inbox=tmp_path / "inbox", prompts_dir=prompts)
    model = StubModel(["finance"], "The total amount due is $4,210.00.", fail={"modules"})
    monkeypatch.setattr(ExtractorResource, "build", lambda self: OrchestratedExtractor(model))
    monkeypatch.setattr(mail_watch, "RETRY_AFTER_S", 0.0)
    loop = SensorLoop(settings, dg.DagsterInstance.ephemeral())

    assert len(loop.tick()) == 1  # the module call fails: the pack's record is kept, the document is partial
    assert [(m, a) for m, _, a in _records_of(settings, "<inv-7781@northwind.test>")] == [("finance", 1)]
    model.fail = set()
    retried = loop.tick()  # the batch left work undone: the file is asked for again, under another run key
    assert len(retried) == 1 and retried[0].run_key != loop.requests[0].run_key
    assert [(m, a) for m, _, a in _records_of(settings, "<inv-7781@northwind.test>")] == [("finance", 2)]
    with open_warehouse(settings.warehouse, read_only=True) as con:
        by = con.execute("SELECT extracted_by FROM extracted_items").fetchall()
    assert by == [("model",)]  # the retry replaced the fallback record
    assert loop.tick() == []  # now done

    model.fail = {"classify"}
    (mail / "2026-12-01-invoice.eml").write_text(ARRIVING, encoding="utf-8")
    assert len(loop.tick()) == 1
    assert loop.tick() == []  # the cursor advanced past the message whose classification failed
    assert "acme/mail/2026-12-01-invoice.eml" in MailCursor.parse(loop.cursor).done
    with open_warehouse(settings.warehouse, read_only=True) as con:
        reasons = con.execute(
            "SELECT reason FROM dead_letters WHERE source_uri = 'acme/mail/2026-12-01-invoice.eml'"
        ).fetchall()
    assert len(reasons) == 1 and "classification failed" in reasons[0][0]
