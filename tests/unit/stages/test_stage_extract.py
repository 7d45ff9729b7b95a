"""`extract_partition` as a stage: the sample inbox ingested and scrubbed into a temporary DuckDB warehouse (once for
the file: each test extracts in a copy of its own), then one schema version routed, extracted and committed, with no
Dagster in the way."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from extraction_assets.lib.extraction import ExtractionTally, OrchestratedExtractor
from extraction_assets.lib.pii import load_policy
from extraction_assets.lib.prompt_files import load_schema
from extraction_assets.lib.settings import SAMPLE_INBOX
from extraction_assets.lib.stages import (
    Connect,
    ExtractOptions,
    PartitionReport,
    extract_partition,
    ingest_inbox,
    scrub_pending,
    version_figures,
)
from extraction_assets.lib.warehouse import Shard, WindowWork, open_warehouse
from tests.listed_statements import ListedStatements

KEY = "pulse@v1"


@pytest.fixture(scope="module")
def scrubbed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse holding the sample inbox, read and scrubbed: made once, each test extracts in a copy of its own."""
    folder = tmp_path_factory.mktemp("scrubbed")
    shutil.copytree(SAMPLE_INBOX, folder / "inbox", ignore=shutil.ignore_patterns("README.md"))  # as `inbox` does
    warehouse = folder / "w.duckdb"
    connect = partial(open_warehouse, warehouse)
    ingest_inbox(connect, folder / "inbox", None)
    scrub_pending(connect, load_policy(None), None)
    return warehouse


def _copy(scrubbed: Path, target: Path) -> Connect:
    """A warehouse of its own at `target`, holding the sample read and scrubbed."""
    shutil.copyfile(scrubbed, target)
    return partial(open_warehouse, target)


@pytest.fixture
def connect(scrubbed: Path, tmp_path: Path) -> Connect:
    """A warehouse holding the sample inbox, read and scrubbed."""
    return _copy(scrubbed, tmp_path / "w.duckdb")


INCREMENTAL = ExtractOptions()  # the defaults: what a scheduled run does
WHOLE = Shard()  # the partition unsharded


def _extract(
    connect: Connect, prompts: Path, options: ExtractOptions = INCREMENTAL, shard: Shard = WHOLE
) -> tuple[PartitionReport, list[str], list[str]]:
    log: list[str] = []
    warnings: list[str] = []
    report = extract_partition(
        connect, OrchestratedExtractor(None), load_schema(prompts, KEY), shard, options, log.append, warnings.append
    )
    return report, log, warnings


def _items(connect: Connect) -> list[tuple[str, str, str, str]]:
    with connect(read_only=True) as con:
        rows = con.execute(
            "SELECT item_id, tenant_id, status, extractor_version FROM extracted_items WHERE schema_version = ? "
            "ORDER BY item_id",
            [KEY],
        ).fetchall()
    return [tuple(r) for r in rows]


def test_a_partition_is_routed_extracted_and_committed_then_idle(connect: Connect, prompts: Path) -> None:
    report, log, warnings = _extract(connect, prompts)
    assert isinstance(report, PartitionReport) and report.extractor_version.startswith("heuristic")
    assert report.routed["taken"] == len(report.pending) > 0 and report.routed["not_taken"] > 0, report.routed
    assert report.tally.counts["documents"] == len(report.pending)
    assert report.tally.counts["items"] > 0 and not warnings
    assert any(line.startswith(f"{KEY}: ") and "documents" in line for line in log), log  # progress is told
    items = _items(connect)
    assert len(items) == report.tally.counts["items"]
    assert {version for *_, version in items} == {report.extractor_version}
    with connect(read_only=True) as con:
        unsupported = con.execute(
            "SELECT count(*) FROM extracted_items i WHERE schema_version = ? AND NOT EXISTS "
            "(SELECT 1 FROM evidence e WHERE e.item_id = i.item_id)",
            [KEY],
        ).fetchone()
        mixed = con.execute(
            "SELECT count(*) FROM evidence e JOIN extracted_items i USING (item_id) "
            "JOIN raw_documents d ON d.doc_id = e.doc_id "
            "WHERE e.tenant_id <> i.tenant_id OR d.tenant_id <> i.tenant_id "
            "OR e.quote <> substr(d.text, e.char_start + 1, e.char_end - e.char_start)"
        ).fetchone()
    assert unsupported == (0,), "every item stands on evidence"
    assert mixed == (0,), "evidence quotes its own document, in its item's tenant"

    again, _, _ = _extract(connect, prompts)
    assert again.idle and again.tally.counts["documents"] == 0, "nothing new: nothing routed or extracted"
    assert _items(connect) == items

    figures, summary = version_figures(connect, [KEY])
    assert (figures[KEY]["items"], figures[KEY]["evidence"]) == (len(items), len(items))
    assert figures[KEY]["documents_taken"] == len(report.pending)
    assert [(row["version"], row["items"]) for row in summary] == [(KEY, len(items))]


def test_a_forced_run_extracts_again_and_writes_the_same_items(connect: Connect, prompts: Path) -> None:
    first, _, _ = _extract(connect, prompts)
    items = _items(connect)
    forced, _, _ = _extract(connect, prompts, ExtractOptions(force=True))
    assert not forced.routed, "the rules did not change: nothing routed again"
    assert sorted(forced.pending) == sorted(first.pending)
    assert _items(connect) == items, "the same documents give the same items, written once"


def test_one_tenant_and_one_shard_extract_only_their_documents(connect: Connect, prompts: Path) -> None:
    report, _, _ = _extract(connect, prompts, ExtractOptions(tenant_id="acme"))
    assert report.pending and report.rerun.tenant_id == "acme"
    assert {tenant for _, tenant, *_ in _items(connect)} == {"acme"}

    halves = [_extract(connect, prompts, ExtractOptions(force=True), Shard(i, 2))[0] for i in range(2)]
    with connect(read_only=True) as con:
        routed = {
            r[0]
            for r in con.execute("SELECT doc_id FROM document_applicability WHERE schema_version = ?", [KEY]).fetchall()
        }
    assert not set(halves[0].pending) & set(halves[1].pending), "a document belongs to one shard"
    assert set(halves[0].pending) | set(halves[1].pending) <= routed


def test_a_reviewed_item_is_kept_unless_the_run_is_confirmed(connect: Connect, prompts: Path) -> None:
    _extract(connect, prompts)
    item_id = _items(connect)[0][0]
    with connect() as con:
        con.execute("UPDATE extracted_items SET status = 'accepted' WHERE item_id = ?", [item_id])
    kept, _, warnings = _extract(connect, prompts, ExtractOptions(force=True))
    assert kept.rerun.need_confirmation == 1 and any("confirm_overwrite" in w for w in warnings)
    assert dict((i, s) for i, _, s, _ in _items(connect))[item_id] == "accepted"
    _extract(connect, prompts, ExtractOptions(force=True, confirm_overwrite=True))
    assert dict((i, s) for i, _, s, _ in _items(connect)).get(item_id) != "accepted", "a confirmed run overwrites"


def _tables(connect: Connect) -> dict[str, list[tuple[object, ...]]]:
    """What extraction writes, without its timestamps: items, evidence, status, routing and decisions, sorted."""
    tables = {
        "extracted_items": "created_at, updated_at",
        "evidence": "created_at",
        "extraction_status": "updated_at",
        "document_routing": "routed_at",
        "document_applicability": "decided_at",
    }
    with connect(read_only=True) as con:
        return {
            table: sorted(map(tuple, con.execute(f"SELECT * EXCLUDE ({when}) FROM {table}").fetchall()), key=repr)
            for table, when in tables.items()
        }


def test_a_partition_is_planned_a_window_of_raw_rows_at_a_time_with_the_same_result(
    scrubbed: Path, prompts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The work lists (documents to route, to extract) are read a window of raw rows at a time, so the pass holds
    one window's, whatever the warehouse; the rows written, the routing figures and the re-run preview are those of
    one window over the whole partition."""
    from extraction_assets.lib.stages import extract

    connects = [_copy(scrubbed, tmp_path / f"{name}.duckdb") for name in ("whole", "windows")]
    whole, _, _ = _extract(connects[0], prompts)
    with connects[0](read_only=True) as con:
        raw_rows = con.execute("SELECT count(*) FROM raw_documents").fetchone()[0]  # type: ignore[index]
    assert raw_rows > 12, "the sample needs more than a few windows"

    listed: list[int] = []
    real = extract.window_work

    def counted(*args: Any, **kwargs: Any) -> WindowWork:
        found = real(*args, **kwargs)
        listed.extend((len(found.unrouted), len(found.routed_pending)))
        return found

    monkeypatch.setattr(extract, "window_work", counted)
    monkeypatch.setattr(extract, "PLAN_ROWS", 4)
    windows, _, _ = _extract(connects[1], prompts)
    assert listed and max(listed) <= 4, listed
    assert len(listed) >= raw_rows // 4, "every window is planned"
    assert _tables(connects[1]) == _tables(connects[0])
    assert windows.routed == whole.routed and sorted(windows.pending) == sorted(whole.pending)
    assert windows.tally.counts == whole.tally.counts

    for connect in connects:  # a forced re-run's preview, window by window, is the whole partition's
        with connect() as con:
            con.execute("UPDATE extracted_items SET status = 'accepted' WHERE schema_version = ?", [KEY])
    forced = [_extract(connect, prompts, ExtractOptions(force=True))[0].rerun for connect in connects]
    assert forced[1] == forced[0] and forced[0].need_confirmation > 1


def test_a_batch_commits_its_routing_decisions_with_its_items_or_neither(
    connect: Connect, scrubbed: Path, prompts: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch's decisions (taken by place and extracted, or gated on its text) are written in the transaction of its
    items, one commit: a batch whose write fails leaves neither, and the next run leaves what an unbroken one does."""
    from extraction_assets.lib.warehouse import extraction

    real = extraction.insert_dead_letters

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk gone")

    monkeypatch.setattr(extraction, "insert_dead_letters", broken)
    with pytest.raises(RuntimeError, match="disk gone"):
        _extract(connect, prompts)
    with connect(read_only=True) as con:
        taken = con.execute("SELECT count(*) FROM document_applicability WHERE taken").fetchone()
        statuses = con.execute("SELECT count(*) FROM extraction_status").fetchone()
    assert taken == (0,), "no decision of the failed batch is stored without its items"
    assert statuses == (0,)

    monkeypatch.setattr(extraction, "insert_dead_letters", real)
    again, _, _ = _extract(connect, prompts)
    unbroken = _copy(scrubbed, tmp_path / "unbroken.duckdb")
    whole, _, _ = _extract(unbroken, prompts)
    assert sorted(again.pending) == sorted(whole.pending)  # what the failed batch took is decided again, the same
    assert _tables(connect) == _tables(unbroken)


def test_a_window_is_planned_in_one_statement_over_its_documents(connect: Connect, prompts: Path) -> None:
    """Planning a window reads its documents once (`window_work`): what to route, and what to extract among what
    routing took and among what it is about to route; the work planned is what the three statements gave."""
    from extraction_assets.lib.extraction import rules_fingerprint
    from extraction_assets.lib.stages import extract
    from extraction_assets.lib.warehouse import documents_to_route, pending_extractions

    said: list[str] = []

    @contextmanager
    def counted(read_only: bool = False) -> Iterator[Any]:
        with connect(read_only=read_only) as con:
            yield ListedStatements(con, said)

    schema = load_schema(prompts, KEY)
    built = OrchestratedExtractor(None)
    version, rules = built.version(schema), rules_fingerprint(schema)
    _extract(connect, prompts, ExtractOptions(tenant_id="acme"))  # some documents routed and extracted, some not
    with connect() as con:  # one routed document's extraction out of date
        con.execute(
            "UPDATE extraction_status SET extractor_version = 'older' WHERE doc_id = "
            "(SELECT min(doc_id) FROM extraction_status WHERE schema_version = ?)",
            [KEY],
        )
        last = con.execute("SELECT max(rowid) FROM raw_documents").fetchone()[0]  # type: ignore[index]
    window = range(0, last + 1)
    with connect(read_only=True) as con:
        unrouted = documents_to_route(con, KEY, schema.document_kinds, rules, None, window)
        out_of_date = set(pending_extractions(con, KEY, schema.document_kinds, version, window=window))
        routed = pending_extractions(con, KEY, schema.document_kinds, version, routed=True, window=window)
    planned, _ = extract._plan_window(counted, schema, WHOLE, INCREMENTAL, version, window)
    assert sum("FROM scrubbed_documents" in sql for sql in said) == 1, said

    assert unrouted and routed, "the case has documents to route and routed documents to extract"
    assert planned.routed == len(unrouted)
    expected = {d.doc_id for d in unrouted} | set(routed)
    assert {doc_id for doc_id in planned.plans} <= expected
    assert set(routed) <= set(planned.plans), "every routed document out of date is extracted"
    assert {doc_id for doc_id, plan in planned.plans.items() if plan.extract} == (
        {d.doc_id for d in unrouted} & out_of_date & set(planned.plans)
    ) | set(routed)


def test_decisions_by_place_commit_with_the_windows_first_batch(
    connect: Connect, prompts: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window with something to extract commits the decisions made by place alone (documents with nothing to
    extract) in its first batch's transaction: every commit of the partition is a batch's, and every decision is
    stored as one committed apart would be."""
    from extraction_assets.lib.stages import extract

    said: list[str] = []
    batches: list[int] = []
    real = extract.write_extraction_batch

    def counted_batch(*args: Any, **kwargs: Any) -> Any:
        batches.append(1)
        return real(*args, **kwargs)

    @contextmanager
    def counted(read_only: bool = False) -> Iterator[Any]:
        with connect(read_only=read_only) as con:
            yield ListedStatements(con, said)

    monkeypatch.setattr(extract, "write_extraction_batch", counted_batch)
    report, _, _ = _extract(counted, prompts)
    with connect(read_only=True) as con:
        decided = con.execute(
            "SELECT count(*) FILTER (WHERE NOT taken), count(*) FROM document_applicability WHERE schema_version = ?",
            [KEY],
        ).fetchone()
    assert decided is not None and decided[0] > 0, "the sample has documents its folder keeps from this version"
    assert decided[1] == report.routed["taken"] + report.routed["not_taken"] and batches
    assert sum(sql.strip() == "COMMIT" for sql in said) == len(batches), said


def _with_work(connect: Connect, schemas: dict[str, Any], options: ExtractOptions) -> set[str]:
    """The versions whose windows `window_work` finds anything in: what planning every window would find."""
    from extraction_assets.lib.extraction import rules_fingerprint
    from extraction_assets.lib.stages.extract import PLAN_ROWS
    from extraction_assets.lib.warehouse import stored_windows, window_work

    built = OrchestratedExtractor(None)
    found = set()
    with connect(read_only=True) as con:
        for key, schema in schemas.items():
            kinds, rules, version = schema.document_kinds, rules_fingerprint(schema), built.version(schema)
            for window in stored_windows(con, PLAN_ROWS):
                work = window_work(con, key, kinds, rules, version, options.tenant_id, False, window)
                if work.unrouted or work.routed_pending:
                    found.add(key)
    return found


def test_the_versions_with_nothing_to_do_are_read_in_one_statement(connect: Connect, prompts: Path) -> None:
    """`idle_versions` names, in one statement for every version, the versions whose every window `window_work` finds
    empty (nothing to route, nothing routed to extract): before anything is routed, after every version is done, and
    after each way a version's work comes back (a document routed under other rules, an extraction out of date or
    failed, a new document), for every tenant or one. A forced run or one with a model is never idle."""
    from extraction_assets.lib.prompt_files import discover_schemas
    from extraction_assets.lib.stages import idle_report, idle_versions

    schemas = discover_schemas(prompts)[0]
    built = OrchestratedExtractor(None)
    said: list[str] = []

    @contextmanager
    def counted(read_only: bool = False) -> Iterator[Any]:
        with connect(read_only=read_only) as con:
            yield ListedStatements(con, said)

    def agrees(options: ExtractOptions = INCREMENTAL) -> set[str]:
        said.clear()
        idle = idle_versions(counted, built, list(schemas.values()), options)
        assert len(said) == 1, said
        assert idle == set(schemas) - _with_work(connect, schemas, options)
        return idle

    assert agrees() != set(schemas), "before routing, versions have work"
    for schema in schemas.values():
        extract_partition(connect, built, schema, WHOLE, INCREMENTAL, lambda _: None, lambda _: None)
    assert agrees() == set(schemas), "after a pass, every version is idle"
    for schema in schemas.values():  # an idle version's report is the one planning it would give
        planned = extract_partition(connect, built, schema, WHOLE, INCREMENTAL, lambda _: None, lambda _: None)
        idle = idle_report(built, schema, INCREMENTAL)
        blank = ExtractionTally()  # a tally compares by its figures, below
        assert replace(idle, tally=blank) == replace(planned, tally=blank, extract_seconds=0.0)
        assert (idle.tally.counts, idle.tally.outcomes) == (planned.tally.counts, planned.tally.outcomes) == ({}, {})

    with connect() as con:
        taken = dict(
            con.execute(
                "SELECT schema_version, min(doc_id) FROM document_applicability WHERE taken GROUP BY 1 ORDER BY 1"
            ).fetchall()
        )
        first, second, third = sorted(taken)[:3]
        con.execute(
            "UPDATE document_applicability SET rules = 'older' WHERE schema_version = ? AND doc_id = ?",
            [first, taken[first]],
        )
    assert first not in agrees() and second in agrees(), "a decision under other rules"
    with connect() as con:
        con.execute(
            "UPDATE extraction_status SET extractor_version = 'older' WHERE schema_version = ? AND doc_id = ?",
            [second, taken[second]],
        )
        con.execute(
            "UPDATE extraction_status SET status = 'failed' WHERE schema_version = ? AND doc_id = ?",
            [third, taken[third]],
        )
        tenant = con.execute("SELECT tenant_id FROM raw_documents WHERE doc_id = ?", [taken[second]]).fetchone()[0]  # type: ignore[index]
        other = con.execute("SELECT min(tenant_id) FROM raw_documents WHERE tenant_id <> ?", [tenant]).fetchone()[0]  # type: ignore[index]
    assert {first, second, third}.isdisjoint(agrees()), "an extraction out of date, one failed"
    assert second not in agrees(ExtractOptions(tenant_id=tenant))
    agrees(ExtractOptions(tenant_id=other))
    with connect() as con:  # a new document: every version of its kind has it to route
        con.execute("DELETE FROM document_applicability WHERE doc_id = ?", [taken[first]])
    assert first not in agrees()

    assert idle_versions(counted, built, list(schemas.values()), ExtractOptions(force=True)) == set()
    with_model = cast("OrchestratedExtractor", SimpleNamespace(model="a model"))
    assert idle_versions(counted, with_model, list(schemas.values()), INCREMENTAL) == set()
