"""The Dagster UI on a demo warehouse, in a real headless Chromium: the asset graph, a partition's metadata and a
check's description render, with no error on the page.

`dagster-webserver` serves the code location on 127.0.0.1 with a `DAGSTER_HOME` that holds the shipped
`dagster.yaml` and the runs of a small demo (the sample pulses, one schema version). Uses the system Chromium
through Playwright, as the review page's browser test does; skipped, with the reason, without it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from extraction_assets.lib.ports import free_port
from extraction_assets.lib.settings import DEFAULT_PROMPTS, PACKAGE_DIR, SAMPLE_INBOX, Settings
from extraction_assets.runner import run_pipeline
from tests.integration.test_review_browser import CHROMIUM, CHROMIUM_FLAGS  # skips this module without Chromium

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is installed by `pip install -e .[dev]`")

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = "pulse@v1"
ERROR_TEXTS = ("Something went wrong", "An error occurred", "Unexpected error", "GraphQL error", "Traceback")


@pytest.fixture(scope="module")
def webserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The UI on a demo warehouse: one run of ingest and of `pulse@v1` in the instance the UI reads."""
    tmp = tmp_path_factory.mktemp("ui")
    home, inbox = tmp / "dagster", tmp / "inbox"
    home.mkdir()
    shutil.copy(PACKAGE_DIR / "instance" / "dagster.yaml", home / "dagster.yaml")
    shutil.copytree(SAMPLE_INBOX / "acme" / "pulses", inbox / "acme" / "pulses")
    settings = Settings(warehouse=tmp / "w.duckdb", inbox=inbox, prompts_dir=DEFAULT_PROMPTS)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert all(step.success for step in run_pipeline(settings, [SCHEMA], instance=instance))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("EXTRACTION_")} | {
        "DAGSTER_HOME": str(home),
        "EXTRACTION_WAREHOUSE": str(settings.warehouse),
        "EXTRACTION_INBOX": str(inbox),
        "EXTRACTION_PROMPTS": str(DEFAULT_PROMPTS),
    }
    log = tmp / "webserver.log"
    command = [str(Path(sys.executable).with_name("dagster-webserver")), "-w", "workspace.yaml"]
    server = subprocess.Popen(
        [*command, "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the webserver did not answer in 180 s:\n" + log.read_text()[-3000:]
            try:
                urllib.request.urlopen(f"{base}/server_info", timeout=2).close()
                break
            except OSError:
                time.sleep(0.5)
        yield base
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_asset_graph_a_partitions_metadata_and_a_checks_description_render(webserver: str, tmp_path: Path) -> None:
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page_errors: list[str] = []
        page.on("pageerror", lambda error: page_errors.append(str(error)))
        try:
            page.goto(f"{webserver}/locations/extraction_assets/asset-groups/ingest", timeout=120_000)
            page.get_by_text("scrubbed_documents").first.wait_for(timeout=60_000)  # a node of the graph
            assert page.get_by_text("raw_documents").first.is_visible()
            _no_error_shown(page)

            page.goto(f"{webserver}/assets/extracted_items?view=partitions&partition={SCHEMA}")
            page.get_by_text("documents_read").first.wait_for(timeout=60_000)  # the partition's metadata table
            for figure in ("extractor_version", "heuristic-pulse", "items_by_type"):
                assert page.get_by_text(figure).first.is_visible(), figure
            _no_error_shown(page)

            page.goto(f"{webserver}/assets/raw_documents?view=checks")
            description = page.get_by_text("doc_id is the tenant-scoped hash of content and record identity")
            description.first.wait_for(timeout=60_000)
            assert page.get_by_text("doc_ids_are_content_hashes").first.is_visible()
            _no_error_shown(page)
            assert page_errors == []
        except Exception:
            page.screenshot(path=str(tmp_path / "dagster-ui-failure.png"), full_page=True)
            print(f"screenshot of what the browser saw: {tmp_path / 'dagster-ui-failure.png'}")
            raise
        finally:
            browser.close()


def _no_error_shown(page: sync_api.Page) -> None:
    text = page.inner_text("body")
    assert not [e for e in ERROR_TEXTS if e in text], text[:2000]
