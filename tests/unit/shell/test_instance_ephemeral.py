"""The throwaway instance's event log keeps one connection per thread, and stores and reads a run's events as
Dagster's own in-memory log does."""

import threading

import dagster as dg
import pytest
from dagster._core.storage.event_log import InMemoryEventLogStorage
from dagster._core.storage.runs import InMemoryRunStorage
from sqlalchemy.engine import Connection

from extraction_assets.instance import open_instance
from extraction_assets.instance.ephemeral import HeldEventLogStorage, UnstampedRunStorage


@dg.asset
def counted(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    context.log.info("counting")
    return dg.MaterializeResult(metadata={"n": 3})


@dg.asset_check(asset=counted)
def counted_is_three() -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


def test_without_a_home_a_run_stores_and_reads_its_events_on_held_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    instance = open_instance()
    storage = instance.event_log_storage
    assert isinstance(storage, HeldEventLogStorage)
    opened = storage._opened
    results = [dg.materialize([counted, counted_is_three], instance=instance) for _ in range(2)]
    assert all(r.success for r in results)
    assert len(opened) == 1, "one connection for every event of both runs"
    event = instance.get_latest_materialization_event(dg.AssetKey("counted"))
    assert event is not None and event.asset_materialization.metadata["n"].value == 3  # type: ignore[union-attr]
    assert [e.passed for e in results[1].get_asset_check_evaluations()] == [True]
    logs = instance.all_logs(results[1].run_id)
    assert any(e.user_message == "counting" for e in logs)
    assert instance.get_runs_count() == 2

    other: list[int] = []
    worker = threading.Thread(target=lambda: other.append(len(instance.all_logs(results[0].run_id))))
    worker.start()
    worker.join()
    assert other == [len(instance.all_logs(results[0].run_id))], "another thread reads on a connection of its own"
    assert len(opened) == 2
    instance.dispose()
    assert opened == []


def test_a_failed_call_rolls_back_and_the_connection_stays_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    instance = open_instance()
    storage = instance.event_log_storage
    assert isinstance(storage, HeldEventLogStorage)
    with storage._connect() as conn:
        conn.exec_driver_sql("CREATE TABLE scratch (x INTEGER)")
    with pytest.raises(RuntimeError), storage._connect() as conn:
        conn.exec_driver_sql("INSERT INTO scratch VALUES (1)")
        raise RuntimeError("boom")
    with storage._connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM scratch").scalar() == 0, "the failed call was rolled back"
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    assert dg.materialize([counted], instance=instance).success


def _tables(conn: Connection) -> set[str]:
    return {row[0] for row in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}


def test_the_storages_are_made_as_dagster_makes_its_in_memory_ones_but_the_migration_stamp() -> None:
    """Their `__init__` mirrors Dagster's (pinned below 1.14): every attribute and table Dagster's has, but the
    alembic revision table."""
    for ours, theirs in (
        (HeldEventLogStorage(), InMemoryEventLogStorage()),
        (UnstampedRunStorage(), InMemoryRunStorage()),
    ):
        assert set(vars(theirs)) <= set(vars(ours))
        assert _tables(ours._held_conn) == _tables(theirs._held_conn) - {"alembic_version"}
        ours.dispose()
        theirs.dispose()


def test_tables_columns_and_dynamic_partitions_are_answered_as_dagster_answers_them_from_sqlite_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through adds, deletes and a wipe, the same answers as Dagster's in-memory log; SQLite is asked once about a
    table or a column of `asset_keys`, and about a definition's keys again only after a write to them."""
    asked: list[tuple[str, str]] = []  # (whose, what) of each question that reached SQLite
    for name in ("has_table", "get_dynamic_partitions", "_has_asset_key_col_on_connection"):
        original = getattr(InMemoryEventLogStorage, name)

        def counted(self: InMemoryEventLogStorage, *args: str, _original=original, _name=name) -> object:
            asked.append(("ours" if isinstance(self, HeldEventLogStorage) else "theirs", _name))
            return _original(self, *args)

        monkeypatch.setattr(InMemoryEventLogStorage, name, counted)
    ours, theirs = HeldEventLogStorage(), InMemoryEventLogStorage()

    def same(name: str, key: str) -> list[str]:
        keys = ours.get_dynamic_partitions(name)
        assert keys == theirs.get_dynamic_partitions(name)
        assert ours.has_dynamic_partition(name, key) == theirs.has_dynamic_partition(name, key)
        wanted = [key, "nowhere", *keys[:1]]
        assert ours.get_existing_dynamic_partitions(name, wanted) == theirs.get_existing_dynamic_partitions(
            name, wanted
        )
        return list(keys)

    for storage in (ours, theirs):
        storage.add_dynamic_partitions("versions", ["b@v1", "a@v1"])
        storage.add_dynamic_partitions("other", ["x"])
    assert same("versions", "a@v1") == ["b@v1", "a@v1"], "in the order they were added"
    asked.clear()
    for _ in range(5):
        same("versions", "a@v1")
        assert ours.has_table("dynamic_partitions") and not ours.has_table("no_such_table")
        for column in ("last_materialization_timestamp", "no_such_column"):
            assert ours.has_asset_key_col(column) == theirs.has_asset_key_col(column)
    assert asked.count(("theirs", "get_dynamic_partitions")) == 5
    assert asked.count(("theirs", "has_table")) == 3 * 5, "before each of the three reads, every time"
    assert asked.count(("ours", "get_dynamic_partitions")) == 0
    assert asked.count(("theirs", "_has_asset_key_col_on_connection")) == 2 * 5
    assert sorted(a for a in asked if a[0] == "ours") == [
        ("ours", "_has_asset_key_col_on_connection"),
        ("ours", "_has_asset_key_col_on_connection"),
        ("ours", "has_table"),
    ], "a name or column not asked before: once"
    for storage in (ours, theirs):
        storage.add_dynamic_partitions("versions", ["c@v1", "a@v1"])
    assert same("versions", "c@v1") == ["b@v1", "a@v1", "c@v1"]
    for storage in (ours, theirs):
        storage.delete_dynamic_partition("versions", "b@v1")
    assert same("versions", "b@v1") == ["a@v1", "c@v1"]
    assert same("other", "x") == ["x"]
    for storage in (ours, theirs):
        storage.wipe()
    assert same("versions", "a@v1") == [] and same("other", "x") == []
    ours.dispose()
    theirs.dispose()
