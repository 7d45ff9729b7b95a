"""The review page in a real headless Chromium: open the queue, correct an item, see the history change.

Uses the system Chromium (`apt-get install chromium chromium-driver`; `.ci/run` installs it) driven by
Playwright; never a browser download. Skipped, with the reason, where Chromium is not installed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from extraction_assets.lib.ports import free_port
from extraction_assets.lib.review import history
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.web.review_app import create_review_app
from tests.review_seed import basic_auth, review_auth, seed

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

if not CHROMIUM.exists():
    pytest.skip(
        f"{CHROMIUM} not found: install it with `apt-get install -y chromium chromium-driver` (.ci/run does)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is installed by `pip install -e .[dev]`")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """The review page of tenant acme on 127.0.0.1, served from a thread of this test."""
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    port = free_port()
    app = create_review_app(path, "acme", DEFAULT_PROMPTS, review_auth())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the review page did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", path, ids
    server.should_exit = True
    thread.join(timeout=10)


def test_open_the_queue_correct_an_item_and_see_the_history_change(served, tmp_path: Path) -> None:
    base, path, ids = served
    with sync_api.sync_playwright() as playwright:
        name, token = basic_auth("linh")  # the reviewer signs in; the audit names who signed in
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            http_credentials={"username": name, "password": token},
        )
        page = context.new_page()
        try:
            page.goto(f"{base}/")
            links = page.locator("#queue a.item-link")
            assert links.count() == 2
            page.locator(f'a[href="/items/{ids["acme:risk"]}"]').click()
            page.wait_for_selector("#source mark")
            # the document's <script> is shown as text and never runs
            assert "<script>" in page.inner_text("#source")
            assert page.evaluate("typeof window.pwned") == "undefined"
            assert "pwned" not in page.title()
            assert page.locator("#no-history").is_visible()

            page.fill("#value-input", '{"severity": "critical"}')
            page.select_option("#status-input", "accepted")
            page.fill("#note-input", "worse than it reads")
            page.click("#correct-form button[type=submit]")
            page.wait_for_selector("#flash")
            assert page.inner_text("#flash") == "Correction saved."
            assert page.inner_text("#status") == "accepted"
            rows = page.locator("#history-table tbody tr")
            assert rows.count() == 1
            row = rows.first.inner_text()
            assert "linh" in row and "correct" in row and "critical" in row and "worse than it reads" in row

            page.goto(f"{base}/")
            assert page.locator("#queue a.item-link").count() == 1, "the accepted item left the queue"
        except Exception:
            page.screenshot(path=str(tmp_path / "review-page-failure.png"), full_page=True)
            print(f"screenshot of what the browser saw: {tmp_path / 'review-page-failure.png'}")
            raise
        finally:
            context.close()
    with open_warehouse(path) as con:
        [entry] = history(con, "acme", ids["acme:risk"])
    assert (entry.actor, entry.after_snapshot["status"]) == ("linh", "accepted")
