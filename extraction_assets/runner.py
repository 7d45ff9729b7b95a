"""Materialize the whole pipeline outside the UI: the same assets and checks, one Dagster run per pass."""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import dagster as dg

from extraction_assets.definitions import build_definitions
from extraction_assets.defs.extraction import checks as extraction_checks
from extraction_assets.defs.partitions import (
    POOL,
    SHARDS,
    extraction_keys,
    partition_ranges,
    range_name,
    range_tags,
    schema_versions,
)
from extraction_assets.instance import open_instance, pool_turn, run_tags
from extraction_assets.lib.parallel import WORKER_PROCESSES_VARIABLE, shard_pool, shard_processes
from extraction_assets.lib.prompt_files import discover_schemas, partition_key_of
from extraction_assets.lib.settings import Settings
from extraction_assets.lib.warehouse import give_back, held_warehouse, is_lake

INTERRUPTED = "interrupted (SIGINT or SIGTERM)"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
STAGES = ("ingest", "extract", "queue")  # queue: the review queue, its own step when extraction is sharded
INGEST_ASSETS = ("raw_documents", "scrubbed_documents")


@dataclass
class StepResult:
    """What one part of a run did: `ingest`, or `extract <version>` (its extraction, checks and review queue)."""

    name: str
    success: bool
    failed_checks: list[str] = field(default_factory=list)
    metadata: dict[str, dict[str, object]] = field(default_factory=dict)
    failed_blocking_checks: list[str] = field(default_factory=list)
    skipped: str | None = None  # why it did not run (a blocking check of an earlier step failed, Ctrl-C)
    seconds: float = 0.0
    step_seconds: dict[str, float] = field(default_factory=dict)  # Dagster step (asset or check) -> wall seconds
    held: str | None = None  # why its review queue was not rebuilt (a blocking check of its own failed)
    run_id: str | None = None


def _materialize(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    name: str,
    selection: dg.AssetSelection,
    partition_key: str | None = None,
    log_level: str = "WARNING",
    ops_config: dict[str, dict[str, object]] | None = None,
    tags: dict[str, str] | None = None,
) -> dg.ExecuteInProcessResult:
    run_config: dict[str, object] = {"loggers": {"console": {"config": {"log_level": log_level}}}}
    if ops_config:
        run_config["ops"] = {op: {"config": config} for op, config in ops_config.items()}
    with pool_turn(instance, POOL):  # a killed run's slot is given back; a waiting run sleeps
        return dg.materialize(
            [*(defs.assets or []), *(defs.asset_checks or [])],  # type: ignore[list-item]  # no cacheable assets
            run_config=run_config,
            instance=instance,
            resources=defs.resources,
            selection=selection,
            partition_key=partition_key,
            raise_on_error=False,
            tags={"extraction_assets/step": name, **run_tags(), **(tags or {})},
        )


def _check_name(key: dg.AssetCheckKey) -> str:
    return f"{key.asset_key.to_user_string()}:{key.name}"


def _split(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    result: dg.ExecuteInProcessResult,
    names: dict[str | None, str],
    seconds: float = 0.0,
) -> list[StepResult]:
    """One run's events as the results of its parts: `names` maps a partition (None: the unpartitioned ingest) to
    the name of its part. A part's metadata is its partition's materializations; its checks, its evaluations; its
    seconds, the run's wall time; its step seconds, the run's Dagster steps (ingest's or the versions')."""
    blocking = {spec.key for checks in defs.asset_checks or [] for spec in checks.check_specs if spec.blocking}
    blocking |= extraction_checks.BLOCKING  # gated per version by the review queue, not by Dagster
    per_step = _step_seconds(instance, result.run_id)
    steps = {
        None: {k: v for k, v in per_step.items() if k.startswith(INGEST_ASSETS)},
        "extract": {k: v for k, v in per_step.items() if not k.startswith(INGEST_ASSETS)},
    }
    parts = {
        partition: StepResult(
            name=name,
            success=result.success,
            run_id=result.run_id,
            step_seconds=steps[None if partition is None else "extract"],
            seconds=round(seconds, 3),
        )
        for partition, name in names.items()
    }
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        part = parts.get(materialization.partition)
        if part is not None:
            part.metadata[materialization.asset_key.to_user_string()] = {
                k: v.value for k, v in materialization.metadata.items()
            }
    for evaluation in result.get_asset_check_evaluations():
        part = parts.get(evaluation.partition) or parts.get(None)
        if part is None or evaluation.passed:
            continue
        part.failed_checks.append(_check_name(evaluation.asset_check_key))
        if evaluation.asset_check_key in blocking:
            part.failed_blocking_checks.append(_check_name(evaluation.asset_check_key))
    ingest = parts.get(None)
    stopped = ingest.failed_blocking_checks if ingest else []
    for partition, part in parts.items():
        if partition is None:
            part.success = not any(
                e.is_step_failure for e in result.all_events if e.step_key and e.step_key.startswith(INGEST_ASSETS)
            )
        elif stopped:  # what failed a blocking check must not reach extraction (nor a model)
            part.success, part.skipped = False, f"blocking check failed: {', '.join(stopped)}"
        elif part.failed_blocking_checks and "review_queue" not in part.metadata:
            part.held = f"review queue held: blocking check failed: {', '.join(part.failed_blocking_checks)}"
    return list(parts.values())


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
    keep_held: bool = False,
) -> list[StepResult]:
    """Ingest and scrub, then extract and queue for review under every (or the given) schema version: one Dagster
    run for all of it (one per contiguous range of the versions asked for), each version with its own metadata and
    check results. With EXTRACTION_SHARDS > 1, an ingest run, then a run per shard over every version, then a queue run.

    A worker of a fan-out runs a part of it: some `stages`, and with EXTRACTION_SHARDS > 1 only some `shards`.
    With `keep_held` the warehouse file stays held after the pass until idle (`_holding`): a watch's passes.
    """
    defs = build_definitions(settings)
    instance = instance or open_instance()
    found, errors = discover_schemas(settings.prompts_dir)
    broken = {partition_key_of(Path(path)): error for path, error in errors.items()}
    asked = sorted(schema_keys or {*found, *broken})
    unknown = [k for k in asked if k not in found and k not in broken]
    if unknown:
        raise ValueError(f"unknown schema versions {unknown}; known: {sorted(found)}")
    keys = [k for k in asked if k in found]  # a version whose prompt file cannot be used costs itself only
    partition_set = schema_versions.name or ""
    missing = [k for k in keys if not instance.has_dynamic_partition(partition_set, k)]
    if missing:
        instance.add_dynamic_partitions(partition_set, missing)
    unusable = [
        StepResult(name=f"extract {k}", success=False, skipped=f"its prompt file cannot be used: {broken[k]}")
        for k in asked
        if k in broken
    ]
    with _interruptible() as interrupted, _holding(settings, keep_held):
        if SHARDS == 1 and "extract" in stages:
            return _passes(defs, instance, keys, "ingest" in stages, on_step, log_level, interrupted) + unusable
        at_once = shards_at_once(settings, shards) if "extract" in stages else []
        if not at_once:
            return _sharded(defs, instance, keys, stages, shards, on_step, log_level, interrupted) + unusable
        ingest = [s for s in stages if s == "ingest"]
        results = _sharded(defs, instance, keys, ingest, None, on_step, log_level, interrupted)
        if interrupted.is_set() or any(r.failed_blocking_checks for r in results):
            reason = INTERRUPTED if interrupted.is_set() else "blocking check failed in ingest"
            skipped = [StepResult(name=f"extract shard {s}", success=False, skipped=reason) for s in at_once]
            return results + skipped + unusable
        if on_step:
            on_step(f"{len(at_once)} shards at once")

        def here(shard: int) -> list[StepResult]:
            return _sharded(defs, instance, keys, ("extract",), [shard], None, log_level, interrupted)

        results += _extract_shards(settings, keys, at_once, log_level, here)
        queue = [s for s in stages if s == "queue"]
        return results + _sharded(defs, instance, keys, queue, None, on_step, log_level, interrupted) + unusable


def _passes(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    keys: Sequence[str],
    with_ingest: bool,
    on_step: Callable[[str], None] | None,
    log_level: str,
    interrupted: threading.Event,
) -> list[StepResult]:
    """The pass in one run: ingest and every version (a run per contiguous range of `keys`, ingest in the first)."""
    versions = dg.AssetSelection.groups("extraction", "review")
    results: list[StepResult] = []
    for number, span in enumerate(partition_ranges(instance, keys)):
        ingest = with_ingest and number == 0
        names: dict[str | None, str] = {**({None: "ingest"} if ingest else {}), **{k: f"extract {k}" for k in span}}
        if interrupted.is_set() or any(r.failed_blocking_checks for r in results if r.name == "ingest"):
            reason = INTERRUPTED if interrupted.is_set() else "blocking check failed in ingest"
            results += [StepResult(name=name, success=False, skipped=reason) for name in names.values()]
            continue
        if on_step:
            on_step(f"ingest and {len(span)} versions" if ingest else f"{len(span)} versions")
        selection = (dg.AssetSelection.groups("ingest") | versions) if ingest else versions
        started = time.perf_counter()
        result = _materialize(defs, instance, "pass", selection, log_level=log_level, tags=range_tags(span))
        parts = _split(defs, instance, result, names, time.perf_counter() - started)
        if _was_interrupted(result):
            interrupted.set()
        if interrupted.is_set():
            for part in parts:
                part.success, part.skipped = False, part.skipped or INTERRUPTED
        results += parts
    if not keys and with_ingest and not interrupted.is_set():  # no version to extract: the ingest alone
        started = time.perf_counter()
        result = _materialize(defs, instance, "ingest", dg.AssetSelection.groups("ingest"), log_level=log_level)
        results += _split(defs, instance, result, {None: "ingest"}, time.perf_counter() - started)
    return results


def _sharded(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    keys: Sequence[str],
    stages: Sequence[str],
    shards: Sequence[int] | None,
    on_step: Callable[[str], None] | None,
    log_level: str,
    interrupted: threading.Event,
) -> list[StepResult]:
    """With shards: an ingest run, then a run per shard over every version (`shard_ranges`: their parallelism is
    sharding's point), then one run of the versions' review queues (a run per contiguous range of `keys`)."""
    results: list[StepResult] = []

    def run(names: dict[str | None, str], step: str, selection: dg.AssetSelection, tags: dict[str, str]) -> None:
        if on_step:
            on_step(step)
        blocked = [check for earlier in results for check in earlier.failed_blocking_checks if earlier.name == "ingest"]
        if interrupted.is_set() or blocked:
            reason = INTERRUPTED if interrupted.is_set() else f"blocking check failed: {', '.join(blocked)}"
            results.extend(StepResult(name=name, success=False, skipped=reason) for name in names.values())
            return
        started = time.perf_counter()
        result = _materialize(defs, instance, step, selection, log_level=log_level, tags=tags)
        parts = _split(defs, instance, result, names, time.perf_counter() - started)
        if _was_interrupted(result):
            interrupted.set()
            for part in parts:
                part.success, part.skipped = False, part.skipped or INTERRUPTED
        results.extend(parts)

    if "ingest" in stages:
        run({None: "ingest"}, "ingest", dg.AssetSelection.groups("ingest"), {})
    spans = partition_ranges(instance, keys)
    if SHARDS == 1:
        return results
    for shard, span in shard_ranges(spans, shards) if "extract" in stages else []:
        names: dict[str | None, str] = {str(key): f"extract {key}" for key in span}
        run(names, f"extract shard {shard}", dg.AssetSelection.groups("extraction"), range_tags(span))
    for span in spans if "queue" in stages else []:
        run(
            {key: f"queue {key}" for key in span},
            f"queue {range_name(span)}",
            dg.AssetSelection.groups("review"),
            range_tags(span),
        )
    return results


def shard_ranges(spans: Sequence[Sequence[str]], shards: Sequence[int] | None = None) -> list[tuple[int, list[str]]]:
    """Each shard's extraction partitions of each range of versions, in one Dagster run: a multi-partition run's
    range is every key between its start and its end in each dimension (Dagster 1.13,
    `MultiPartitionsDefinition.get_partition_keys_in_range`), so the range from `first|s` to `last|s` is shard `s`
    of every version in between. One run per shard instead of one per version and shard: its start, its step and
    its check evaluations are paid once."""
    chosen = range(SHARDS) if shards is None else shards
    return [
        (shard, [dg.MultiPartitionKey({"schema_version": key, "shard": str(shard)}) for key in span])
        for shard in chosen
        for span in spans
    ]


def shards_at_once(settings: Settings, shards: Sequence[int] | None) -> list[int]:
    """The shards to extract at once, a process each (the first the runner's own), or none (one after the other in
    this process): at once on a DuckLake catalog, which takes many writers (a DuckDB file takes one: its shards would
    only wait for each other)."""
    chosen = list(range(SHARDS)) if shards is None else list(shards)
    return chosen if len(chosen) > 1 and is_lake(settings.warehouse) else []


def _extract_shards(
    settings: Settings,
    keys: Sequence[str],
    shards: Sequence[int],
    log_level: str,
    here: Callable[[int], list[StepResult]],
) -> list[StepResult]:
    """Every version's extraction of each shard, the shards at once: the first in this process (`here`: its imports,
    instance and lake are already open), each other one in a spawned process of its own, running its shard's Dagster
    run against the same instance (DAGSTER_HOME, or an in-memory one of its own) and warehouse; the cores are shared
    out among them for their own worker processes."""
    _, per_shard = shard_processes(len(shards))
    with shard_pool(len(shards)) as pool:  # started early where the caller could (`start_shard_pool`)
        elsewhere = [pool.submit(_extract_shard, settings, list(keys), shard, log_level) for shard in shards[1:]]
        with _worker_processes(per_shard):
            mine = here(shards[0])
        return mine + [step for future in elsewhere for step in future.result()]


@contextmanager
def _worker_processes(count: int) -> Iterator[None]:
    """This process's steps use `count` worker processes meanwhile (its pool, if started, stays for later steps)."""
    before = os.environ.get(WORKER_PROCESSES_VARIABLE)
    os.environ[WORKER_PROCESSES_VARIABLE] = str(count)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(WORKER_PROCESSES_VARIABLE, None)
        else:
            os.environ[WORKER_PROCESSES_VARIABLE] = before


def _extract_shard(settings: Settings, keys: list[str], shard: int, log_level: str) -> list[StepResult]:
    """One shard's extraction under every version, in a shard process."""
    return run_pipeline(settings, keys, log_level=log_level, stages=("extract",), shards=[shard])


def extraction_steps(schema_key: str) -> list[tuple[str, dg.AssetSelection, str]]:
    """Re-extract and queue one schema version: one step, or with shards one step per shard, then its queue."""
    review: dg.AssetSelection = dg.AssetSelection.groups("review")
    extraction: dg.AssetSelection = dg.AssetSelection.groups("extraction")
    if SHARDS == 1:
        return [(f"extract {schema_key}", extraction | review, schema_key)]
    steps = [(f"extract {key}", extraction, key) for key in extraction_keys(schema_key)]
    return [*steps, (f"queue {schema_key}", review, schema_key)]


@contextmanager
def _holding(settings: Settings, keep: bool = False) -> Iterator[None]:
    """The runs share this process's held warehouse file (one open, a warm cache, one checkpoint), kept open between
    their batches and steps (only a process waiting for it gets it meanwhile); given back at the end, so the process
    does not keep it while it prints or exits. With `keep` (a watch, whose next pass may come at once), the holder
    keeps it after the pass until it has been idle for its `IDLE_S` or another process waits for it: the close and
    its checkpoint come between passes, not at the end of each, and a pass soon after finds the file open and warm."""
    if is_lake(settings.warehouse):
        yield
        return
    try:
        with held_warehouse(settings.warehouse).pinned():
            yield
    finally:
        if not keep:
            give_back(settings.warehouse)


@contextmanager
def _interruptible() -> Iterator[threading.Event]:
    """Remember a SIGINT or SIGTERM so no later step starts: Ctrl-C, and a service manager's or `kill`'s stop alike.

    Between runs the signal is ours; while a run executes, Dagster handles both itself (it maps SIGTERM to its
    SIGINT handler), ends the step and the run as interrupted, and carries on: `_was_interrupted` reads that from the
    run. Committed batches stay; every write is idempotent, so the next run continues where this one stopped.
    """
    interrupted = threading.Event()
    if threading.current_thread() is not threading.main_thread():
        yield interrupted
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}

    def on_stop(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        handler = previous[signal.Signals(signum)]
        if callable(handler):
            handler(signum, frame)
        else:
            raise KeyboardInterrupt

    for signum in STOP_SIGNALS:
        signal.signal(signum, on_stop)
    try:
        yield interrupted
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _was_interrupted(result: dg.ExecuteInProcessResult) -> bool:
    """Whether a signal ended the run: Dagster records the run's failure as an unexpected termination."""
    for event in result.all_events:
        if event.is_run_failure and event.job_failure_data is not None:
            reason = event.job_failure_data.failure_reason
            return reason is not None and reason.value == "UNEXPECTED_TERMINATION"
    return False


def rerun_partition(
    settings: Settings,
    schema_key: str,
    tenant_id: str | None = None,
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
    config: dict[str, object] = {"force": True, "confirm_overwrite": confirm_overwrite, "tenant_id": tenant_id}
    defs = build_definitions(settings)
    with _holding(settings):
        steps = [
            step
            for name, selection, key in extraction_steps(schema_key)
            for step in _split(
                defs,
                instance,
                _materialize(
                    defs,
                    instance,
                    f"re-extract {key}",
                    selection,
                    key,
                    log_level,
                    ops_config={"extracted_items_and_evidence": config} if name.startswith("extract") else None,
                ),
                {str(key): f"re-extract {key}"},
            )
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


@dataclass
class ChallengerRun:
    """A challenger's run (`challenger_job`, or the comparison alone): whether it succeeded, the comparison's
    metadata (what the UI shows), and the steps that failed."""

    success: bool
    metadata: dict[str, object]
    failed: list[str]
    run_id: str


def run_challenger(
    settings: Settings,
    challenger: str | None,
    max_documents: int | None = None,
    instance: dg.DagsterInstance | None = None,
    log_level: str = "WARNING",
) -> ChallengerRun:
    """`challenger_job` for one challenger's partition (its extraction, queue, scores, and the comparison), or with
    `challenger` None the comparison alone (after a promotion): one Dagster run, in the UI's instance when
    DAGSTER_HOME is set."""
    instance = instance or open_instance()
    found, _ = discover_schemas(settings.prompts_dir)
    if challenger is not None and challenger not in found:
        raise ValueError(f"unknown schema version {challenger!r}; known: {sorted(found)}")
    from extraction_assets.defs.evaluation.challenger import challenger_job

    defs = build_definitions(settings)
    comparison: dict[str, object] = {"challenger": challenger or "", "max_documents": max_documents}
    config: dict[str, dict[str, object]] = {"challenger_comparison": comparison}
    selection = dg.AssetSelection.assets("challenger_comparison")
    if challenger is not None:
        partition_set = schema_versions.name or ""
        if not instance.has_dynamic_partition(partition_set, challenger):
            instance.add_dynamic_partitions(partition_set, [challenger])
        selection = challenger_job.selection  # type: ignore[assignment]
        config["eval_report"] = {"max_documents": max_documents}
    with _holding(settings), warnings.catch_warnings():
        # the job mixes the queue's single-run backfill policy with unpartitioned assets: one partition, one run
        warnings.filterwarnings("ignore", message=".*varying BackfillPolicies")
        result = _materialize(
            defs, instance, f"challenger {challenger or ''}".strip(), selection, challenger, log_level, config
        )
    metadata: dict[str, object] = {}
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        if materialization.asset_key.to_user_string() == "challenger_comparison":
            metadata = {k: v.value for k, v in materialization.metadata.items()}
    failed = [e.step_key or "" for e in result.all_events if e.is_step_failure]
    return ChallengerRun(success=result.success, metadata=metadata, failed=failed, run_id=result.run_id)
