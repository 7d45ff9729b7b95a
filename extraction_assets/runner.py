"""Materialize the whole pipeline outside the UI: the same assets and checks, one run per partition."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.partitions import POOL, SHARDS, extraction_keys, schema_versions
from extraction_assets.defs.review.checks import audit_log_intact
from extraction_assets.instance import open_instance, pool_turn, run_tags
from extraction_assets.lib.extraction import ExtractorChoice, rules_fingerprint
from extraction_assets.lib.schemas import SchemaVersion, discover_schemas
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import give_back, is_lake, open_warehouse, partition_is_current

INTERRUPTED = "interrupted (SIGINT)"
# where nothing keeps the runs, a version's run that only routed documents away materializes nothing (no checks,
# no queue after it): the same reasoning as for a current version, inside the run
SKIP_UNCHANGED: dict[str, dict[str, object]] = {"extracted_items_and_evidence": {"skip_unchanged": True}}
AUDIT_STEP = "review_queue_audit_log_intact"  # the Dagster step of the audit log's check
STAGES = ("ingest", "extract", "queue")  # queue: the review queue, its own step when extraction is sharded


@dataclass
class StepResult:
    name: str
    success: bool
    failed_checks: list[str] = field(default_factory=list)
    metadata: dict[str, dict[str, object]] = field(default_factory=dict)
    failed_blocking_checks: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the step did not run (a blocking check of an earlier step failed)
    seconds: float = 0.0
    step_seconds: dict[str, float] = field(default_factory=dict)  # Dagster step (asset or check) -> wall seconds
    current: bool = False  # not run: nothing new to route or extract, its queue in step (see `_current_versions`)


def _step(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    name: str,
    selection: dg.AssetSelection,
    partition_key: str | None = None,
    log_level: str = "WARNING",
    ops_config: dict[str, dict[str, object]] | None = None,
) -> StepResult:
    run_config: dict[str, object] = {"loggers": {"console": {"config": {"log_level": log_level}}}}
    if ops_config:
        run_config["ops"] = {op: {"config": config} for op, config in ops_config.items()}
    started = time.perf_counter()
    with pool_turn(instance, POOL):  # a killed run's slot is given back; a waiting run sleeps
        result = dg.materialize(
            list(defs.assets or []) + list(defs.asset_checks or []),
            run_config=run_config,
            instance=instance,
            resources=defs.resources,
            selection=selection,
            partition_key=partition_key,
            raise_on_error=False,
            tags={"extraction_assets/step": name, **run_tags()},
        )
    seconds = time.perf_counter() - started
    blocking = {spec.key for checks in defs.asset_checks or [] for spec in checks.check_specs if spec.blocking}
    failed_evaluations = [e for e in result.get_asset_check_evaluations() if not e.passed]
    failed = [f"{e.asset_check_key.asset_key.to_user_string()}:{e.check_name}" for e in failed_evaluations]
    failed_blocking = [
        f"{e.asset_check_key.asset_key.to_user_string()}:{e.check_name}"
        for e in failed_evaluations
        if e.asset_check_key in blocking
    ]
    metadata = {
        m.asset_key.to_user_string(): {k: v.value for k, v in m.metadata.items()}
        for m in result.get_asset_materialization_events()
        for m in [m.event_specific_data.materialization]  # type: ignore[union-attr]
    }
    return StepResult(
        name=name,
        success=result.success,
        failed_checks=failed,
        metadata=metadata,
        failed_blocking_checks=failed_blocking,
        seconds=round(seconds, 3),
        step_seconds=_step_seconds(instance, result.run_id),
    )


def _step_seconds(instance: dg.DagsterInstance, run_id: str) -> dict[str, float]:
    """Each Dagster step's wall time in a run, from its start and end events (what a stage costs)."""
    ends = {dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE}
    started: dict[str, float] = {}
    seconds: dict[str, float] = {}
    for entry in instance.all_logs(run_id, of_type={dg.DagsterEventType.STEP_START, *ends}):
        if entry.step_key is None or entry.dagster_event is None:
            continue
        if entry.dagster_event.event_type == dg.DagsterEventType.STEP_START:
            started[entry.step_key] = entry.timestamp
        elif entry.step_key in started:
            seconds[entry.step_key] = round(entry.timestamp - started[entry.step_key], 3)
    return seconds


def run_pipeline(
    settings: Settings,
    schema_keys: Sequence[str] | None = None,
    instance: dg.DagsterInstance | None = None,
    on_step: Callable[[str], None] | None = None,
    log_level: str = "WARNING",
    stages: Sequence[str] = STAGES,
    shards: Sequence[int] | None = None,
) -> list[StepResult]:
    """Ingest and scrub, then extract and queue for review under every (or the given) schema version.

    A worker of a fan-out runs a part of it: some `stages`, and with EXTRACTION_SHARDS > 1 only some `shards`.
    """
    defs = build_definitions(settings)
    instance = instance or open_instance()
    found, errors = discover_schemas(settings.prompts_dir)
    if errors:
        raise ValueError("invalid prompt files:\n" + "\n".join(f"{p}: {e}" for p, e in errors.items()))
    keys = sorted(schema_keys or found)
    unknown = [k for k in keys if k not in found]
    if unknown:
        raise ValueError(f"unknown schema versions {unknown}; known: {sorted(found)}")
    partition_set = schema_versions.name or ""
    missing = [k for k in keys if not instance.has_dynamic_partition(partition_set, k)]
    if missing:
        instance.add_dynamic_partitions(partition_set, missing)
    results: list[StepResult] = []
    with _interruptible() as interrupted, _holding(settings):

        def run(
            steps: Sequence[tuple[str, dg.AssetSelection, str | None]],
            ops_config: dict[str, dict[str, object]] | None = None,
        ) -> None:
            for name, selection, key in steps:
                if on_step:
                    on_step(name)
                blocked = [check for earlier in results for check in earlier.failed_blocking_checks]
                if interrupted.is_set():  # Ctrl-C stops the whole run, not only the step it fell in
                    results.append(StepResult(name=name, success=False, skipped=INTERRUPTED))
                    continue
                if blocked:  # what failed a blocking check must not reach extraction (nor a model)
                    reason = f"blocking check failed: {', '.join(blocked)}"
                    results.append(StepResult(name=name, success=False, skipped=reason))
                    continue
                results.append(_step(defs, instance, name, selection, key, log_level, ops_config))

        if "ingest" in stages:
            run([("ingest", dg.AssetSelection.groups("ingest"), None)])
        whole = tuple(stages) == STAGES and shards is None and instance.is_ephemeral and not interrupted.is_set()
        passed = all(r.success and not r.failed_blocking_checks for r in results)
        current = _current_versions(settings, found, keys) if whole and passed else set()
        active = [k for k in keys if k not in current]
        for k in keys:
            if k in current:
                results.append(StepResult(name=f"extract {k}", success=True, current=True))
            else:  # the audit log is one chain for every version: checked once, with the last version's run
                run(extraction_steps(k, stages, shards, audit=k == active[-1]), SKIP_UNCHANGED if whole else None)
        stopped = interrupted.is_set() or any(r.failed_blocking_checks or r.skipped for r in results)
        if whole and keys and not stopped and not any(AUDIT_STEP in r.step_seconds for r in results):
            # every version current, or the last one run only routed documents away: checked all the same
            run([("check audit_log", dg.AssetSelection.checks(audit_log_intact), None)])
    return results


def _current_versions(settings: Settings, schemas: dict[str, SchemaVersion], keys: Sequence[str]) -> set[str]:
    """The versions a run would change nothing in (`partition_is_current`): not run at all. Only where nothing
    keeps the runs (no DAGSTER_HOME): a kept instance gets every partition's run, so the UI never shows one stale
    after new scrubbed documents, nor its automation runs it once more."""
    extractor = ExtractorChoice.from_settings(settings).build()
    with open_warehouse(settings.warehouse, read_only=True) as con:
        return {
            k
            for k in keys
            if partition_is_current(
                con,
                k,
                schemas[k].document_kinds,
                rules_fingerprint(schemas[k]),
                extractor.version(schemas[k]),
            )
        }


def extraction_steps(
    schema_key: str, stages: Sequence[str] = STAGES, shards: Sequence[int] | None = None, audit: bool = True
) -> list[tuple[str, dg.AssetSelection, str]]:
    """Extract and queue one schema version: one step, or with shards one step per shard, then its queue.

    `audit=False` leaves out the audit log's check (it reads the whole log, the same for every version)."""
    review = dg.AssetSelection.groups("review")
    if not audit:
        review = review - dg.AssetSelection.checks(audit_log_intact)
    if SHARDS == 1:
        whole = (f"extract {schema_key}", dg.AssetSelection.groups("extraction") | review, schema_key)
        return [whole] if "extract" in stages else []
    keys = extraction_keys(schema_key)
    chosen = [keys[i] for i in (range(SHARDS) if shards is None else shards)]
    steps = [(f"extract {key}", dg.AssetSelection.groups("extraction"), key) for key in chosen if "extract" in stages]
    return steps + ([(f"queue {schema_key}", review, schema_key)] if "queue" in stages else [])


@contextmanager
def _holding(settings: Settings) -> Iterator[None]:
    """The runs share this process's held warehouse file (one open, a warm cache, one checkpoint); given back at the
    end, so the process does not keep it while it prints or exits."""
    try:
        yield
    finally:
        if not is_lake(settings.warehouse):
            give_back(settings.warehouse)


@contextmanager
def _interruptible() -> Iterator[threading.Event]:
    """Remember a SIGINT (Dagster turns it into a failed step and carries on) so no later step starts.

    Committed batches stay; every write is idempotent, so the next run continues where this one stopped.
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        if callable(previous):
            previous(signum, frame)
        else:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, previous)


def rerun_partition(
    settings: Settings,
    schema_key: str,
    tenant: str | None = None,
    confirm_overwrite: bool = False,
    instance: dg.DagsterInstance | None = None,
    log_level: str = "WARNING",
) -> StepResult:
    """Re-extract every document of one partition (optionally one tenant's), then rebuild its review queue."""
    instance = instance or open_instance()
    found, _ = discover_schemas(settings.prompts_dir)
    if schema_key not in found:
        raise ValueError(f"unknown schema version {schema_key!r}; known: {sorted(found)}")
    partition_set = schema_versions.name or ""
    if not instance.has_dynamic_partition(partition_set, schema_key):
        instance.add_dynamic_partitions(partition_set, [schema_key])
    config = {"force": True, "confirm_overwrite": confirm_overwrite, "tenant": tenant}
    defs = build_definitions(settings)
    with _holding(settings):
        steps = [
            _step(
                defs,
                instance,
                f"re-extract {key}",
                selection,
                key,
                log_level,
                ops_config={"extracted_items_and_evidence": config} if name.startswith("extract") else None,
            )
            for name, selection, key in extraction_steps(schema_key)
        ]
    return steps[0] if len(steps) == 1 else _combined(f"re-extract {schema_key}", steps)


# what each shard's run counts for itself: a sharded re-run reports their sums (the other figures describe the
# whole schema version, the same in every shard's run)
_PER_RUN_COUNTS = (
    "documents_processed",
    "documents_failed",
    "items_proposed",
    "items_stored",
    "dropped_ungrounded",
    "cut_by_cap",
    "human_owned_kept",
    "kept_needing_confirmation",
    "overwritten_with_confirmation",
    "model_calls",
    "cache_hits",
    "evidence_written",
)


def _combined(name: str, steps: Sequence[StepResult]) -> StepResult:
    """The steps of a sharded re-run as one result: success when all succeeded, per-run counts summed."""
    metadata: dict[str, dict[str, object]] = {}
    for step in steps:
        for asset, figures in step.metadata.items():
            merged = metadata.setdefault(asset, {})
            for key, value in figures.items():
                earlier = merged.get(key)
                summable = key in _PER_RUN_COUNTS and isinstance(value, int) and isinstance(earlier, int)
                merged[key] = earlier + value if summable else value  # type: ignore[operator]
    return StepResult(
        name=name,
        success=all(s.success for s in steps),
        failed_checks=[c for s in steps for c in s.failed_checks],
        metadata=metadata,
        failed_blocking_checks=[c for s in steps for c in s.failed_blocking_checks],
        seconds=round(sum(s.seconds for s in steps), 3),
        step_seconds={k: v for s in steps for k, v in s.step_seconds.items()},
    )
