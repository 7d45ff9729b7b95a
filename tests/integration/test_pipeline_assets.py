"""End to end: materialize the real assets into a temporary DuckDB and assert on the rows."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.resources import ExtractorResource, PipelineResource
from extraction_assets.lib.extraction import ExtractorRun, HeuristicExtractor
from extraction_assets.lib.models import CandidateItem, ExtractionInput
from extraction_assets.lib.prompt_files import discover_schemas, load_schema
from extraction_assets.lib.schemas import SchemaVersion
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import invariants, open_warehouse, rows_as_dicts, table_counts
from extraction_assets.runner import run_pipeline
from tests.conftest import covered
from tests.dagster_results import materializable, resources_with, scheduled_runs, sensor_result
from tests.one_row import one_row

PULSE = "pulse@v1"


def _run(settings: Settings, **kwargs) -> list:
    results = run_pipeline(settings, instance=dg.DagsterInstance.ephemeral(), **kwargs)
    return results


def _snapshot(settings: Settings) -> dict:
    with open_warehouse(settings.warehouse) as con:
        return {
            "counts": table_counts(con),
            "docs": sorted(r[0] for r in con.execute("SELECT doc_id FROM raw_documents").fetchall()),
            "items": sorted(
                con.execute("SELECT item_id, status, confidence, updated_at FROM extracted_items").fetchall()
            ),
            "evidence": sorted(con.execute("SELECT evidence_id, char_start, char_end FROM evidence").fetchall()),
        }


def _metadata(results: list, step: str, asset: str) -> dict:
    return next(r for r in results if r.name == step).metadata[asset]


def test_definitions_load(settings: Settings) -> None:
    defs = build_definitions(settings)
    dg.Definitions.validate_loadable(defs)
    assert {a.key.to_user_string() for a in defs.resolve_all_asset_specs()} >= {
        "raw_documents",
        "scrubbed_documents",
        "extracted_items",
        "grounded_evidence",
        "review_queue",
    }


def test_full_run_fills_every_table_and_keeps_invariants(settings: Settings) -> None:
    results = _run(settings)
    assert all(r.success for r in results), results
    assert [r.failed_checks for r in results] == [[] for _ in results]
    schema = load_schema(settings.prompts_dir, PULSE)
    with open_warehouse(settings.warehouse) as con:
        counts = table_counts(con)
        assert counts["raw_documents"] >= 20
        assert counts["scrubbed_documents"] == counts["raw_documents"]
        assert counts["extracted_items"] > 0
        assert counts["evidence"] >= counts["extracted_items"]
        tenants = {r[0] for r in con.execute("SELECT DISTINCT tenant_id FROM extracted_items").fetchall()}
        assert len(tenants) >= 2
        item_types = {
            r[0]
            for r in con.execute(
                "SELECT DISTINCT item_type FROM extracted_items WHERE schema_version = ?", [PULSE]
            ).fetchall()
        }
        assert item_types == {"commitment", "risk", "decision"}
        assert invariants.items_without_evidence(con, [PULSE]) == {}
        assert invariants.quote_mismatches(con, [PULSE]) == {}
        assert invariants.confidence_out_of_band(con, [schema]) == {}
        assert invariants.documents_over_cap(con, [schema]) == {}
        assert invariants.review_status_mismatches(con, [PULSE]) == {}
        assert invariants.unmasked_pii(con) == []
        # every quote is the raw slice, checked here independently of the invariant code
        for quote, start, end, text in con.execute(
            "SELECT e.quote, e.char_start, e.char_end, r.text FROM evidence e JOIN raw_documents r USING (doc_id)"
        ).fetchall():
            assert text[start:end] == quote
        ingest_failures = rows_as_dicts(con, "SELECT source_uri, reason FROM dead_letters WHERE stage = 'ingest'")
        queue = int(one_row(con.execute("SELECT count(*) FROM review_queue"))[0])
        needs_review = int(
            one_row(con.execute("SELECT count(*) FROM extracted_items WHERE status = 'needs_review'"))[0]
        )
        masked = int(one_row(con.execute("SELECT sum(pii_total) FROM scrubbed_documents"))[0])
        turn_rows = con.execute(
            """SELECT e.turn_id, r.turns, e.char_start, e.char_end FROM evidence e
               JOIN raw_documents r USING (doc_id) WHERE r.kind IN ('pulse', 'chat', 'transcript')"""
        ).fetchall()
        pulse_items = int(
            one_row(con.execute("SELECT count(*) FROM extracted_items WHERE schema_version = ?", [PULSE]))[0]
        )
    assert queue == needs_review
    assert masked > 0
    assert turn_rows, "documents with turns have evidence"
    for turn_id, turns_json, start, _end in turn_rows:  # each quote's turn is recorded, and holds the quote
        turns = {t["turn_id"]: t for t in json.loads(turns_json)}
        assert turn_id in turns
        assert turns[turn_id]["start"] <= start < turns[turn_id]["end"]
    assert len(ingest_failures) >= 5, ingest_failures
    reasons = " ".join(f["reason"] for f in ingest_failures).lower()
    for expected in ("binary", "utf-8", "empty", "json", "mime"):
        assert expected in reasons, (expected, ingest_failures)
    items_meta = _metadata(results, f"extract {PULSE}", "extracted_items")
    assert items_meta["items_stored"] == pulse_items
    assert "preview" in items_meta
    # pulse has no labelled data that judges its items: it says so and keeps today's confidence and review
    assert items_meta["confidence"].startswith("not calibrated: no registry dataset judges its values")
    assert 0 < items_meta["queue_share"] <= 1 and "calibrated_items" not in items_meta
    # every version in one table on each version's materialization; no model figures offline (plots of zeros)
    versions = {record.data["version"]: record.data for record in items_meta["versions"].records}
    assert set(versions) == set(discover_schemas(settings.prompts_dir)[0])
    assert versions[PULSE]["items"] == pulse_items and versions[PULSE]["documents_failed"] == 0
    assert not {"model_calls", "cache_hits", "prompt_tokens", "chunks", "estimated_cost"} & set(items_meta)


def test_a_rerun_changes_nothing_and_a_new_file_is_then_the_only_work(settings: Settings) -> None:
    _run(settings)
    first = _snapshot(settings)
    results = _run(settings)
    assert _snapshot(settings) == first
    assert _metadata(results, "ingest", "raw_documents")["new_documents"] == 0
    assert _metadata(results, "ingest", "scrubbed_documents")["scrubbed_now"] == 0
    pulse = next(r for r in results if r.name == f"extract {PULSE}")
    assert pulse.success and pulse.metadata["extracted_items"]["run"] == "nothing to do"

    new_file = settings.inbox / "acme" / "notes" / "late-addition.txt"
    new_file.write_text(
        "Weekly note.\nWe will ship the replacement parts by Friday.\nThe supplier delay is a risk for the launch.\n",
        encoding="utf-8",
    )
    results = _run(settings)
    after = _snapshot(settings)
    assert after["counts"]["raw_documents"] == first["counts"]["raw_documents"] + 1
    assert _metadata(results, "ingest", "raw_documents")["new_documents"] == 1
    assert _metadata(results, "ingest", "scrubbed_documents")["scrubbed_now"] == 1
    assert _metadata(results, f"extract {PULSE}", "extracted_items")["documents_processed"] == 1
    new_items = set(after["items"]) - set(first["items"])
    assert new_items, "the new document's items were stored"
    assert set(first["items"]) <= set(after["items"]), "earlier items untouched"


class _HallucinatingExtractor(HeuristicExtractor):
    """Proposes the heuristic's items plus one whose span is not in the text."""

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        run = super().extract(doc, schema)
        invented = CandidateItem(
            item_type="risk",
            title="invented",
            evidence_span="The warehouse in Atlantis flooded and every order was lost forever.",
            confidence=0.7,
        )
        return run.model_copy(update={"candidates": [*run.candidates, invented]})


class HallucinatingExtractorResource(ExtractorResource):
    def build(self) -> _HallucinatingExtractor:  # type: ignore[override]
        return _HallucinatingExtractor()


def _materialize_partition(settings: Settings, extractor: ExtractorResource, instance: dg.DagsterInstance):
    defs = build_definitions(settings)
    resources = resources_with(defs, extractor=extractor)
    everything = materializable(defs)
    dg.materialize(everything, instance=instance, resources=resources, selection=dg.AssetSelection.groups("ingest"))
    return dg.materialize(
        everything,
        instance=instance,
        resources=resources,
        selection=dg.AssetSelection.groups("extraction", "review"),
        partition_key=PULSE,
        raise_on_error=False,
    )


@pytest.fixture
def instance() -> dg.DagsterInstance:
    inst = dg.DagsterInstance.ephemeral()
    inst.add_dynamic_partitions("schema_versions", [PULSE])
    return inst


def test_ungrounded_items_are_dropped_counted_and_dead_lettered(settings: Settings, instance) -> None:
    result = _materialize_partition(settings, HallucinatingExtractorResource(), instance)
    assert result.success
    with open_warehouse(settings.warehouse) as con:
        stored = one_row(con.execute("SELECT count(*) FROM extracted_items WHERE title = 'invented'"))[0]
        grounding_letters = one_row(con.execute("SELECT count(*) FROM dead_letters WHERE stage = 'grounding'"))[0]
        docs = one_row(con.execute("SELECT count(*) FROM extraction_status WHERE status = 'processed'"))[0]
    assert stored == 0
    assert grounding_letters == docs  # one invented item per processed document, each dead-lettered
    mats = result.get_asset_materialization_events()
    meta = next(
        m.event_specific_data.materialization.metadata
        for m in mats
        if m.event_specific_data.materialization.asset_key.to_user_string() == "extracted_items"
    )
    assert meta["dropped_ungrounded"].value == docs


class _FlakyExtractor(HeuristicExtractor):
    """Fails on documents whose text mentions a marker, as a crashing model or parser would."""

    def extract(self, doc: ExtractionInput, schema: SchemaVersion) -> ExtractorRun:
        if "supplier" in doc.text.lower():
            raise RuntimeError("simulated extractor crash")
        return super().extract(doc, schema)


class FlakyExtractorResource(ExtractorResource):
    def build(self) -> _FlakyExtractor:  # type: ignore[override]
        return _FlakyExtractor()


def test_failed_documents_are_marked_and_retried_without_duplicates(settings: Settings, instance) -> None:
    result = _materialize_partition(settings, FlakyExtractorResource(), instance)
    assert result.success
    with open_warehouse(settings.warehouse) as con:
        failed = rows_as_dicts(con, "SELECT doc_id, error FROM extraction_status WHERE status = 'failed'")
        letters = one_row(con.execute("SELECT count(*) FROM dead_letters WHERE stage = 'extract'"))[0]
        items_for_failed = one_row(
            con.execute(
                "SELECT count(*) FROM extracted_items WHERE doc_id IN (SELECT doc_id FROM extraction_status "
                "WHERE status = 'failed')"
            )
        )[0]
    assert failed and all("simulated extractor crash" in f["error"] for f in failed)
    assert letters == len(failed)
    assert items_for_failed == 0
    # the next run with a healthy extractor retries exactly the failed documents
    retry = _materialize_partition(settings, ExtractorResource(), instance)
    assert retry.success
    with open_warehouse(settings.warehouse) as con:
        still_failed = one_row(con.execute("SELECT count(*) FROM extraction_status WHERE status = 'failed'"))[0]
        attempts = dict(
            con.execute(
                "SELECT doc_id, attempts FROM extraction_status WHERE doc_id IN (SELECT unnest(?))",
                [[f["doc_id"] for f in failed]],
            ).fetchall()
        )
        dupes = one_row(
            con.execute(
                "SELECT count(*) FROM (SELECT doc_id, item_type, title FROM extracted_items "
                "GROUP BY ALL HAVING count(*) > 1)"
            )
        )[0]
    assert still_failed == 0
    assert set(attempts.values()) == {2}
    assert dupes == 0


def test_accepted_items_survive_a_re_extraction(settings: Settings, instance) -> None:
    _materialize_partition(settings, ExtractorResource(), instance)
    with open_warehouse(settings.warehouse) as con:
        item_id, title = one_row(con.execute("SELECT item_id, title FROM extracted_items ORDER BY item_id LIMIT 1"))
        con.execute(
            "UPDATE extracted_items SET status = 'accepted', title = 'kept by a reviewer' WHERE item_id = ?", [item_id]
        )
        # force every document to be pending again, as a new extractor version would
        con.execute("UPDATE extraction_status SET extractor_version = 'older-version'")
    _materialize_partition(settings, ExtractorResource(), instance)
    with open_warehouse(settings.warehouse) as con:
        row = con.execute("SELECT status, title FROM extracted_items WHERE item_id = ?", [item_id]).fetchone()
        evidence = one_row(con.execute("SELECT count(*) FROM evidence WHERE item_id = ?", [item_id]))[0]
    assert row == ("accepted", "kept by a reviewer")
    assert evidence == 1
    assert title != "kept by a reviewer"


def test_schema_sensor_adds_a_partition_for_a_new_prompt_file(settings: Settings, prompts: Path) -> None:
    from extraction_assets.defs.sensors import schema_version_sensor

    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("schema_versions", sorted(discover_schemas(prompts)[0]))
    pipeline = PipelineResource(inbox=str(settings.inbox), prompts_dir=str(prompts))
    context = dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline})
    result = sensor_result(schema_version_sensor(context))
    assert result.skip_reason is not None and not result.run_requests

    v2 = (prompts / "pulse" / "v1.md").read_text(encoding="utf-8").replace("version: v1", "version: v2")
    (prompts / "pulse" / "v2.md").write_text(v2, encoding="utf-8")
    result = sensor_result(
        schema_version_sensor(dg.build_sensor_context(instance=instance, resources={"pipeline": pipeline}))
    )
    assert [covered(r) for r in result.run_requests or []] == [("pulse@v2", "pulse@v2")]
    assert result.dynamic_partitions_requests and result.dynamic_partitions_requests[0].partition_keys == ["pulse@v2"]


def test_new_scrubbed_documents_trigger_one_extract_run_per_schema_version(settings: Settings) -> None:
    defs = build_definitions(settings)
    _check_automation(defs, dg.DagsterInstance.ephemeral())


def _check_automation(defs: dg.Definitions, instance: dg.DagsterInstance) -> None:
    """Extraction and the review queue carry eager automation conditions: new scrubbed documents request every
    schema version's partition once (extraction and its queue together), and the next tick asks for nothing."""
    instance.add_dynamic_partitions("schema_versions", [PULSE, "pulse@v2"])
    before = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert before.total_requested == 0
    everything = materializable(defs)
    ingest = dg.AssetSelection.groups("ingest")
    dg.materialize(everything, instance=instance, resources=defs.resources, selection=ingest)
    result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=before.cursor)
    for key in ("extracted_items", "grounded_evidence", "review_queue"):
        assert result.get_requested_partitions(dg.AssetKey(key)) == {PULSE, "pulse@v2"}
    assert not result.get_requested_partitions(dg.AssetKey("raw_documents"))
    # the cursor moved past that materialization: the next tick asks for nothing
    again = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=result.cursor)
    assert again.total_requested == 0


def test_nightly_schedule_requests_every_schema_version_in_one_run(prompts: Path) -> None:
    from datetime import datetime

    from extraction_assets.defs.schedules import nightly_extract_schedule

    v2 = (prompts / "pulse" / "v1.md").read_text(encoding="utf-8").replace("version: v1", "version: v2")
    (prompts / "pulse" / "v2.md").write_text(v2, encoding="utf-8")
    pipeline = PipelineResource(inbox=".", prompts_dir=str(prompts))
    with tempfile.TemporaryDirectory() as home:
        instance = dg.DagsterInstance.local_temp(home)
        instance.add_dynamic_partitions("schema_versions", [PULSE, "pulse@v2", "pulse@v3"])  # v3: no prompt file
        with dg.build_schedule_context(  # a context with resources must be closed: it leaves the instance current
            instance=instance, scheduled_execution_time=datetime(2026, 11, 30, 2), resources={"pipeline": pipeline}
        ) as context:
            requests = scheduled_runs(nightly_extract_schedule(context))
    assert [covered(r) for r in requests] == [(PULSE, "pulse@v2")]  # every usable version in one run
    assert all("2026-11-30T02:00:00" in (r.run_key or "") for r in requests)
