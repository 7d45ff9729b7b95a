"""The review page in a real headless Chromium: open the queue, correct an item, see the history change.

Uses the system Chromium (`apt-get install chromium chromium-driver`; `.ci/run` installs it) driven by
Playwright; never a browser download. Skipped, with the reason, where Chromium is not installed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from extraction_assets.lib.ports import free_port
from extraction_assets.lib.review import check_chain, history
from extraction_assets.lib.settings import DEFAULT_PROMPTS
from extraction_assets.lib.warehouse import open_warehouse
from extraction_assets.web.review_app import create_review_app
from tests.chromium import CHROMIUM, CHROMIUM_FLAGS, MISSING
from tests.one_row import one_row
from tests.review_seed import basic_auth, review_auth, seed, seed_documents

if MISSING:
    pytest.skip(MISSING, allow_module_level=True)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is installed by `pip install -e .[dev]`")


@contextmanager
def serving(path: Path) -> Iterator[str]:
    """The review page of tenant acme over the warehouse `path`, on 127.0.0.1, served from a thread of this test."""
    port = free_port()
    app = create_review_app(path, "acme", DEFAULT_PROMPTS, review_auth())
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the review page did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium for the file's tests (each signs in through a context of its own)."""
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


@contextmanager
def browser_page(browser: Any, tmp_path: Path, reviewer: str) -> Iterator[Any]:
    """A page signed in as `reviewer`, in a browser context of its own (no cookie or cache of another test); a
    screenshot of what it saw when the test fails."""
    name, token = basic_auth(reviewer)  # the reviewer signs in; the audit names who signed in
    context = browser.new_context(http_credentials={"username": name, "password": token})
    page = context.new_page()
    try:
        yield page
    except Exception:
        shot = tmp_path / f"review-page-failure-{reviewer}.png"
        page.screenshot(path=str(shot), full_page=True)
        print(f"screenshot of what the browser saw: {shot}")
        raise
    finally:
        context.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str]]]:
    path = tmp_path / "w.duckdb"
    ids = seed(path)
    with serving(path) as base:
        yield base, path, ids


def test_open_the_queue_correct_an_item_and_see_the_history_change(served, browser, tmp_path: Path) -> None:
    base, path, ids = served
    with browser_page(browser, tmp_path, "linh") as page:
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
        assert page.locator("#rules").is_visible(), "queued: its rules show"

        page.select_option('select[name="field.severity"]', "critical")  # a choice of the field's enum
        page.select_option("#status-input", "accepted")
        page.fill("#note-input", "worse than it reads")
        page.click("#correct-form button[type=submit]")
        page.wait_for_selector("#flash")
        assert page.inner_text("#flash") == "Correction saved."
        assert page.inner_text("#status") == "accepted"
        assert page.locator("#rules").count() == 0, "accepted: no below_threshold badge any more"
        rows = page.locator("#history-table tbody tr")
        assert rows.count() == 1
        row = rows.first.inner_text()
        assert "linh" in row and "correct" in row and "critical" in row and "worse than it reads" in row

        page.goto(f"{base}/")
        assert page.locator("#queue a.item-link").count() == 1, "the accepted item left the queue"
    with open_warehouse(path) as con:
        [entry] = history(con, "acme", ids["acme:risk"])
    assert (entry.actor, entry.after_snapshot["status"]) == ("linh", "accepted")


SHOP = "GREEN LEAF GROCERY\nDate: 14/02/2026\nTOTAL 5.20\n"
RECEIPTS = {
    f"r{n}": ("acme", f"acme/receipts/r{n}.txt", f"{SHOP}Receipt {n}. Write to ops@example.com with questions.\n")
    for n in range(1, 5)
}
SHOP_ITEMS = [
    *(
        (f"r{n}", "company", "GREEN LEAF GROCERY", 0.6 + n / 100, "needs_review", {"value": "GREEN LEAF GROCERY"})
        for n in range(1, 4)
    ),
    ("r4", "risk", "Write to ops@example.com with questions.", 0.6, "needs_review", {"severity": "low"}),
]


def test_select_a_group_and_act_then_correct_part_of_another_in_one_decision(browser, tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    ids = seed_documents(path, RECEIPTS, SHOP_ITEMS)
    with serving(path) as base, browser_page(browser, tmp_path, "linh") as page:
        page.goto(f"{base}/")
        shop = page.locator("tr.group", has_text="GREEN LEAF GROCERY")
        assert shop.locator(".size").inner_text() == "3", "three receipts, one group"
        assert "[EMAIL_1]" in page.inner_text("#queue") and "ops@" not in page.inner_text("#queue"), "scrubbed"
        shop.locator("a.group-link").click()
        page.wait_for_selector("#members")
        assert page.locator("#members tr.member").count() == 3
        # the last receipt's name is right as it is: unselect it, correct the other two in one decision
        page.locator("#members tr.member").nth(2).locator("input[type=checkbox]").uncheck()
        page.fill('[name="field.value"]', "GREEN LEAF GROCERY SDN BHD")
        page.fill("#note-input", "the legal name")
        page.click("#correct-group")
        page.wait_for_selector("#flash")
        assert page.inner_text("#flash").startswith("Correction saved: 2 items")
        # the risk is the one group left with the third receipt's name: select both and reject them at once
        assert page.locator("tr.group").count() == 2
        for box in page.locator("tr.group input[type=checkbox]").all():
            box.check()
        page.click("#reject-selected")
        page.wait_for_selector("#flash")
        assert page.inner_text("#flash").startswith("Rejected: 2 items")
        assert page.locator("tr.group").count() == 0
    with open_warehouse(path) as con:
        entries = [e for item in ids.values() for e in history(con, "acme", item)]
        report = check_chain(con)
    corrected = [e for e in entries if e.action == "correct"]
    assert len(corrected) == 2 and len({e.decision_id for e in corrected}) == 1 and corrected[0].group_id
    assert {e.after_snapshot["value"]["value"] for e in corrected} == {"GREEN LEAF GROCERY SDN BHD"}
    assert len([e for e in entries if e.action == "reject"]) == 2 and report.intact


def test_add_a_missed_item_by_selecting_its_evidence_in_the_document(browser, tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    ids = seed_documents(path, RECEIPTS, SHOP_ITEMS)
    with open_warehouse(path) as con:
        [(doc_id,)] = con.execute("SELECT doc_id FROM extracted_items WHERE item_id = ?", [ids["r4:risk"]]).fetchall()
    with serving(path) as base, browser_page(browser, tmp_path, "ana") as page:
        page.goto(f"{base}/items/{ids['r4:risk']}")
        page.click("#document-link")
        page.wait_for_selector("#add-form")
        page.select_option('select[name="type"]', "commitment")
        page.click(".filters button[type=submit]")
        page.wait_for_selector('#add-form input[name="item_type"][value="commitment"]', state="attached")
        # select "Receipt 4." with the mouse, as a reviewer does
        box = page.evaluate(
            """() => {
                const source = document.getElementById("source");
                const text = source.firstChild;
                const start = text.data.indexOf("Receipt 4.");
                const range = document.createRange();
                range.setStart(text, start);
                range.setEnd(text, start + "Receipt 4.".length);
                const r = range.getBoundingClientRect();
                return {x: r.left, y: r.top + r.height / 2, width: r.width};
            }"""
        )
        page.mouse.move(box["x"] + 1, box["y"])
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] - 1, box["y"], steps=8)
        page.mouse.up()
        page.wait_for_function("document.getElementById('quote-input').value.length > 0")
        assert page.input_value("#quote-input").startswith("Receipt 4")
        page.fill('[name="field.due_date"]', "2026-03-01")
        page.click("#add-item")
        page.wait_for_selector("#flash")
        assert page.inner_text("#flash") == "Item added."
        assert page.inner_text("#status") == "accepted"
        assert "add" in page.inner_text("#history-table")
    with open_warehouse(path) as con:
        [(item_id, quote, start, end, value, added_by)] = con.execute(
            """SELECT i.item_id, e.quote, e.char_start, e.char_end, i.value, i.added_by FROM extracted_items i
               JOIN evidence e USING (item_id) WHERE i.item_type = 'commitment'"""
        ).fetchall()
        text = one_row(con.execute("SELECT text FROM raw_documents WHERE doc_id = ?", [doc_id]))[0]
        [entry] = history(con, "acme", item_id)
    assert quote.startswith("Receipt 4") and text[start:end] == quote and added_by == "ana"
    assert '"due_date": "2026-03-01"' in value and (entry.action, entry.actor) == ("add", "ana")
