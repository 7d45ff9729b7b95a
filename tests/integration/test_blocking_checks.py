"""A failed blocking check stops what depends on it: in `extraction-assets run` and in the UI's automation alike."""

from __future__ import annotations

import dagster as dg
import duckdb
import pytest

from extraction_assets.definitions import build_definitions
from extraction_assets.lib.settings import Settings
from extraction_assets.runner import run_pipeline
from tests.dagster_results import materializable, materialization
from tests.one_row import one_row

PULSE = "pulse@v1"


def _plant_unmasked_email(settings: Settings) -> str:
    with duckdb.connect(str(settings.warehouse)) as con:
        doc_id = one_row(con.execute("SELECT min(doc_id) FROM scrubbed_documents"))[0]
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
    everything = materializable(defs)
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


@pytest.mark.sends_sigint
def test_ctrl_c_stops_the_whole_run_not_only_its_step(settings: Settings, monkeypatch) -> None:
    """Dagster turns a SIGINT into a failed step and goes on: the runner starts no further run after it."""
    import contextlib
    import os
    import signal

    from extraction_assets import runner

    ran: list[str] = []

    def materialize(defs, instance, name, *args, **kwargs):
        ran.append(name)
        with contextlib.suppress(KeyboardInterrupt):  # as Dagster does: the step fails, the caller goes on
            os.kill(os.getpid(), signal.SIGINT)
        return real(defs, instance, name, dg.AssetSelection.groups("ingest"))

    real = runner._materialize
    monkeypatch.setattr(runner, "_materialize", materialize)
    before = signal.getsignal(signal.SIGINT)  # Python's default, or SIG_IGN when the suite runs in the background
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("schema_versions", [PULSE, "contract@v1", "email@v1"])
    results = run_pipeline(settings, schema_keys=[PULSE, "email@v1"], instance=instance)  # two ranges: two runs
    assert ran == ["pass"]
    assert {r.skipped for r in results if r.name.startswith("extract ")} == {runner.INTERRUPTED}
    assert signal.getsignal(signal.SIGINT) is before  # the previous handler is back


def test_a_failed_blocking_extraction_check_holds_its_own_versions_queue_only_and_each_check_reports_itself(
    settings: Settings,
) -> None:
    """The extraction checks are evaluated per version inside the run; a blocking one that fails holds back that
    version's review queue while the other versions of the same run go on, and the run says which and why. Items
    and evidence are written together, so neither is materialized alone: asking for one (as the UI does, adding
    the other) makes both, with every check of both."""
    instance = dg.DagsterInstance.ephemeral()
    run_pipeline(settings, schema_keys=[PULSE, "email@v1"], instance=instance)
    with duckdb.connect(str(settings.warehouse)) as con:
        con.execute(
            "UPDATE evidence SET quote = quote || 'x' WHERE evidence_id = "
            "(SELECT min(evidence_id) FROM evidence WHERE schema_version = ?)",
            [PULSE],
        )
        con.execute("DELETE FROM review_queue")

    steps = {s.name: s for s in run_pipeline(settings, schema_keys=[PULSE, "email@v1"], instance=instance)}
    pulse, email = steps[f"extract {PULSE}"], steps["extract email@v1"]
    assert pulse.failed_blocking_checks == ["grounded_evidence:quotes_match_source"]
    assert pulse.held == "review queue held: blocking check failed: grounded_evidence:quotes_match_source"
    assert "review_queue" not in pulse.metadata  # held: not rebuilt after the failed check
    assert email.success and not email.failed_checks and "review_queue" in email.metadata
    with duckdb.connect(str(settings.warehouse), read_only=True) as con:
        queued = dict(con.execute("SELECT schema_version, count(*) FROM review_queue GROUP BY 1").fetchall())
    assert PULSE not in queued and queued.get("email@v1", 0) > 0
    [run_id] = {s.run_id for s in steps.values()}
    assert run_id is not None
    messages = [e.user_message for e in instance.all_logs(run_id)]
    assert any(f"{PULSE}: review queue held, blocking checks failed" in m for m in messages)
    assert not any("emitted no result" in m or "did not yield" in m for m in messages)

    defs = build_definitions(settings)
    everything, items = materializable(defs), dg.AssetSelection.assets("extracted_items")
    with pytest.raises(dg.DagsterInvalidDefinitionError) as refused:
        dg.materialize(everything, instance=instance, resources=defs.resources, selection=items, partition_key=PULSE)
    assert isinstance(refused.value.__cause__, dg.DagsterInvalidSubsetError)
    both = dg.materialize(
        everything,
        instance=instance,
        resources=defs.resources,
        selection=items.required_multi_asset_neighbors(),  # what the UI's "Materialize" adds
        partition_key=PULSE,
    )
    assert {materialization(e).asset_key.to_user_string() for e in both.get_asset_materialization_events()} == {
        "extracted_items",
        "grounded_evidence",
    }
    failed = {e.asset_check_key.to_user_string() for e in both.get_asset_check_evaluations() if not e.passed}
    assert len(both.get_asset_check_evaluations()) == 6 and failed == {"grounded_evidence:quotes_match_source"}
