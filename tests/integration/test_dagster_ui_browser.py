"""The Dagster UI clicked as a user clicks it, in a real headless Chromium, on `extraction-assets ui` (one code
server, the webserver and the daemon, as `make ui` starts them): every way the UI offers to launch an extraction
ends in SUCCESS with the rows it should have written, the review queue follows an extraction that changed
something (the automation sensor is off during the first three launches and follows all three once on again) and
nothing follows a run that changed nothing, a failed run re-executed succeeds, and the eval report
opens from its asset's metadata. Then the command itself: the daemon beside the webserver on the one code server,
the eval reports served beside them, and SIGTERM stops all of it, also where SIGINT is ignored (a script's `&`, a
service: the UI is started so).

The tests share one UI (module scope) and run in file order, each on what the ones before it left: the bundled sample
inbox is ingested before the UI starts, then each launch path extracts versions no path has extracted yet; the last
one stops the UI. Each prints its time from the click that launches to SUCCESS. Uses the system Chromium through
Playwright, as the review page's browser test does; without it the clicking tests skip, with the reason, and the
command's test runs alone.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg
import pytest
from dagster._core.execution.backfill import BulkActionStatus

from extraction_assets.lib.ports import free_port
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PACKAGE_DIR, SAMPLE_INBOX, Settings
from extraction_assets.lib.stages import reports_dir
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.runner import run_pipeline
from tests.chromium import CHROMIUM, CHROMIUM_FLAGS, MISSING
from tests.one_row import one_row

if TYPE_CHECKING:
    from playwright.sync_api import Page

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is installed by `pip install -e .[dev]`")

pytestmark = pytest.mark.long(150)

BIN = Path(sys.executable).parent
ERROR_TEXTS = ("Something went wrong", "An error occurred", "Unexpected error", "GraphQL error", "Traceback")
FOLLOW_UP_S = 5  # the automation sensor's interval here (30 s in `make ui`); Dagster's asset daemon loops every 5 s
RUN_TIMEOUT_S = 240
# how often the waits below look again: each look reads every run of the instance or asks the webserver (a run takes
# seconds, a sensor ticks every FOLLOW_UP_S), and the UI's processes answer it on the cores the runs need
POLL_S = 1.0
BLANK = "about:blank"  # where the browser waits for a run it launched: no page of the UI asks the webserver meanwhile
LOCATIONS = json.dumps(
    {
        "query": "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus "
        "locationOrLoadError { __typename } } } } }"
    }
).encode()
ITEMS, EVIDENCE = dg.AssetKey("extracted_items"), dg.AssetKey("grounded_evidence")
AUTOMATION_TAGS = ("dagster/sensor_name", "dagster/from_automation_condition")
AUTOMATION, SCHEMA_SENSOR = "extraction_automation", "schema_version_sensor"


@dataclass
class Server:
    """`extraction-assets ui` on the ingested sample, and what the tests read beside it."""

    process: subprocess.Popen[bytes]
    base: str
    reports: str
    folder: Path
    settings: Settings
    instance: dg.DagsterInstance
    log: Path


@dataclass
class UI:
    base: str
    reports: str
    page: Page
    settings: Settings
    instance: dg.DagsterInstance
    gold: Path
    log: Path
    page_errors: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # launch path -> from the click to SUCCESS


def _gold_registry(folder: Path) -> Path:
    """Three receipts of our own, scored field by field (a reliability plot needs confidences to bin)."""
    folder.mkdir()
    records = []
    for number, (shop, date, total) in enumerate(
        [
            ("KOPI CORNER SDN BHD", "03/02/2024", "12.50"),
            ("BOOK NOOK", "17/05/2023", "48.00"),
            ("FRESH MART", "29/11/2022", "7.20"),
        ]
    ):
        text = (
            f"{shop}\nNO {10 + number} MAIN STREET\nRECEIPT\n{date} 12:0{number}\nCOFFEE 1 {total}\nTOTAL RM {total}\n"
        )
        gold = {"company": {"value": shop}, "date": {"value": date}, "total": {"value": total}}
        records.append({"id": f"r{number}", "text": text, "gold": gold})
    (folder / "receipts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    registry = folder / "registry.yaml"
    registry.write_text(
        f"""datasets:
  receipts:
    path: {folder / "receipts.jsonl"}
    schema_version: receipt@v1
    document_kind: text
    mode: fields
    fields:
      company: {{gold: company.value, compare: normalized}}
      date: {{gold: date.value, compare: date, day_first: true}}
      total: {{gold: total.value, compare: amount}}
""",
        encoding="utf-8",
    )
    return registry


def _locations(base: str) -> list[dict]:
    request = urllib.request.Request(f"{base}/graphql", data=LOCATIONS, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as answer:
        return json.load(answer)["data"]["workspaceOrError"]["locationEntries"]


def _loaded(base: str) -> bool:
    try:
        entries = _locations(base)
    except OSError:
        return False
    return bool(entries) and entries[0]["locationOrLoadError"]["__typename"] == "RepositoryLocation"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The UI the file's tests share (its last test stops it)."""
    tmp = tmp_path_factory.mktemp("ui")
    home, inbox, prompts = tmp / "dagster", tmp / "inbox", tmp / "prompts"
    (home / ".nux").mkdir(parents=True)
    (home / ".nux" / "nux.yaml").write_text("seen: 1\n")  # the UI's one-time welcome dialog: not what this tests
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", home / "dagster.yaml")
    shutil.copytree(SAMPLE_INBOX, inbox, ignore=shutil.ignore_patterns("README.md"))
    shutil.copytree(DEFAULT_PROMPTS, prompts)
    settings = Settings(warehouse=tmp / "w.duckdb", inbox=inbox, prompts_dir=prompts)
    instance = dg.DagsterInstance.from_config(str(home))
    run_pipeline(settings, instance=instance, stages=["ingest"])  # the documents, and every version's partition
    port, reports = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EXTRACTION_", "DAGSTER_"))} | {
        "DAGSTER_HOME": str(home),
        "EXTRACTION_WAREHOUSE": str(settings.warehouse),
        "EXTRACTION_INBOX": str(inbox),
        "EXTRACTION_PROMPTS": str(prompts),
        "EXTRACTION_AUTOMATION_INTERVAL_S": str(FOLLOW_UP_S),
    }
    log = tmp / "ui.log"
    command = [str(BIN / "extraction-assets"), "ui", "--port", str(port), "--reports-port", str(reports)]
    process = subprocess.Popen(
        command,
        cwd=tmp,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),  # as `&` in a script starts it
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while not _loaded(base):
            assert process.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the UI did not load in 180 s:\n" + log.read_text()[-3000:]
            time.sleep(0.5)
        yield Server(process, base, f"http://127.0.0.1:{reports}", tmp, settings, instance, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        instance.dispose()


@pytest.fixture(scope="module")
def ui(server: Server) -> Iterator[UI]:
    """The shared UI in a headless Chromium."""
    if MISSING:
        pytest.skip(MISSING)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.set_default_timeout(60_000)
        gold = _gold_registry(server.folder / "gold")
        found = UI(server.base, server.reports, page, server.settings, server.instance, gold, server.log)
        page.on("pageerror", lambda error: found.page_errors.append(str(error)))
        yield found
        browser.close()
    print("\nfrom the click that launches to SUCCESS:")
    for path, seconds in found.seconds.items():
        print(f"  {seconds:6.1f} s  {path}")


@contextmanager
def _screenshot_on_failure(ui: UI, name: str) -> Iterator[None]:
    try:
        yield
    except Exception:
        shot = ui.log.with_name(f"{name}.png")
        ui.page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot of what the browser saw: {shot}")
        raise


def _runs(ui: UI) -> dict[str, dg.DagsterRun]:
    return {run.run_id: run for run in ui.instance.get_runs()}


def _graphql(ui: UI, query: str, variables: dict | None = None) -> dict:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(f"{ui.base}/graphql", data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.load(answer)["data"]


TICKS = """query Ticks($selector: SensorSelector!) { sensorOrError(sensorSelector: $selector) {
  ... on Sensor { sensorState { ticks(limit: 3) { timestamp status } } } } }"""


def _automation_looked_since(ui: UI, since: float) -> bool:
    """Whether the automation sensor has finished a tick that started after `since` (a Unix time)."""
    selector = {
        "repositoryLocationName": "extraction_assets",
        "repositoryName": "__repository__",
        "sensorName": AUTOMATION,
    }
    ticks = _graphql(ui, TICKS, {"selector": selector})["sensorOrError"]["sensorState"]["ticks"]
    return any(t["timestamp"] > since and t["status"] != "STARTED" for t in ticks)


def _busy(ui: UI) -> bool:
    """Whether a run is queued or in progress, or a backfill not yet done."""
    backfills = ui.instance.get_backfills(status=BulkActionStatus.REQUESTED)
    return bool(backfills) or any(not run.is_finished for run in _runs(ui).values())


def _settled(ui: UI, timeout: float = RUN_TIMEOUT_S) -> None:
    """Until no run or backfill is going and the automation sensor has looked since (and what it asked for, if
    anything, has run too)."""
    deadline = time.monotonic() + timeout
    while True:
        while _busy(ui):
            assert time.monotonic() < deadline, "runs still going"
            time.sleep(POLL_S)
        quiet = time.time()
        while not _automation_looked_since(ui, quiet):
            assert time.monotonic() < deadline, "the automation sensor did not tick"
            time.sleep(POLL_S)
        if not _busy(ui):
            return


def _launch(ui: UI, path: str, click: Callable[[], None], before: set[str] | None = None) -> dg.DagsterRun:
    """The run a click launches (a backfill's one run), once it has finished; the seconds from the click to its end
    are recorded for `path`."""
    before = set(_runs(ui)) if before is None else before
    started = time.perf_counter()
    click()
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while True:
        mine = [r for r in _runs(ui).values() if r.run_id not in before and not set(AUTOMATION_TAGS) & set(r.tags)]
        if mine and ui.page.url != BLANK:
            ui.page.goto(BLANK)  # the run is there: a page left open asks the webserver again and again while it runs
        if mine and mine[0].is_finished:
            ui.seconds[path] = round(time.perf_counter() - started, 1)
            print(f"{path}: {mine[0].status.value} {ui.seconds[path]} s after the click")
            return mine[0]
        assert time.monotonic() < deadline, f"{path}: no finished run {RUN_TIMEOUT_S} s after the click"
        time.sleep(POLL_S)


def _pick_partitions(page: Page, keys: list[str]) -> None:
    """In the launch dialog: the partitions `keys` (a menu of checkboxes), or every one for `["All"]`."""
    if keys == ["All"]:
        page.get_by_role("button", name="All", exact=True).click()
        return
    menu = page.locator("ul[role=menu]")
    for _ in range(3):  # a click while the dialog is still being drawn opens no menu
        page.get_by_text("Select a partition or create one").click()
        try:
            menu.first.wait_for(timeout=10_000)
            break
        except sync_api.TimeoutError:
            continue
    for key in keys:
        page.locator(f'ul[role=menu] [data-tooltip="{key}"]').first.click()
    page.keyboard.press("Escape")


def _materialize_dialog(page: Page, also: str | None) -> None:
    """Click "Materialize…" (or "Materialize all"); where the UI adds the other output first, it says so."""
    page.get_by_role("button", name="Materialize").first.click()
    if also:
        dialog = page.get_by_role("dialog").filter(has_text="Additional assets will be materialized")
        assert also in dialog.inner_text()
        dialog.get_by_role("button", name="Confirm").click()
    page.get_by_text("Partition selection").first.wait_for()


def _launchpad_partition(page: Page, key: str) -> None:
    """In a launchpad, once its config is shown: the partition `key`, picked from what the partition box suggests."""
    page.locator(".CodeMirror-code").get_by_text("ops:").first.wait_for()
    box = page.get_by_placeholder("Partition")
    for _ in range(3):  # the box is drawn again while the launchpad loads, forgetting what was typed
        box.click()
        box.press_sequentially(key)
        try:
            page.get_by_role("menuitem", name=key, exact=True).click(timeout=10_000)
            break
        except sync_api.TimeoutError:
            box.fill("")
    page.get_by_text(f"partition: {key}").wait_for()


def _counts(ui: UI, version: str) -> dict[str, int]:
    with open_warehouse(ui.settings.warehouse, read_only=True) as con:
        items, evidence, queued = one_row(
            con.execute(
                """SELECT (SELECT count(*) FROM extracted_items WHERE schema_version = $v),
                          (SELECT count(*) FROM evidence WHERE schema_version = $v),
                          (SELECT count(*) FROM review_queue WHERE schema_version = $v)""",
                {"v": version},
            )
        )
    return {"items": items, "evidence": evidence, "queued": queued}


def _materialized(ui: UI, run: dg.DagsterRun, asset: dg.AssetKey) -> set[str]:
    """The partitions of `asset` that `run` materialized."""
    return {
        str(entry.asset_materialization.partition)
        for entry in ui.instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
        if entry.asset_materialization is not None and entry.asset_materialization.asset_key == asset
    }


def _extracted(ui: UI, run: dg.DagsterRun, versions: list[str]) -> None:
    """`run` succeeded and made both outputs of every version, with their rows and six passing checks each."""
    assert run.status == dg.DagsterRunStatus.SUCCESS, run.run_id
    assert _materialized(ui, run, ITEMS) == _materialized(ui, run, EVIDENCE) == set(versions)
    evaluations = [
        e.dagster_event.asset_check_evaluation_data
        for e in ui.instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
        if e.dagster_event is not None
    ]
    for version in versions:
        counts = _counts(ui, version)
        assert counts["items"] > 0 and counts["evidence"] > 0, (version, counts)
        checks = [e for e in evaluations if e.partition == version and e.asset_check_key.asset_key in (ITEMS, EVIDENCE)]
        assert len(checks) == 6 and all(e.passed for e in checks), (version, checks)


def _queue_followed(ui: UI, versions: list[str]) -> None:
    """The automation sensor rebuilt these versions' review queues by itself, after their extraction."""
    _settled(ui)
    followed = [r for r in _runs(ui).values() if "dagster/sensor_name" in r.tags]
    queued = {
        p
        for r in followed
        if r.status == dg.DagsterRunStatus.SUCCESS
        for p in _materialized(ui, r, dg.AssetKey("review_queue"))
    }
    assert set(versions) <= queued, (versions, [(r.run_id, r.status, r.tags) for r in followed])


def _no_error_shown(page: Page) -> None:
    text = page.inner_text("body")
    assert not [e for e in ERROR_TEXTS if e in text], text[:2000]


def _automation_paused(ui: UI) -> None:
    """The automation sensor stopped once it has looked a first time (a first look only notes what it found: what
    changed while it was off is what it follows when on again)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not _automation_looked_since(ui, 0):
        assert time.monotonic() < deadline, "the automation sensor did not tick"
        time.sleep(POLL_S)
    _sensor(ui, AUTOMATION, running=False)


def test_the_asset_page_of_extracted_items_materializes_one_partition_with_its_evidence(ui: UI) -> None:
    _automation_paused(ui)  # this launch and the next two are followed at once, tested after them
    with _screenshot_on_failure(ui, "one-partition"):
        ui.page.goto(f"{ui.base}/assets/extracted_items")
        _materialize_dialog(ui.page, also="grounded_evidence")
        _pick_partitions(ui.page, ["pulse@v1"])
        run = _launch(
            ui, "asset page extracted_items, one partition", ui.page.get_by_role("button", name="Launch 1 run").click
        )
        _extracted(ui, run, ["pulse@v1"])


def test_the_asset_page_of_grounded_evidence_materializes_a_range_in_one_run(ui: UI) -> None:
    with _screenshot_on_failure(ui, "range"):
        ui.page.goto(f"{ui.base}/assets/grounded_evidence")
        _materialize_dialog(ui.page, also="extracted_items")
        _pick_partitions(ui.page, ["contract@v1", "email@v1"])
        run = _launch(
            ui,
            "asset page grounded_evidence, a range (backfill)",
            ui.page.get_by_role("button", name="Launch backfill").click,
        )
        _extracted(ui, run, ["contract@v1", "email@v1"])


def test_the_group_page_materializes_all_of_the_extraction_group(ui: UI) -> None:
    with _screenshot_on_failure(ui, "group"):
        ui.page.goto(f"{ui.base}/locations/extraction_assets/asset-groups/extraction")
        ui.page.get_by_role("button", name="Materialize all").click()
        _pick_partitions(ui.page, ["interview@v1"])
        run = _launch(
            ui, "group page extraction, Materialize all", ui.page.get_by_role("button", name="Launch 1 run").click
        )
        _extracted(ui, run, ["interview@v1"])


def test_the_review_queues_follow_the_extractions_launched_from_the_ui_by_themselves(ui: UI) -> None:
    """The three launches above changed their versions' items while the automation sensor was off: on again, it
    rebuilds those versions' queues by itself, all four at once rather than after each launch."""
    assert not [r.run_id for r in _runs(ui).values() if "dagster/sensor_name" in r.tags], "nothing followed yet"
    _sensor(ui, AUTOMATION, running=True)
    _queue_followed(ui, ["pulse@v1", "contract@v1", "email@v1", "interview@v1"])
    assert _counts(ui, "pulse@v1")["queued"] > 0


def test_the_launchpad_of_pass_job_runs_ingest_and_a_version_with_its_queue(ui: UI) -> None:
    with _screenshot_on_failure(ui, "launchpad"):
        ui.page.goto(f"{ui.base}/locations/extraction_assets/jobs/pass_job/playground")
        ui.page.get_by_text("Auto-materialize on").wait_for()  # the automation sensor runs, and the page says so
        _launchpad_partition(ui.page, "receipt@v1")
        run = _launch(ui, "job page pass_job, launchpad", ui.page.get_by_role("button", name="Launch Run").click)
        _extracted(ui, run, ["receipt@v1"])
        assert _materialized(ui, run, dg.AssetKey("review_queue")) == {"receipt@v1"}
        assert _materialized(ui, run, dg.AssetKey("scrubbed_documents")) == {"None"}  # ingest, in the same run


def test_the_backfill_dialog_of_extract_job_runs_every_version_in_one_run(ui: UI) -> None:
    with _screenshot_on_failure(ui, "backfill"):  # the launchpad's run rebuilt its queue: nothing follows it
        ui.page.goto(f"{ui.base}/locations/extraction_assets/jobs/extract_job/partitions")
        _materialize_dialog(ui.page, also=None)
        _pick_partitions(ui.page, ["All"])
        run = _launch(
            ui,
            "job page extract_job, backfill of every version",
            ui.page.get_by_role("button", name="Launch backfill").click,
        )
        versions = sorted(ui.instance.get_dynamic_partitions("schema_versions"))
        _extracted(ui, run, versions)
        assert _materialized(ui, run, dg.AssetKey("review_queue")) == set(versions)


def test_materializing_ingest_and_every_version_again_changes_nothing_and_is_followed_by_nothing(ui: UI) -> None:
    with _screenshot_on_failure(ui, "all-idle"):  # the backfill rebuilt every queue: nothing follows it
        versions = sorted(ui.instance.get_dynamic_partitions("schema_versions"))
        before = {v: _counts(ui, v) for v in versions}
        ui.page.goto(f"{ui.base}/locations/extraction_assets/jobs/ingest_job/playground")
        ui.page.locator(".CodeMirror-code").get_by_text("resources:").first.wait_for()
        ingest = _launch(
            ui, "job page ingest_job, launchpad (nothing new)", ui.page.get_by_role("button", name="Launch Run").click
        )
        assert ingest.status == dg.DagsterRunStatus.SUCCESS
        ui.page.goto(f"{ui.base}/assets/extracted_items")
        _materialize_dialog(ui.page, also="grounded_evidence")
        _pick_partitions(ui.page, ["All"])
        run = _launch(
            ui,
            "asset page extracted_items, all partitions (nothing new)",
            ui.page.get_by_role("button", name="Launch backfill").click,
        )
        _extracted(ui, run, versions)
        assert {v: _counts(ui, v) for v in versions} == before
        ids = set(_runs(ui))
        _settled(ui)  # the automation sensor looked again: a run that changed nothing asks for nothing
        assert set(_runs(ui)) == ids


def _sensor(ui: UI, name: str, running: bool) -> None:
    """Start or stop sensor `name` (the UI's Automation page toggles it so)."""
    selector = {"repositoryLocationName": "extraction_assets", "repositoryName": "__repository__"}
    selector["sensorName"] = name
    if running:
        mutation = "mutation($s: SensorSelector!) { startSensor(sensorSelector: $s) { __typename } }"
        assert _graphql(ui, mutation, {"s": selector})["startSensor"]["__typename"] == "Sensor"
        return
    query = "query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor { sensorState { id } } } }"
    state = _graphql(ui, query, {"s": selector})["sensorOrError"]["sensorState"]["id"]
    mutation = "mutation($id: String) { stopSensor(id: $id) { __typename } }"
    assert _graphql(ui, mutation, {"id": state})["stopSensor"]["__typename"] == "StopSensorMutationResult"


def test_a_failed_run_re_executed_from_its_page_succeeds(ui: UI) -> None:
    """A prompt file broken on purpose fails its version's run; fixed, the run re-executed succeeds. The sensor that
    watches prompt files is off meanwhile: it would launch runs of its own for the broken and the fixed file."""
    _sensor(ui, SCHEMA_SENSOR, running=False)
    with _screenshot_on_failure(ui, "re-execution"):
        prompt = ui.settings.prompts_dir / "email" / "v1.md"
        text = prompt.read_text(encoding="utf-8")
        prompt.write_text("---\nname: [broken\n---\n", encoding="utf-8")
        try:
            ui.page.goto(f"{ui.base}/assets/extracted_items")
            _materialize_dialog(ui.page, also="grounded_evidence")
            _pick_partitions(ui.page, ["email@v1"])
            launch = ui.page.get_by_role("button", name="Launch 1 run").click
            failed = _launch(ui, "a version whose prompt file is broken (fails)", launch)
        finally:
            prompt.write_text(text, encoding="utf-8")
        assert failed.status == dg.DagsterRunStatus.FAILURE
        ui.page.goto(f"{ui.base}/runs/{failed.run_id}")
        again = _launch(
            ui,
            "run page, re-execution of the failed run",
            ui.page.get_by_role("button", name="Re-execute all (*)").click,
        )
        assert again.parent_run_id == failed.run_id
        _extracted(ui, again, ["email@v1"])
    _sensor(ui, SCHEMA_SENSOR, running=True)


def test_the_eval_report_is_read_in_the_ui_and_opens_from_its_link(ui: UI) -> None:
    page = ui.page
    with _screenshot_on_failure(ui, "eval-report"):
        page.goto(f"{ui.base}/assets/eval_report")
        launch = page.get_by_role("button", name="Materialize…")
        launch.locator("xpath=../following-sibling::*[1]//button").click()  # the menu beside the launch button
        page.get_by_text("Open launchpad").click()
        _launchpad_partition(page, "receipt@v1")
        config = f"ops:\n  eval_report:\n    config:\n      registry: {ui.gold}\n"
        page.locator(".CodeMirror").first.evaluate("(editor, text) => editor.CodeMirror.setValue(text)", config)
        run = _launch(
            ui, "eval_report, launchpad", page.get_by_role("dialog").get_by_role("button", name="Materialize").click
        )
        assert run.status == dg.DagsterRunStatus.SUCCESS

        page.goto(f"{ui.base}/assets/eval_report?view=partitions&partition=receipt@v1")
        page.locator("tr", has_text="receipts/reliability").get_by_text("[Show Markdown]").click()
        plot = page.get_by_role("dialog").locator("img")
        assert plot.evaluate("image => image.complete && image.naturalWidth") > 0  # the plot itself, in the UI
        page.get_by_role("button", name="Close").click()
        page.locator("tr", has_text="scores").first.get_by_text("[Show Markdown]").click()
        scores = page.get_by_role("dialog").locator("table").first.inner_text()
        assert "total" in scores and "F1" in scores  # the field table, as Markdown rendered by the UI
        page.get_by_role("button", name="Close").click()

        link = page.locator("tr", has_text="receipts/report").locator("a").first
        assert link.get_attribute("href") == f"{ui.reports}/receipts-receipt-v1.html"
        with page.context.expect_page() as opened:
            link.click()
        report = opened.value
        report.wait_for_load_state()
        assert "receipts" in report.inner_text("body") and "precision" in report.inner_text("body").lower()
        report.close()


def test_the_pages_render_and_no_check_is_offered_without_its_assets(ui: UI) -> None:
    page = ui.page
    with _screenshot_on_failure(ui, "pages"):
        page.goto(f"{ui.base}/locations/extraction_assets/asset-groups/ingest")
        page.get_by_text("scrubbed_documents").first.wait_for()  # a node of the graph
        assert page.get_by_text("raw_documents").first.is_visible()
        _no_error_shown(page)

        page.goto(f"{ui.base}/assets/extracted_items?view=partitions&partition=pulse@v1")
        page.get_by_text("documents_read").first.wait_for()  # the partition's metadata table
        for figure in ("extractor_version", "heuristic-pulse", "items_by_type"):
            assert page.get_by_text(figure).first.is_visible(), figure
        _no_error_shown(page)

        page.goto(f"{ui.base}/assets/extracted_items?view=checks")
        page.get_by_text("every_item_has_evidence").first.wait_for()
        execute = page.get_by_role("button", name="Execute")
        assert execute.count() and all(execute.nth(i).is_disabled() for i in range(execute.count()))

        page.goto(f"{ui.base}/assets/raw_documents?view=checks")
        description = page.get_by_text("doc_id is the tenant-scoped hash of content and record identity")
        description.first.wait_for()
        assert page.get_by_text("doc_ids_are_content_hashes").first.is_visible()
        _no_error_shown(page)
    assert ui.page_errors == []


def test_the_terminal_shows_no_warning_nobody_can_act_on(ui: UI) -> None:
    printed = ui.log.read_text(encoding="utf-8", errors="replace")
    assert "No heartbeat received" not in printed  # a code server the daemon left behind, once a minute before
    assert "UserWarning" not in printed and "Traceback" not in printed, printed[-3000:]
    assert "did not yield" not in printed  # a step's check outputs, each yielded (Dagster said so at INFO before)


def _children(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _code_server(pids: set[int]) -> int:
    """The one of `pids` running Dagster's code server."""
    return next(pid for pid in pids if b"code-server" in Path(f"/proc/{pid}/cmdline").read_bytes())


def test_the_command_serves_the_reports_beside_one_code_server_and_sigterm_stops_all_of_it(server: Server) -> None:
    """`extraction-assets ui` (what `make ui` runs), once the UI has been used: SIGTERM stops the webserver, the daemon
    and the code server they share, and the command exits 0. The last test of the file: it stops the shared UI."""
    located = [{k: e[k] for k in ("name", "loadStatus")} for e in _locations(server.base)]
    assert located == [{"name": "extraction_assets", "loadStatus": "LOADED"}]
    deadline = time.monotonic() + 180  # the daemon starts once the page answers
    while time.monotonic() < deadline and len(_children(server.process.pid)) < 3:
        time.sleep(0.2)
    children = _children(server.process.pid)
    assert len(children) == 3, "the code server, the webserver and the daemon"
    assert not any(_children(pid) for pid in children - {_code_server(children)}), "no code server of their own"
    (reports_dir(server.settings.warehouse) / "r.html").write_text("<h1>report</h1>", encoding="utf-8")
    with urllib.request.urlopen(f"{server.reports}/r.html", timeout=5) as answer:
        assert answer.read() == b"<h1>report</h1>"
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=60) == 0
    assert "SIGTERM: stopping the UI" in server.log.read_text(encoding="utf-8", errors="replace")
    assert not {pid for pid in children if Path(f"/proc/{pid}").exists()}, "no process is left behind"
