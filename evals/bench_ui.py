"""Benchmark group `ui`: what a person waits for in the Dagster UI and at the terminal.

Each figure is measured in fresh child processes, as the UI and a shell start them: loading the code
location, `extraction-assets --help`, and a no-op run of every partition (the warehouse is already up to
date) launched with `dagster asset materialize --partition-range` against a Dagster instance in a temporary
`DAGSTER_HOME` that holds the shipped `dagster.yaml` (one run for every partition, as a backfill launches it); and the
UI's backfill through a running daemon, with the runs that follow it by themselves (`daemon_backfill`).

`new_file_latency_s`: the product's daemon (`instance/daemon.py`, sensors on, as `make ui` runs it, and `inbox_sensor`
started) watches an up-to-date warehouse; a new file lands in the inbox. The figure is the time from landing until the
file's document
is extracted under every schema version that takes it, the ingest run being asked for by the inbox sensor and the
extraction runs by the automation sensor alone; `new_file_ingested_s` is the time until its document is stored.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

from extraction_assets.instance.daemon import command as daemon_command
from extraction_assets.lib.ports import free_port
from extraction_assets.lib.prompt_files import discover_schemas
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PACKAGE_DIR, PROJECT_DIR, SAMPLE_INBOX
from extraction_assets.lib.warehouse import open_warehouse

Figures = dict[str, float | int | str]

BIN = Path(sys.executable).parent
EXTRACTION_SELECTION = "extracted_items,grounded_evidence,review_queue"


def _seconds(command: Sequence[str], env: Mapping[str, str] | None = None) -> float:
    """Wall time of one child process; a failure stops the benchmark with the child's own words."""
    started = time.perf_counter()
    done = subprocess.run(list(command), env=dict(env) if env else None, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def _median(command: Sequence[str], runs: int) -> float:
    return round(statistics.median(_seconds(command) for _ in range(runs)), 2)


def _median_of(figures: Sequence[float | str]) -> float | str:
    """The median of the figures measured, or the first failure's words."""
    failed = [figure for figure in figures if isinstance(figure, str)]
    return failed[0] if failed else round(statistics.median(f for f in figures if not isinstance(f, str)), 1)


def _instance_env(home: Path, warehouse: Path, inbox: Path) -> dict[str, str]:
    """A DAGSTER_HOME with the shipped dagster.yaml, and the settings every process of the bench shares."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", home / "dagster.yaml")
    return {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "EXTRACTION_WAREHOUSE": str(warehouse),
        "EXTRACTION_INBOX": str(inbox),
        "EXTRACTION_PROMPTS": str(DEFAULT_PROMPTS),
    }


def noop_backfill_seconds(partitions: Sequence[str], home: Path, warehouse: Path) -> float:
    """Fill the warehouse once, then time one `dagster asset materialize` over every partition (one run: the assets'
    single-run backfill policy) that finds nothing to do."""
    env = _instance_env(home, warehouse, SAMPLE_INBOX)
    _seconds([str(BIN / "extraction-assets"), "run"], env)  # everything done once; adds the partitions
    command = [str(BIN / "dagster"), "asset", "materialize", "-m", "extraction_assets.definitions"]
    span = f"{partitions[0]}...{partitions[-1]}"
    return round(_seconds([*command, "--select", EXTRACTION_SELECTION, "--partition-range", span], env), 2)


def _runs(home: Path) -> list[tuple[str, bool]]:
    """Every run of the instance in `home`: its id and whether it has finished."""
    import dagster as dg

    with dg.DagsterInstance.from_config(str(home)) as instance:
        return [(run.run_id, run.is_finished) for run in instance.get_runs()]


def _daemon(env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        daemon_command("workspace.yaml"),
        cwd=PROJECT_DIR,
        env=dict(env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop(daemon: subprocess.Popen[bytes]) -> None:
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()


def _launch_asset_backfill(home: Path, env: Mapping[str, str], partitions: Sequence[str]) -> None:
    """What the UI's "Materialize" of the extraction and review assets over the selected partitions submits: an asset
    backfill, which the daemon turns into runs by the assets' backfill policy (one run for all of them)."""
    code = (
        "import sys, time, dagster as dg\n"
        "from dagster._core.execution.backfill import PartitionBackfill\n"
        "from dagster._core.utils import make_new_backfill_id\n"
        "from extraction_assets.definitions import defs\n"
        "keys = [dg.AssetKey(k) for k in sys.argv[2].split(',')]\n"
        "with dg.DagsterInstance.from_config(sys.argv[1]) as instance:\n"
        "    instance.add_backfill(PartitionBackfill.from_asset_partitions(\n"
        "        backfill_id=make_new_backfill_id(), asset_graph=defs.resolve_asset_graph(),\n"
        "        partition_names=sys.argv[3].split(','), asset_selection=keys, backfill_timestamp=time.time(),\n"
        "        tags={}, dynamic_partitions_store=instance, all_partitions=False, title=None, description=None,\n"
        "        run_config=None))\n"
    )
    _seconds([sys.executable, "-c", code, str(home), EXTRACTION_SELECTION, ",".join(partitions)], env)


def daemon_backfill(root: Path, partitions: Sequence[str], settle_s: float = 75, timeout_s: float = 600) -> Figures:
    """What the UI's backfill of every version costs with nothing new: the asset backfill the UI submits, against a
    running daemon on the demo's instance, timed until its runs finished; then the runs that followed it by
    themselves (automation, sensors) within `settle_s`, which must be none."""
    inbox = root / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    home = root / "dagster"
    env = _instance_env(home, root / "warehouse.duckdb", inbox)
    _seconds([str(BIN / "extraction-assets"), "run"], env)
    daemon = _daemon(env)
    try:
        time.sleep(20)  # the daemon is up and its sensors have ticked once on the up-to-date warehouse
        before = {run_id for run_id, _ in _runs(home)}
        started = time.perf_counter()
        _launch_asset_backfill(home, env, partitions)
        seconds: float | str = f"not finished within {timeout_s:.0f} s"
        while time.perf_counter() - started < timeout_s:
            runs = [r for r in _runs(home) if r[0] not in before]
            if runs and all(done for _, done in runs):
                seconds = round(time.perf_counter() - started, 1)
                break
            time.sleep(0.5)
        backfill_runs = {run_id for run_id, _ in _runs(home)} - before
        time.sleep(settle_s)
        followed = len({run_id for run_id, _ in _runs(home)} - before - backfill_runs)
    finally:
        _stop(daemon)
    return {"daemon_backfill_s": seconds, "daemon_backfill_runs": len(backfill_runs), "follow_up_runs": followed}


NEW_FILE = "acme/notes/bench-new-file.md"
NEW_TEXT = "- We will send the revised quote to Northwind by Friday.\n- Risk: the courier may be late again.\n"


def _progress(warehouse: Path, source_uri: str, versions: set[str]) -> tuple[bool, bool]:
    """Whether the document is stored, and whether each of `versions` (those reading its kind) has decided whether it
    takes the document and each that takes it has extracted it."""
    try:
        with open_warehouse(warehouse, read_only=True, wait_seconds=2) as con:
            stored = con.execute("SELECT count(*) FROM raw_documents WHERE source_uri = ?", [source_uri]).fetchone()
            rows = con.execute(
                "SELECT a.schema_version, a.taken, s.status FROM raw_documents d "
                "JOIN document_applicability a USING (doc_id) "
                "LEFT JOIN extraction_status s ON s.doc_id = d.doc_id AND s.schema_version = a.schema_version "
                "WHERE d.source_uri = ?",
                [source_uri],
            ).fetchall()
    except RuntimeError:  # a run holds the file: look again
        return False, False
    decided = {version for version, _, _ in rows}
    everywhere = decided >= versions and all(not taken or status == "processed" for _, taken, status in rows)
    return bool(stored and stored[0]), everywhere


def new_file_latency_seconds(root: Path, timeout_s: float = 900) -> tuple[float | str, float | str]:
    """Seconds from a new inbox file landing to its document stored, and to its extraction under every version,
    with the daemon's sensors on and the inbox sensor started."""
    readers = {key for key, schema in discover_schemas(DEFAULT_PROMPTS)[0].items() if schema.reads_kind("text")}
    inbox = root / "inbox"
    shutil.copytree(SAMPLE_INBOX, inbox)
    env = _instance_env(root / "dagster", root / "warehouse.duckdb", inbox)
    _seconds([str(BIN / "extraction-assets"), "run"], env)
    _seconds([str(BIN / "dagster"), "sensor", "start", "inbox_sensor", "-w", "workspace.yaml"], env)
    daemon = _daemon(env)
    try:
        time.sleep(60)  # the daemon's sensors have ticked on the up-to-date warehouse (the inbox sensor's first ingest)
        (inbox / NEW_FILE).write_text(NEW_TEXT, encoding="utf-8")
        landed = time.perf_counter()
        ingested: float | str = f"not stored within {timeout_s:.0f} s"
        while time.perf_counter() - landed < timeout_s:
            stored, everywhere = _progress(root / "warehouse.duckdb", NEW_FILE, readers)
            if stored and isinstance(ingested, str):
                ingested = round(time.perf_counter() - landed, 1)
            if everywhere:
                return ingested, round(time.perf_counter() - landed, 1)
            time.sleep(1)
        return ingested, f"not extracted everywhere within {timeout_s:.0f} s"
    finally:
        _stop(daemon)


def ui_start_stop_seconds(root: Path) -> tuple[float | str, float | str]:
    """`extraction-assets ui` (what `make ui` runs): seconds until the page answers with the code location loaded,
    then from SIGTERM until every process of it has ended."""
    port = free_port()
    env = _instance_env(root / "dagster", root / "warehouse.duckdb", SAMPLE_INBOX)
    started = time.perf_counter()
    ui = subprocess.Popen(
        [str(BIN / "extraction-assets"), "ui", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        answered: float | str = "not loaded within 180 s"
        while time.perf_counter() - started < 180 and ui.poll() is None:
            if _location_loaded(port):
                answered = round(time.perf_counter() - started, 1)
                break
            time.sleep(0.2)
        stopping = time.perf_counter()
        ui.terminate()
        ui.wait(timeout=120)
        return answered, round(time.perf_counter() - stopping, 1)
    except subprocess.TimeoutExpired:
        ui.kill()
        return answered, "did not stop within 120 s"


def _location_loaded(port: int) -> bool:
    query = b'{"query": "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"}'
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql", data=query, headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as answer:
            return b'"LOADED"' in answer.read()
    except OSError:
        return False


def bench_ui(runs: int = 3) -> Figures:
    partitions = sorted(discover_schemas(DEFAULT_PROMPTS)[0])
    load_s = _median([sys.executable, "-c", "import extraction_assets.definitions"], runs)
    help_s = _median([str(BIN / "extraction-assets"), "--help"], runs)
    dagster_s = _median([sys.executable, "-c", "import dagster"], runs)
    with tempfile.TemporaryDirectory() as tmp:
        backfill_s = noop_backfill_seconds(partitions, Path(tmp) / "dagster", Path(tmp) / "warehouse.duckdb")
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:  # the daemon's last runs may still write
        backfill = daemon_backfill(Path(tmp), partitions)
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        ingested, latency = new_file_latency_seconds(Path(tmp))
    starts = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
            starts.append(ui_start_stop_seconds(Path(tmp)))
    return {
        "ui_answers_s": _median_of([answered for answered, _ in starts]),
        "ui_stops_s": _median_of([stopped for _, stopped in starts]),
        **backfill,
        "dagster_import_s": dagster_s,
        "code_location_load_s": load_s,
        "cli_help_s": help_s,
        "noop_backfill_s": backfill_s,
        "noop_backfill_partitions": len(partitions),
        "new_file_ingested_s": ingested,
        "new_file_latency_s": latency,
        "measured_on": (
            f"median of {runs} fresh processes for load and --help; noop_backfill_s: one `dagster asset materialize "
            f"--partition-range` over the {len(partitions)} partitions of the extraction and review assets, "
            "on the sample inbox already extracted, DAGSTER_HOME with the shipped dagster.yaml; daemon_backfill_s: "
            "the asset backfill the UI submits for every partition of the extraction and review assets, against a "
            "running daemon, until its runs finished, then the runs that followed within 75 s (follow_up_runs); "
            "dagster_import_s: "
            "`import dagster` alone (the floor of the load); new_file_latency_s: one new note landing, ingest asked "
            "for by the inbox sensor, extraction under every version by the daemon's automation sensor; ui_answers_s "
            f"/ ui_stops_s: median of {runs} `extraction-assets ui` starts until the page answers with the code "
            "location loaded, and from SIGTERM until it has ended"
        ),
    }
