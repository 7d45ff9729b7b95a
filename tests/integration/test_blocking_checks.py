"""A failed blocking check stops what depends on it: in `extraction-assets run` and in the UI's automation alike."""

from __future__ import annotations

import dagster as dg
import duckdb

from extraction_assets.definitions import build_definitions
from extraction_assets.lib.settings import Settings
from extraction_assets.runner import run_pipeline

PULSE = "pulse@v1"


def _plant_unmasked_email(settings: Settings) -> str:
    with duckdb.connect(str(settings.warehouse)) as con:
        doc_id = con.execute("SELECT min(doc_id) FROM scrubbed_documents").fetchone()[0]  # type: ignore[index]
        con.execute("UPDATE scrubbed_documents SET text = text || ' dana@acme.test' WHERE doc_id = ?", [doc_id])
        con.execute("DELETE FROM extraction_status")  # every document pending again: extraction would have work
    return str(doc_id)


def test_a_failed_pii_check_stops_extraction_in_the_runner(settings: Settings) -> None:
    instance = dg.DagsterInstance.ephemeral()
    first = run_pipeline(settings, schema_keys=[PULSE], instance=instance)
    assert all(step.success and not step.skipped for step in first)
    _plant_unmasked_email(settings)

    second = run_pipeline(settings, schema_keys=[PULSE], instance=instance)
    ingest, extract = second
    assert "scrubbed_documents:no_unmasked_pii" in ingest.failed_blocking_checks
    assert extract.skipped == "blocking check failed: scrubbed_documents:no_unmasked_pii"
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM extraction_status").fetchone() == (0,)


def test_a_failed_pii_check_stops_automated_extraction(settings: Settings) -> None:
    defs = build_definitions(settings)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("schema_versions", [PULSE])
    everything = list(defs.assets) + list(defs.asset_checks)
    ingest = dg.AssetSelection.groups("ingest")
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    dg.materialize(everything, instance=instance, resources=defs.resources, selection=ingest)
    _plant_unmasked_email(settings)
    again = dg.materialize(
        everything, instance=instance, resources=defs.resources, selection=ingest, raise_on_error=False
    )
    assert [e.check_name for e in again.get_asset_check_evaluations() if not e.passed] == ["no_unmasked_pii"]

    result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    assert not result.get_requested_partitions(dg.AssetKey("extracted_items"))
    assert not result.get_requested_partitions(dg.AssetKey("review_queue"))


def test_ctrl_c_stops_the_whole_run_not_only_its_step(settings: Settings, monkeypatch) -> None:
    import contextlib
    import os
    import signal

    from extraction_assets import runner

    ran: list[str] = []

    def step(defs, instance, name, *args, **kwargs):
        ran.append(name)
        with contextlib.suppress(KeyboardInterrupt):  # as Dagster does: the step fails, the caller goes on
            os.kill(os.getpid(), signal.SIGINT)
        return runner.StepResult(name=name, success=False)

    monkeypatch.setattr(runner, "_step", step)
    results = run_pipeline(settings, schema_keys=[PULSE, "email@v1"], instance=dg.DagsterInstance.ephemeral())
    assert ran == ["ingest"]
    assert [r.skipped for r in results[1:]] == [runner.INTERRUPTED, runner.INTERRUPTED]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the previous handler is back


def test_a_failed_blocking_extraction_check_stops_the_review_queue_and_each_check_reports_itself(
    settings: Settings,
) -> None:
    """The six extraction checks run as one step; each still has its own result, a blocking one still blocks, and
    a run that selects one of them runs that one only."""
    instance = dg.DagsterInstance.ephemeral()
    run_pipeline(settings, schema_keys=[PULSE], instance=instance)
    with duckdb.connect(str(settings.warehouse)) as con:
        con.execute(
            "UPDATE evidence SET quote = quote || 'x' WHERE evidence_id = (SELECT min(evidence_id) FROM evidence)"
        )
        con.execute("DELETE FROM review_queue")

    _, extract = run_pipeline(settings, schema_keys=[PULSE], instance=instance)
    assert extract.failed_blocking_checks == ["grounded_evidence:quotes_match_source"]
    assert "review_queue" not in extract.metadata  # blocked: not rebuilt after the failed check
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM review_queue").fetchone() == (0,)

    defs = build_definitions(settings)
    only = dg.AssetCheckKey(dg.AssetKey("extracted_items"), "items_per_document_capped")
    alone = dg.materialize(
        list(defs.assets) + list(defs.asset_checks),
        instance=instance,
        resources=defs.resources,
        selection=dg.AssetSelection.groups("extraction").without_checks() | dg.AssetSelection.checks(only),
        partition_key=PULSE,
    )
    assert [(e.asset_check_key, e.passed) for e in alone.get_asset_check_evaluations()] == [(only, True)]
